"""Fixtures shared by the whole suite."""

from __future__ import annotations

import atexit
import gc
import logging
import os
import signal
import tempfile
import time
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A suite started as a background job of a non-interactive shell (as a CI script may be)
# inherits SIGINT ignored, and so would every command a test starts: the tests that press
# Ctrl-C on a command (a SIGINT) would then wait in vain. Handled here, it is the default
# again in every child (a handled signal is reset on exec; an ignored one is not).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _lsl_config() -> str:
    """Write this process's LSL configuration; return its path.

    ``tests/lsl_api.cfg`` (discovery on this machine, quiet) with a LSL session of its own
    (``[lab] SessionID``): streams are seen only inside their session, so the two
    pytest-xdist workers, and another suite running on this machine, never see each
    other's streams, though both open outlets under the default names. The commands a test
    starts inherit ``LSLAPICFG`` and so the session.
    """
    session = f"sblr-rt-tests-{uuid.uuid4().hex[:12]}"
    text = Path(__file__).with_name("lsl_api.cfg").read_text()
    fd, path = tempfile.mkstemp(prefix=f"{session}-", suffix=".cfg")
    with os.fdopen(fd, "w") as f:
        f.write(f"{text}\n[lab]\nSessionID = {session}\n")
    atexit.register(Path(path).unlink, missing_ok=True)
    return path


#: The configuration this suite wrote, so that a pytest-xdist worker, which inherits its
#: controller's environment, writes its own; one given from outside is kept.
_OURS = "SBLR_RT_TESTS_LSLAPICFG"
if os.environ.get("LSLAPICFG", os.environ.get(_OURS)) == os.environ.get(_OURS):
    os.environ["LSLAPICFG"] = os.environ[_OURS] = _lsl_config()

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
PHYSIONET = RECORDINGS / "physionet-eegmmidb-S001"
BCICOMP2003 = RECORDINGS / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"


#: Fixtures that make a test a Qt test: it is marked ``gui`` whether written or not.
_QT_FIXTURES = frozenset({"qtbot", "qapp", "qtmodeltester", "qtlog"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the Qt tests ``gui``; order each worker's modules, slow ones first.

    ``make test`` runs the tests marked neither ``lsl`` nor ``gui`` on two pytest-xdist
    workers, each module whole on one (``--dist loadfile``: its module-scoped fixtures
    are built once, ``test_snippets`` runs its pages in order), then the ``lsl`` and
    ``gui`` tests on two workers, each module whole on one: the live tests mostly wait
    on real time, and every stream and outlet they open has its own name or
    ``source_id``, so the workers' streams never meet. The workers take the modules that
    hold a ``slow`` test first (``--no-loadscope-reorder`` keeps this order), so that no
    long module is left for one worker at the end.
    """
    for item in items:
        if _QT_FIXTURES & set(item.fixturenames) and item.get_closest_marker("gui") is None:
            item.add_marker(pytest.mark.gui)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: modules with slow tests first
        slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
        items.sort(key=lambda item: item.path not in slow)  # stable: order kept within


#: Seconds a test waits for data at the most: generous, the machine may be loaded; tests
#: never assert timings.
DEADLINE = 20.0


def _wait(predicate, what, deadline=DEADLINE, push=None):
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline} s waiting for {what}")
        if push is not None:
            push()
        time.sleep(0.01)


@pytest.fixture
def wait():
    """Return ``wait(predicate, what, deadline=20.0, push=None)``: poll until true or fail.

    ``push``, when given, is called between polls (e.g. to feed an outlet).
    """
    return _wait


@pytest.fixture
def source_id(request) -> str:
    """Return an LSL ``source_id`` unique to this test run and test."""
    return f"sblr-test-{request.node.name[:40]}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def recordings_dir() -> Path:
    """Return the folder of shipped sample recordings."""
    return RECORDINGS


@pytest.fixture(scope="session")
def physionet_dir() -> Path:
    """Return the folder of the shipped PhysioNet runs (S001 runs 5, 6, 9, 10)."""
    return PHYSIONET


@pytest.fixture(scope="session")
def bcicomp2003_path() -> Path:
    """Return the shipped BCI Competition 2003 IV ``.mat`` file."""
    return BCICOMP2003


def _indexed_recording(n_times, marker_every, sfreq=250.0):
    import numpy as np

    from sblr_rt.io import Recording

    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, n_times)) * 1e-5
    data[0] = np.arange(n_times)
    samples = np.arange(7, n_times, marker_every)
    return Recording(data=data, sfreq=sfreq, ch_names=["Samples", "C3", "Cz", "C4"],
                     marker_times=samples / sfreq,
                     marker_values=[f"cue{i % 3}" for i in range(len(samples))],
                     source="indexed")  # fmt: skip


@pytest.fixture
def indexed_recording():
    """Return ``indexed_recording(n_times, marker_every, sfreq=250.0) -> Recording``.

    Channel 0 holds the sample index (so a copy proves itself sample for sample); a
    marker ``cue0``, ``cue1``, ``cue2``, ... every ``marker_every`` samples from sample 7.
    """
    return _indexed_recording


def _write_sidecar(out, *, n=40, header_out=None):
    import json

    import numpy as np

    from sblr_rt.recorder import sidecar_path

    side = sidecar_path(out)
    side.mkdir()
    header = {"out": str(header_out or out), "name": "x", "source_id": "x",
              "ch_names": ["a", "b"], "units": ["microvolts"] * 2, "sfreq": 100.0,
              "dtype": "<f4", "lsl_start": 10.0,
              "utc_start": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (side / "header.json").write_text(json.dumps(header))
    data = np.arange(2 * n, dtype="<f4").reshape(n, 2)
    (side / "eeg.bin").write_bytes(data.tobytes())
    (side / "eeg_ts.bin").write_bytes((10 + np.arange(n) / 100.0).tobytes())
    (side / "markers.jsonl").write_text(
        '{"t": 10.031, "value": "go"}\n{"t": 10.2, "value": "stop"}\n'
    )
    return side, data


@pytest.fixture
def write_sidecar():
    """Return ``write_sidecar(out, *, n=40, header_out=None) -> (sidecar, data)``.

    Writes what a killed recorder leaves for ``out``: 2 channels in microvolts at 100 Hz,
    ``n`` samples ``data`` (n, 2), markers ``go`` at sample 3 and ``stop`` at sample 20.
    """
    return _write_sidecar


@pytest.fixture(autouse=True)
def _root_logging_restored():
    """Undo the root handlers a command's ``main()`` installs (``basicConfig(force=True)``).

    Left in place, they write to the stream pytest captured for that test, which is closed
    afterwards: every later log record from a background thread then fails to print.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


@pytest.fixture(autouse=True)
def _heap_unfrozen():
    """Undo the ``freeze_heap`` a command or the dashboard makes (``gc.freeze``).

    Left frozen, the objects of the tests before it would never be collected as cycles:
    an outlet kept alive in a cycle would stay visible to later tests' stream lookups.
    """
    yield
    if gc.get_freeze_count():
        gc.unfreeze()

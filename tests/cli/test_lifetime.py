"""Every process the product starts ends with its parent: SIGTERM, SIGINT or its death.

Real subprocesses: ``sblr-rt calibrate`` with joblib workers, an adapting ``sblr-rt run``
with its refit worker, and a session killed outright. The descendants are read from
``/proc`` (psutil is not a test dependency).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from .conftest import CH_NAMES, SFREQ

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

DEADLINE = 60.0  # generous: the machine may be loaded; nothing here asserts a duration


def _children() -> dict[int, set[int]]:
    """Return ``{pid: {child pids}}`` of every process visible in /proc."""
    tree: dict[int, set[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":  # a zombie has ended; its parent reaps it
            continue
        tree.setdefault(int(fields[1]), set()).add(int(entry))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, out, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _alive(pids) -> set[int]:
    out = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z":
            out.add(pid)
    return out


def _wait_until(predicate, what):
    deadline = time.monotonic() + DEADLINE
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _env():
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")


def _is_tracker(pid: int) -> bool:
    """Whether ``pid`` is a resource tracker (multiprocessing's or loky's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"resource_tracker" in f.read()
    except OSError:
        return False


def _end_and_check(proc, sig, n_workers):
    """Wait for ``n_workers`` worker processes, send ``sig``, check that none survives.

    A resource tracker is started before the workers that use it, so once the workers
    run, every descendant is there to be seen.
    """
    seen: set[int] = set()

    def enough():
        seen.update(_descendants(proc.pid))
        assert proc.poll() is None, proc.communicate()
        return sum(not _is_tracker(pid) for pid in _alive(seen)) >= n_workers

    _wait_until(enough, f"{n_workers} worker processes")
    seen.update(_descendants(proc.pid))
    os.kill(proc.pid, sig)
    try:
        proc.communicate(timeout=DEADLINE)  # the output pipes close: nobody holds them
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the parent or a child still holds its output after {sig!r}")
    _wait_until(lambda: not _alive(seen), f"the children {sorted(_alive(seen))} to end")
    return proc.returncode


def _kill_script(script: str, n_workers: int) -> None:
    """Run ``script`` in Python, SIGKILL it once ``n_workers`` run; none must survive."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        text=True,
    )
    _end_and_check(proc, signal.SIGKILL, n_workers=n_workers)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_calibrate_workers_end_with_the_command(bcicomp2003_path, tmp_path, sig):
    out = tmp_path / "m.sblr.npz"
    cmd = [sys.executable, "-m", "sblr_rt.cli", "calibrate", "--recording"]
    cmd += [str(bcicomp2003_path), "--out", str(out), "--n-jobs", "2", "--no-progress"]
    cmd += ["--no-report", "--cv", "5"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True
    )
    code = _end_and_check(proc, sig, n_workers=2)  # --n-jobs 2
    if sig == signal.SIGTERM:
        assert code == 128 + signal.SIGTERM
    assert not out.exists()


_IDLE_POOL = textwrap.dedent(
    """
    import time
    from joblib import delayed
    from sblr_rt.calibration.parallel import parallel
    # time.sleep imports nothing of sblr_rt in the workers: only the pool's initializer
    # can have started their watch
    parallel(2, return_as="list")(delayed(time.sleep)(300) for _ in range(4))
    """
)


@pytest.mark.slow
def test_calibration_workers_watch_their_parent_before_any_task():
    """A worker that has imported nothing of sblr_rt still ends with its killed parent.

    The regression: the initializer was silently not passed on joblib 1.5+ (it is one of
    Parallel's ``**backend_kwargs`` there, not a named parameter), so a worker watched its
    parent from its first task only. One killed while loky still spawned the pool (holding
    loky's process-management lock forever) could never time out: it and the resource
    trackers it holds outlived the command.
    """
    from sblr_rt.calibration import parallel

    if not parallel._TAKES_INITIALIZER:
        pytest.skip("joblib < 1.5 has no worker initializer")
    _kill_script(_IDLE_POOL, n_workers=2)


_ORPHAN = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    from sblr_rt.lifetime import PARENT_ENV

    child = subprocess.Popen(
        [sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]],
        stdout=subprocess.PIPE,
        env=dict(os.environ, **{PARENT_ENV: str(os.getpid())}),
    )
    child.stdout.readline()  # its handler and its watch are in place
    print(child.pid, flush=True)  # then this parent ends: the child is an orphan
    """
)

_CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from sblr_rt import lifetime

    how, marker = sys.argv[1], sys.argv[2]
    if how == "interrupt":
        lifetime.sigterm_as_interrupt()
    elif how == "swallow":
        signal.signal(signal.SIGTERM, lambda *args: None)
    elif how == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    assert lifetime.watch_parent_from_env()
    print("ready", flush=True)
    try:
        time.sleep(300)
    except lifetime.Terminated:
        open(marker, "w").close()  # stopped as on Ctrl-C: its clean-up ran
        sys.exit(128 + signal.SIGTERM)
    time.sleep(300)  # the handler returned: only SIGKILL ends this
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["default", "interrupt", "swallow", "ignore"])
def test_an_orphan_ends_by_sigterm_or_after_a_grace_by_sigkill(tmp_path, how):
    """The watch ends an orphan by SIGTERM; a handler runs, SIGKILL follows ``GRACE``."""
    marker = tmp_path / "stopped"
    out = subprocess.run(
        [sys.executable, "-c", _ORPHAN, _CHILD, how, str(marker)],
        capture_output=True,
        env=_env(),
        text=True,
        timeout=DEADLINE,
        check=True,
    ).stdout
    orphan = int(out.split()[-1])
    _wait_until(lambda: not _alive([orphan]), f"the orphan {orphan} to end")
    assert marker.exists() == (how == "interrupt")


_SESSION = textwrap.dedent(
    """
    import sys, time
    from sblr_rt.calibration.adapt import Adapter
    executor = Adapter._new_executor()
    future = executor.submit(time.sleep, 300)  # a refit that takes minutes
    print("submitted", flush=True)
    time.sleep(300)
    """
)


@pytest.mark.slow
def test_refit_worker_ends_when_the_session_is_killed():
    _kill_script(_SESSION, n_workers=1)


@pytest.mark.lsl
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_run_adapt_refit_worker_ends_with_the_session(model_path, source_id, tmp_path, sig):
    from sblr_rt.stream import EEGOutlet, MarkerOutlet, local_clock

    name = f"life-{source_id[-12:]}"
    eeg = EEGOutlet(name=name, ch_names=CH_NAMES, sfreq=SFREQ, source_id=source_id)
    markers = MarkerOutlet(name=name + "-Markers", source_id=source_id + "-markers")
    cmd = [sys.executable, "-m", "sblr_rt.cli", "run", "--init", str(model_path)]
    cmd += ["--stream", name, "--source-id", source_id, "--mode", "trial", "--hop", "0"]
    cmd += ["--marker-source-id", source_id + "-markers", "--status-every", "0"]
    cmd += ["--outlet-name", name + "-Pred", "--sessions", str(tmp_path / "sessions")]
    cmd += ["--timeout", str(DEADLINE)]
    stop = threading.Event()

    def feed():  # a cue every 0.5 s: the first trial starts the refit worker
        if not (eeg.wait_for_consumers(DEADLINE) and markers.wait_for_consumers(DEADLINE)):
            return
        rng = np.random.default_rng(0)
        t0, n = local_clock(), 0
        while not stop.is_set():
            stamps = t0 + np.arange(n, n + 10) / SFREQ
            if n % 50 == 0:
                markers.push("left" if n % 100 else "right", stamps[0])
            eeg.push_chunk(rng.standard_normal((10, len(CH_NAMES))), stamps)
            n += 10
            stop.wait(max(0.0, t0 + n / SFREQ - local_clock()))

    feeder = threading.Thread(target=feed)
    feeder.start()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True
    )
    try:
        code = _end_and_check(proc, sig, n_workers=1)  # the refit worker
    finally:
        stop.set()
        feeder.join(DEADLINE)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        markers.close()
        eeg.close()
    if sig == signal.SIGTERM:
        assert code == 128 + signal.SIGTERM

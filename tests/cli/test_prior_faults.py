"""``sblr-rt prior`` and ``calibrate --prior`` against a clumsy or hostile world (issue 44)."""

from __future__ import annotations

import resource
import shutil
import sys
from pathlib import Path

import pytest

from sblr_rt.io.outputs import OutputLock
from tests.cli.conftest import _one_line_error
from tests.commands import run_diagnosed

RUN = Path(__file__).resolve().parents[2] / "recordings/physionet-eegmmidb-S001/S001R04.edf"


@pytest.fixture
def two_people(tmp_path):
    """Two runs named as two PhysioNet people (the same data: enough to build a prior)."""
    runs = [tmp_path / "S001R04.edf", tmp_path / "S002R04.edf"]
    for r in runs:
        shutil.copyfile(RUN, r)
    return runs


def _prior(runs, out, *extra, preexec_fn=None):
    cmd = [sys.executable, "-m", "sblr_rt.cli", "prior", "--classes", "T1,T2", "--no-lopo"]
    cmd += [a for r in runs for a in ("--recording", r)] + ["--out", out, *extra]
    if preexec_fn is None:
        return run_diagnosed(cmd, timeout=300)
    import subprocess

    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300,
                          preexec_fn=preexec_fn)  # fmt: skip


def test_a_prior_whose_write_fails_is_named_and_leaves_no_temporary_file(two_people, tmp_path):
    out = tmp_path / "out" / "p.sblr.npz"
    out.parent.mkdir()
    limit = 4096  # bytes: the recordings are read, the prior cannot be written

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = _prior(two_people, out, preexec_fn=small_files)
    assert done.returncode == 1, done.stderr
    line = _one_line_error(done.stderr.splitlines()[-1] + "\n", "prior")
    assert "could not write the prior anywhere" in line and str(out) in line
    assert "File too large" in line
    assert [p.name for p in out.parent.iterdir()] == []


def test_a_second_prior_on_the_same_out_is_refused(two_people, tmp_path):
    out = tmp_path / "p.sblr.npz"
    with OutputLock(out, what="the prior"):
        done = _prior(two_people, out)
    assert done.returncode == 1
    line = _one_line_error(done.stderr, "prior")
    assert "another writer" in line and str(out) in line
    assert not out.exists()


def test_an_empty_person_is_refused(two_people, tmp_path):
    done = _prior(two_people, tmp_path / "p.sblr.npz", "--person", "", "--person", " ")
    assert done.returncode == 1
    assert "'people' must name each person with a non-empty text" in _one_line_error(
        done.stderr, "prior"
    )

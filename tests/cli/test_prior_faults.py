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


def _tampered_prior(tmp_path, edit):
    from sblr_rt.priors import shipped_prior_path
    from tests.io.test_model_file import _rewrite

    out = tmp_path / "tampered.sblr.npz"
    _rewrite(shipped_prior_path("physionet-eegmmidb-left-right"), out, edit_header=edit)
    return out


def _set_prior(key, value):
    def edit(header):
        if key is None:
            header["metadata"]["prior"] = value
        else:
            header["metadata"]["prior"][key] = value

    return edit


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [(None, "a prior", "metadata.prior"), ("people", [1, 2], "metadata.prior.people[0]"),
     ("share", "abc", "metadata.prior.share")],
)  # fmt: skip
def test_inspect_refuses_a_prior_description_of_the_wrong_type_in_one_line(
    tmp_path, key, value, field
):
    bad = _tampered_prior(tmp_path, _set_prior(key, value))
    done = run_diagnosed([sys.executable, "-m", "sblr_rt.cli", "inspect", bad], timeout=120)
    assert done.returncode == 1
    assert f"header field '{field}' must be" in _one_line_error(done.stderr, "inspect")


def test_calibrate_with_a_prior_of_unknown_settings_fails_before_any_work(tmp_path):
    def edit(header):
        header["metadata"]["prior"]["settings"]["speed"] = 3

    bad = _tampered_prior(tmp_path, edit)
    out = tmp_path / "m.sblr.npz"
    done = run_diagnosed(
        [sys.executable, "-m", "sblr_rt.cli", "calibrate", "--recording", RUN, "--classes",
         "T1,T2", "--prior", bad, "--max-trials", "10", "--out", out],
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 1
    line = _one_line_error(done.stderr, "calibrate")
    assert "settings that are not valid" in line and "['speed']" in line
    assert not out.exists()


def test_a_live_calibration_checks_its_prior_before_recording(tmp_path, model_path):
    """No stream exists: without the check first, the command would wait for one."""
    wrong = _tampered_prior(tmp_path, _set_prior("people", [1]))
    shipped = "shipped:physionet-eegmmidb-left-right"  # its classes: left and right
    for prior, says in [
        (model_path, "must be a prior built by build_prior"),
        (wrong, "people"),
        (shipped, "classes must be those of '--prior' shipped:physionet-eegmmidb-left-right, "
                  "['left', 'right']: got ['T1', 'T2']; map the markers to them, as in "
                  "--classes T1=left,T2=right"),
    ]:  # fmt: skip
        done = run_diagnosed(
            [sys.executable, "-m", "sblr_rt.cli", "calibrate", "--stream", "NoSuchStream",
             "--timeout", "30", "--classes", "T1,T2", "--prior", prior, "--out",
             tmp_path / "m.sblr.npz"],
            timeout=25,
        )  # fmt: skip
        assert done.returncode == 1
        assert says in _one_line_error(done.stderr, "calibrate")


def test_calibrate_with_a_prior_that_would_spin_for_ever_is_refused_at_once(tmp_path):
    def edit(header):
        header["estimator"]["params"].update(max_iter=10**9, tol=0.0)

    bad = _tampered_prior(tmp_path, edit)
    done = run_diagnosed(
        [sys.executable, "-m", "sblr_rt.cli", "calibrate", "--recording", RUN, "--classes",
         "T1,T2", "--prior", bad, "--max-trials", "10", "--out", tmp_path / "m.sblr.npz"],
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    line = _one_line_error(done.stderr, "calibrate")
    assert "header field 'estimator.params.max_iter' must be an integer in [1, 2000]" in line

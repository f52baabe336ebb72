"""Writing a model file: only what loads, with the umask's mode, never lost or left behind.

Issue 44: a prior that would not load was written (causes 1 and 8), model files were created
mode 0600 whatever the umask (cause 9), and a failed or killed save lost the work without
naming the file or left its temporary file for ever (cause 6).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import numpy as np
import pytest

from sblr_rt.io import model_file
from sblr_rt.io.model_file import (
    ModelFileError,
    load_model,
    remove_stale_temporaries,
    save_model,
)

from .test_model_file import _model


def test_a_model_that_would_not_load_is_not_written(tmp_path):
    model, _ = _model()
    model.metadata["prior"] = {"share": "abc"}
    path = tmp_path / "m.sblr.npz"
    with pytest.raises(ModelFileError, match=r"cannot be saved .* 'metadata\.prior\.share'"):
        save_model(model, path)
    assert list(tmp_path.iterdir()) == []
    model.metadata["prior"] = {"settings": {"rank": 8}, "people": ["S001", "S002"]}
    model.estimator.objective_ = np.array([1.0, np.inf])
    with pytest.raises(ModelFileError, match="array 'est/objective_0' must hold finite"):
        save_model(model, path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_model_file_has_the_mode_the_umask_gives(tmp_path, umask, mode):
    model, _ = _model()
    old = os.umask(umask)
    try:
        path = save_model(model, tmp_path / "m.sblr.npz")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == mode


def test_a_save_killed_midway_leaves_a_file_the_next_save_removes(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmp_path / f".m.sblr.npz.{int(dead.stdout)}-abc123.tmp"
    stale.write_bytes(b"half a model")
    mine = tmp_path / f".m.sblr.npz.{os.getpid()}-xyz789.tmp"  # a save still running
    mine.write_bytes(b"being written")
    other = tmp_path / ".notes.tmp"
    other.write_bytes(b"not ours")
    model, _ = _model()
    save_model(model, tmp_path / "m.sblr.npz")
    assert not stale.exists() and mine.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path) == []
    assert load_model(tmp_path / "m.sblr.npz").classes == model.classes


def test_too_little_free_space_is_refused_before_writing(tmp_path, monkeypatch):
    model, _ = _model()

    class Usage:
        free = 1000

    monkeypatch.setattr(model_file.shutil, "disk_usage", lambda _: Usage)
    with pytest.raises(OSError, match=r"0\.0 MiB free; the model file needs about .*m\.sblr"):
        save_model(model, tmp_path / "m.sblr.npz")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    model, _ = _model()

    def too_large(*args, **kwargs):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(model_file.np, "savez", too_large)
    with pytest.raises(OSError, match=r"File too large: .*m\.sblr\.npz was not written") as err:
        save_model(model, tmp_path / "m.sblr.npz")
    assert err.value.errno == errno.EFBIG
    assert list(tmp_path.iterdir()) == []

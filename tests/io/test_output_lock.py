"""The output lock never hides the error that ended the work."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sblr_rt.io.outputs import OutputLock


def test_a_lock_file_that_cannot_be_removed_is_left_with_a_warning(tmp_path, monkeypatch, caplog):
    lock = OutputLock(tmp_path / "run.fif", what="recording").acquire()
    real_unlink = Path.unlink

    def unlink(self, *args, **kwargs):  # a folder made read-only while recording
        if self == lock.lock_path:
            raise PermissionError(13, "Permission denied")
        return real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", unlink)
    with caplog.at_level(logging.WARNING, logger="sblr_rt.io"):
        # the error of the work comes through, not the lock's
        with pytest.raises(RuntimeError, match="--recover"):
            try:
                raise RuntimeError("recording failed: `sblr-rt record --recover X`")
            finally:
                lock.release()
    assert "Could not remove the lock file" in caplog.text
    monkeypatch.undo()
    OutputLock(tmp_path / "run.fif", what="recording").acquire().release()  # blocks nothing

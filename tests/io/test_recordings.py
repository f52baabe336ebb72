"""read_recording: dispatch by extension, missing, unknown and broken files."""

from __future__ import annotations

import pytest

from sblr_rt.io import read_recording


def test_missing_and_unknown(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_recording(tmp_path / "nope.edf")
    # .txt is a format MNE reads (BOXY): an extension nobody reads is refused by name
    (tmp_path / "notes.abc").write_text("hello")
    with pytest.raises(ValueError, match=r"extensions .*\.vhdr.*\.set.*got 'notes.abc'"):
        read_recording(tmp_path / "notes.abc")
    with pytest.raises(TypeError, match="'path'"):
        read_recording(3)


@pytest.mark.parametrize("name", ["fake.edf", "fake.fif", "fake.gdf", "fake.xdf", "fake.mat"])
def test_not_a_recording(tmp_path, name):
    path = tmp_path / name
    path.write_text("this is not a recording\n" * 20)
    with pytest.raises(ValueError, match="not a readable"):
        read_recording(path)

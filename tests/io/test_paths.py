"""Files inside the recording's folder, trees without loops (sblr_rt.io.paths)."""

from __future__ import annotations

import pytest

from sblr_rt.io.paths import brainvision_files, check_inside, check_tree


def test_check_inside_resolves_dots_and_links(tmp_path):
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "x.eeg").write_bytes(b"")
    assert check_inside(tmp_path / "rec" / "sub" / ".." / "x.eeg", tmp_path / "rec", what="h")
    with pytest.raises(ValueError, match=r"^h names '.*rec/\.\./y' \(-> '.*/y'\): expected"):
        check_inside(tmp_path / "rec" / ".." / "y", tmp_path / "rec", what="h")
    (tmp_path / "rec" / "link").symlink_to(tmp_path / "y")
    with pytest.raises(ValueError, match=r"inside the recording's folder '.*rec', got one out"):
        check_inside(tmp_path / "rec" / "link", tmp_path / "rec", what="h")


def test_brainvision_files_are_joined_to_the_header_folder(tmp_path):
    header = tmp_path / "x.vhdr"
    header.write_text(
        "Brain Vision Data Exchange Header File Version 1.0\n[Common Infos]\n"
        "DataFile=../d.eeg\nMarkerFile=m.vmrk\n[Comment]\nDataFile=ignored\n"
    )
    assert brainvision_files(header) == [
        ("DataFile", tmp_path / ".." / "d.eeg"),
        ("MarkerFile", tmp_path / "m.vmrk"),
    ]
    header.write_text("not a header\n[[[")
    assert brainvision_files(header) == []


def test_check_tree_bounds_depth_and_entries(tmp_path):
    deep = tmp_path.joinpath(*["d"] * 5)
    deep.mkdir(parents=True)
    assert check_tree(tmp_path) == 5
    with pytest.raises(ValueError, match=r"5 folders below .*: expected at most 4, got 5"):
        check_tree(tmp_path, max_depth=4)
    with pytest.raises(ValueError, match=r"more than 3 files and folders: expected at most 3"):
        check_tree(tmp_path, max_entries=3)


def test_check_tree_leaves_hidden_entries_out(tmp_path, tmp_path_factory):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / ".datalad").symlink_to(tmp_path_factory.mktemp("elsewhere"))
    (tmp_path / "sub-01").mkdir()
    assert check_tree(tmp_path) == 1

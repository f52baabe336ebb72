"""BIDS: markers from events.tsv, channel types and bads from channels.tsv, entities."""

from __future__ import annotations

import mne
import numpy as np
import pytest
from mne_bids import BIDSPath, write_raw_bids

from sblr_rt.io import read_recording
from sblr_rt.io.readers import bids_path_of, find_bids


def _write_run(root, edf, run, *, eog=(), bads=()):
    """Write one PhysioNet run into a BIDS tree as EDF whose cues live in events.tsv only."""
    raw = mne.io.read_raw_edf(edf, preload=True, verbose="error")
    events, event_id = mne.events_from_annotations(raw, verbose="error")
    raw.set_annotations(None)  # the EDF itself then carries no marker
    raw.set_channel_types(dict.fromkeys(eog, "eog"))
    raw.info["bads"] = list(bads)
    path = BIDSPath(subject="01", task="motor", run=run, datatype="eeg", root=root)
    write_raw_bids(
        raw,
        path,
        events=events,
        event_id=event_id,
        format="EDF",
        allow_preload=True,
        verbose="error",
    )
    names = {code: name for name, code in event_id.items()}
    return path, events, [names[c] for c in events[:, 2]]


@pytest.fixture(scope="module")
def bids_root(tmp_path_factory, physionet_dir):
    root = tmp_path_factory.mktemp("bids")
    first = _write_run(root, physionet_dir / "S001R06.edf", 1, eog=["Fc5."], bads=["Cz..", "C3.."])
    second = _write_run(root, physionet_dir / "S001R10.edf", 2)
    return root, first, second


def test_markers_come_from_events_tsv(bids_root):
    _, (path, events, values), _ = bids_root
    edf = path.fpath
    assert edf.suffix == ".edf" and edf.name == "sub-01_task-motor_run-1_eeg.edf"
    assert len(mne.io.read_raw_edf(edf, verbose="error").annotations) == 0  # none in the EDF
    rec = read_recording(edf)  # the file path inside the tree is enough
    assert len(values) == 30 and rec.marker_values == values
    np.testing.assert_array_equal(rec.marker_samples, events[:, 0])
    assert rec.source == str(edf)


def test_channel_types_and_bads_come_from_channels_tsv(bids_root, caplog):
    _, (path, _, _), _ = bids_root
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path.fpath)
    assert rec.excluded == {"FC5": "type eog", "C3": "bad", "Cz": "bad"}
    assert rec.n_channels == 61 and not {"FC5", "C3", "Cz"} & set(rec.ch_names)
    assert rec.ch_names[:3] == ["FC3", "FC1", "FCz"]  # PhysioNet labels standardised
    assert "3 channels left out" in caplog.text


def test_find_bids_selects_by_entities(bids_root):
    root, (first, _, _), (second, _, _) = bids_root
    assert [p.fpath for p in find_bids(root, subject="01", task="motor")] == [
        first.fpath,
        second.fpath,
    ]
    assert [p.fpath for p in find_bids(root, subject="01", runs=[2])] == [second.fpath]
    assert [p.fpath for p in find_bids(root, subject="01", runs=["02"])] == [second.fpath]
    with pytest.raises(ValueError, match=r"no eeg recording .*subject '02'.*subjects \['01'\]"):
        find_bids(root, subject="02", task="motor")
    with pytest.raises(FileNotFoundError, match="not a BIDS root"):
        find_bids(root / "sub-01", subject="01")


def test_bids_detection_and_a_bids_root_as_a_recording(bids_root, physionet_dir):
    root, (first, _, _), _ = bids_root
    assert bids_path_of(first.fpath).fpath == first.fpath
    assert bids_path_of(root / "sub-01" / "eeg" / "sub-01_task-motor_run-1_events.tsv") is None
    assert bids_path_of(physionet_dir / "S001R06.edf") is None
    with pytest.raises(ValueError, match=r"BIDS root .*--bids-root ROOT --subject 01"):
        read_recording(root)


# -- symbolic links: loops and exits (issue 37, items 3 and 6) -----------------------------
@pytest.fixture
def bids_copy(bids_root, tmp_path):
    """A private copy of the tree (the module's tree is shared): (root, first run's file)."""
    import shutil

    root, (first, _, _), _ = bids_root
    copy = tmp_path / "bids"
    shutil.copytree(root, copy)
    return copy, copy / first.fpath.relative_to(root)


@pytest.mark.timeout(30)
def test_a_symlink_loop_in_the_tree_is_refused_not_walked(bids_copy):
    root, edf = bids_copy
    (root / "sub-01" / "eeg" / "loop").symlink_to(root / "sub-01", target_is_directory=True)
    with pytest.raises(ValueError, match=r"symbolic link loop: '.*eeg/loop' leads back to"):
        find_bids(root, subject="01", task="motor")
    with pytest.raises(ValueError, match="symbolic link loop"):
        read_recording(edf)


@pytest.mark.timeout(30)
def test_two_links_that_lead_to_each_other_are_a_loop(bids_copy):
    root, _ = bids_copy
    (root / "sub-01" / "a").mkdir()
    (root / "sub-01" / "b").mkdir()
    (root / "sub-01" / "a" / "to_b").symlink_to(root / "sub-01" / "b")
    (root / "sub-01" / "b" / "to_a").symlink_to(root / "sub-01" / "a")
    with pytest.raises(ValueError, match=r"symbolic link loop: '.*to_a' leads back to"):
        find_bids(root, subject="01", task="motor")


def test_a_link_inside_the_tree_that_is_no_loop_is_walked(bids_copy):
    root, edf = bids_copy
    (root / "derivatives").mkdir()
    (root / "derivatives" / "raw").symlink_to(root / "sub-01", target_is_directory=True)
    assert [p.fpath for p in find_bids(root, subject="01", task="motor", runs=[1])] == [edf]


def test_a_sidecar_linked_outside_the_tree_is_refused(bids_copy, tmp_path):
    root, edf = bids_copy
    events = edf.with_name(edf.name.replace("_eeg.edf", "_events.tsv"))
    secret = tmp_path / "secret.tsv"
    events.rename(secret)
    events.symlink_to(secret)
    with pytest.raises(ValueError, match=r"symbolic link '.*_events\.tsv' to '.*secret\.tsv'"):
        read_recording(edf)
    with pytest.raises(ValueError, match="outside it; refused"):
        find_bids(root, subject="01")


def test_a_folder_linked_outside_the_tree_is_refused(bids_copy, tmp_path):
    root, _ = bids_copy
    (tmp_path / "elsewhere").mkdir()
    (root / "sub-02").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ValueError, match=r"symbolic link '.*sub-02' to '.*elsewhere'"):
        find_bids(root, subject="01")

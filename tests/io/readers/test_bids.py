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

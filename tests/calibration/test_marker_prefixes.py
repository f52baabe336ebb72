"""Classes named without the prefix their markers carry: BrainVision's Comment/ and Stimulus/."""

from __future__ import annotations

import mne
import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.epochs import resolve_markers
from sblr_rt.calibration.report import report_text

from tests.calibrations import NO_SEARCH

FAST = dict(features="waveform", **NO_SEARCH)


def test_physionet_runs_exported_to_brainvision_calibrate_with_t1_t2(tmp_path, physionet_dir):
    files = []
    for run in ("S001R06", "S001R10"):
        raw = mne.io.read_raw_edf(physionet_dir / f"{run}.edf", preload=True, verbose="error")
        path = tmp_path / f"{run}.vhdr"
        mne.export.export_raw(path, raw, verbose="error")
        files.append(path)
    # the export reads back as Comment/T0, Comment/T1, Comment/T2
    assert set(mne.io.read_raw_brainvision(files[0], verbose="error").annotations.description) == {
        "Comment/T0",
        "Comment/T1",
        "Comment/T2",
    }
    model = calibrate(files, classes=["T1", "T2"], tmin=0.5, tmax=2.5, **FAST)
    assert model.classes == ["T1", "T2"]
    assert model.metadata["epochs"]["per_class"] == {"T1": 14, "T2": 16}  # as from the EDF files
    assert model.metadata["epochs"]["markers"] == {"Comment/T1": "T1", "Comment/T2": "T2"}
    assert "markers: 'Comment/T1' -> T1, 'Comment/T2' -> T2" in report_text(model)


def _recorder_session(path, n_trials=30):
    # BrainVision Recorder's stimulus markers: "Stimulus/S  1" (S, the code padded to 3)
    rng = np.random.default_rng(0)
    info = mne.create_info(["C3", "Cz", "C4"], 100.0, "eeg")
    data = rng.standard_normal((3, (n_trials + 2) * 100)) * 1e-5
    onsets = np.arange(n_trials) + 1.0
    codes = ["S  1" if k % 2 else "S  2" for k in range(n_trials)]
    for t, code in zip(onsets, codes, strict=True):
        s = int(t * 100)
        data[1, s + 10 : s + 40] += (1 if code == "S  1" else -1) * 1e-5
    raw = mne.io.RawArray(data, info, verbose="error")
    raw.set_annotations(mne.Annotations(onsets, 0.0, [f"Stimulus/{c}" for c in codes]))
    mne.export.export_raw(path, raw, verbose="error")
    return path


@pytest.mark.parametrize(
    "spelling", [{"S  1": "left", "S  2": "right"}, {"S1": "left", "S2": "right"}]
)
def test_brainvision_recorder_stimuli_by_code(tmp_path, spelling):
    path = _recorder_session(tmp_path / "session.vhdr")
    model = calibrate(path, classes=spelling, tmin=0.0, tmax=0.5, **FAST)
    assert model.classes == ["left", "right"]
    assert model.metadata["epochs"]["markers"] == {
        "Stimulus/S  1": "left",
        "Stimulus/S  2": "right",
    }
    assert model.metadata["selection"]["best"]["accuracy"] > 0.8


def test_resolve_markers_rules_and_ambiguity():
    found = ["Comment/T1", "Stimulus/S  1", "T2", "Stimulus/T2"]
    out, matched = resolve_markers({"T1": "a", "T2": "b", "S1": "c", "X": "d"}, found)
    # the marker as given wins over a prefixed one; a marker found nowhere stays as it is
    assert out == {"Comment/T1": "a", "T2": "b", "Stimulus/S  1": "c", "X": "d"}
    assert matched == {
        "T1": ("Comment/T1", "after '/'"),
        "S1": ("Stimulus/S  1", "after '/', spaces ignored"),
    }
    with pytest.raises(ValueError, match=r"fits 2 markers.*'Comment/T1', 'Stimulus/T1'"):
        resolve_markers({"T1": "a"}, ["Comment/T1", "Stimulus/T1"])

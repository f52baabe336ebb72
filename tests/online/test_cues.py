"""Which markers start a trial: the classes, the configured markers, the recordings' own."""

from __future__ import annotations

from types import SimpleNamespace

from sblr_rt.online.cues import CueFilter, cue_classes
from sblr_rt.online.run_info import RunInfo


def _classifier(metadata):
    return SimpleNamespace(classes=["T1", "T2"], run_info=RunInfo.from_metadata(metadata))


def test_the_calibration_markers_in_the_recordings_spelling_start_trials():
    # calibrated on a BrainVision export: the class map said T1, the files Comment/T1
    metadata = {
        "config": {"classes": [["T1", "T1"], ["T2", "T2"]]},
        "epochs": {"markers": {"Comment/T1": "T1", "Comment/T2": "T2"}},
    }
    assert cue_classes(None, _classifier(metadata)) == {
        "T1": "T1",
        "T2": "T2",
        "Comment/T1": "T1",
        "Comment/T2": "T2",
    }
    cues = CueFilter(None, _classifier(metadata))
    got = cues.accept([(1.0, "Comment/T1"), (2.0, "Comment/T0"), (3.0, 2), (4.0, "T2")])
    assert got == [(1.0, "Comment/T1"), (4.0, "T2")]


def test_numeric_markers_start_trials_as_their_text():
    cues = CueFilter("1,2", _classifier({}))
    assert cues.accept([(1.0, 1), (2.0, 3), (3.0, 2)]) == [(1.0, "1"), (3.0, "2")]


def test_old_models_without_marker_metadata():
    assert cue_classes(None, _classifier(None)) == {"T1": "T1", "T2": "T2"}
    assert cue_classes(None, _classifier({"epochs": {"markers": "bad"}})) == {
        "T1": "T1",
        "T2": "T2",
    }

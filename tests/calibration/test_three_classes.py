"""Three classes on every feature path: calibrate, save, load, inspect, score, refit.

A PhysioNet run has three cues (T0 rest, T1 fists, T2 feet); a model of three or more
classes is one-versus-rest (one factor pair and one objective trace per class), and every
step a user takes with it must work as with two classes.
"""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.config import FEATURE_CHOICES
from sblr_rt.calibration.refit import labelled_recording, refit_model, version_path
from sblr_rt.cli import main

from sblr_rt.io import read_recording
from sblr_rt.io.model_file import load_model, read_header, save_model
from sblr_rt.online.classifier import OnlineClassifier
from tests.calibrations import NO_SEARCH

CLASSES = {"T0": "rest", "T1": "fists", "T2": "feet"}
PICKS = ("FC3", "FCz", "FC4", "C3", "C1", "Cz", "C2", "C4")
FAST = dict(
    classes=CLASSES,
    picks=PICKS,
    tmin=0.5,
    tmax=2.5,
    **NO_SEARCH,
    max_iter=100,
)
PATHS = [f for f in FEATURE_CHOICES if f != "auto"]


@pytest.fixture(scope="module")
def run(physionet_dir):
    return read_recording(physionet_dir / "S001R05.edf")


def test_every_fixed_path_is_tested():
    assert PATHS == ["waveform", "bandpower", "spectral", "covariance"]


@pytest.mark.parametrize("features", PATHS)
def test_three_class_round_trip(run, features, tmp_path, capsys):
    model = calibrate(run, features=features, **FAST)
    assert model.classes == ["rest", "fists", "feet"]
    objective = model.metadata["objective"]
    assert len(objective) == 3 and all(isinstance(o, list) for o in objective)

    path = save_model(model, tmp_path / "m3.sblr.npz")
    assert read_header(path)["classes"] == ["rest", "fists", "feet"]
    loaded = load_model(path)
    assert loaded.classes == model.classes
    assert loaded.metadata["objective"] == objective
    assert len(loaded.estimator.objective_) == 3
    text = loaded.summary()
    assert "classes: ['rest', 'fists', 'feet']" in text
    assert main(["inspect", str(path)]) == 0
    assert "classes: ['rest', 'fists', 'feet']" in capsys.readouterr().out

    # The online classifier scores raw windows as the offline model does.
    clf = OnlineClassifier(loaded)
    assert clf.n_outputs == 3
    sfreq = run.sfreq
    raw_ch = [run.ch_names.index(c) for c in clf.ch_names]
    starts = [round((t + clf.tmin) * sfreq) - clf.n_pad for t in run.marker_times[2:8]]
    windows = np.stack([run.data[raw_ch, s : s + clf.n_times_raw] for s in starts])
    offline = loaded.decision_function(windows)
    for window, expected in zip(windows, offline, strict=True):
        scores = clf.decision_function(window)
        assert scores.shape == (3,)
        np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-8)
        decision = clf.step(window)
        assert decision["label"] in loaded.classes
        assert np.isclose(sum(decision["proba"].values()), 1.0)

    # The fast incremental form (projected, filtered) gives the same scores as the step.
    fixed = OnlineClassifier(loaded, recentre=False)
    state = fixed.streaming(capacity=starts[-1] + clf.n_times_raw + 1)
    assert state.form != "plain"
    n = starts[-1] + clf.n_times_raw
    state.push(np.ascontiguousarray(run.data[raw_ch, :n].T), np.arange(n) / sfreq)
    for s, window in zip(starts, windows, strict=True):
        got = state.decide(s + clf.n_times_raw)
        np.testing.assert_allclose(got["score"], fixed.decision_function(window), rtol=1e-6,
                                   atol=1e-8)  # fmt: skip

    # One warm refit as `run --adapt` does, saved as a version and loaded again.
    recs = [labelled_recording(run, CLASSES)]
    new = refit_model(loaded, recs, version=1, folder=tmp_path)
    again = load_model(version_path(tmp_path, 1))
    assert again.classes == model.classes
    assert again.metadata["adaptation"]["version"] == 1
    np.testing.assert_allclose(again.decision_function(windows), new.decision_function(windows))
    OnlineClassifier(again).step(windows[0])

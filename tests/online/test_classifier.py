"""The pure classifier, on arrays only (no LSL)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sblr_rt.online.classifier import OnlineClassifier, check_stream_info, public_decision


def _windows(clf, n=5, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, len(clf.ch_names), clf.n_times_raw))


def test_step_equals_offline_model(case_model):
    model = case_model
    clf = OnlineClassifier(model)
    windows = _windows(clf)
    expected_scores = model.decision_function(windows)
    expected_proba = model.predict_proba(windows)
    expected_labels = model.predict(windows)
    for form in ("auto", "plain"):
        for w, score, proba, label in zip(
            windows, expected_scores, expected_proba, expected_labels, strict=True
        ):
            copy = w.copy()
            decision = clf.step(copy, window_end=12.5, form=form)
            np.testing.assert_array_equal(copy, w)  # pure: the input is untouched
            np.testing.assert_allclose(decision["score"], score, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(
                list(decision["proba"].values()), proba, rtol=1e-10, atol=1e-12
            )
            assert list(decision["proba"]) == model.classes
            assert decision["label"] == label
            assert decision["window_end"] == 12.5
            assert decision["trial"] is False and decision["cue"] is None
    assert clf.form == ("folded" if model.features == "waveform" else "plain")


def test_step_is_pure_and_repeatable(make_model):
    clf = OnlineClassifier(make_model(rank=3))
    w = _windows(clf, 1)[0]
    first = clf.step(w, trial=True, cue="class1")
    assert clf.step(w, trial=True, cue="class1") == first
    assert first["trial"] is True and first["cue"] == "class1"
    public = public_decision(first)
    assert set(public) == {"label", "proba", "window_end", "trial", "cue"}
    json.dumps(public)


def test_step_checks_the_window(make_model):
    clf = OnlineClassifier(make_model())
    with pytest.raises(ValueError, match=r"'window' must have shape"):
        clf.step(np.zeros((len(clf.ch_names), clf.n_times_raw - 1)))
    with pytest.raises(ValueError, match="'form' must be one of"):
        clf.step(np.zeros((len(clf.ch_names), clf.n_times_raw)), form="fast")
    with pytest.raises(TypeError, match="must be a BCIModel"):
        OnlineClassifier(object())
    bp = OnlineClassifier(make_model(features="bandpower"))
    with pytest.raises(ValueError, match="waveform"):
        bp.decision_function(np.zeros((len(bp.ch_names), bp.n_times_raw)), form="folded")


def test_nan_window_gives_no_label(make_model):
    clf = OnlineClassifier(make_model())
    w = _windows(clf, 1)[0]
    w[2, 5] = np.nan
    decision = clf.step(w)
    assert decision["label"] is None
    assert np.isnan(decision["score"])


def test_check_stream_info(make_model):
    clf = OnlineClassifier(make_model())
    names = list(clf.ch_names)
    assert check_stream_info(clf, names, clf.sfreq) is None
    picks = check_stream_info(clf, ["X1", *reversed(names)], clf.sfreq)
    assert [["X1", *reversed(names)][i] for i in picks] == names
    with pytest.raises(ValueError, match=r"runs at 250 Hz but the model was calibrated at 100"):
        check_stream_info(clf, names, 250.0, stream="EEG stream 'amp'")
    with pytest.raises(ValueError, match=r"lacks 2 of the model's 6 channels: EEG000, EEG005"):
        check_stream_info(clf, [*names[1:-1], "Cz"], clf.sfreq)

"""Calibrated probabilities: fitted on trials the model did not train on, used everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration.probability import (
    expected_calibration_error,
    fit_probability,
    window_end_scores,
    window_ends,
)
from scipy.special import expit

from sblr_rt.io.model_file import ModelFileError, load_model, save_model
from sblr_rt.model.link import ProbabilityCalibration, proba_from_scores, proba_of_window
from sblr_rt.online import Evidence, OnlineClassifier, Smoothing
from tests.models import fit_model

ENDS = np.round(np.arange(0.0, 3.51, 0.25), 6)
TMAX = 3.5


def _stream(n_trials, rng):
    """Scores at ``ENDS`` after each cue, eight times as large as what they are worth.

    A window ending ``e`` after the cue has the true class's log-odds ``l = w(e) m`` (``m``
    the trial's strength, ``w`` rising from 0 at the cue to 1 at ``tmax``): its score
    carries the right sign with probability ``expit(l)``, and the windows of one trial
    err together (one draw per trial, as overlapping sliding windows do). The raw score
    is ``8 l``: over-confident, most of all early in the trial where ``l`` is small.
    """
    y = rng.integers(0, 2, n_trials)
    strength = np.abs(rng.normal(2.0, 1.5, (n_trials, 1)))
    logodds = (ENDS / TMAX) ** 2 * strength
    wrong = rng.random((n_trials, 1)) < 1 - expit(logodds)
    sign = (2 * y[:, None] - 1) * np.where(wrong, -1, 1)
    return 8.0 * sign * logodds, y


def test_calibration_lowers_the_held_out_log_loss_of_over_confident_scores():
    rng = np.random.default_rng(0)
    train, y_train = _stream(300, rng)
    test, y_test = _stream(300, rng)
    cal = fit_probability(train.T, y_train, ENDS)
    assert cal is not None and cal.ends == tuple(ENDS.tolist())
    assert all(0 <= a <= 1 for a in cal.sharpness)  # these raw scores are over-confident
    assert list(cal.sharpness) == sorted(cal.sharpness)  # never more belief earlier
    for j, e in enumerate(ENDS):
        raw = proba_from_scores(test[:, j])
        calibrated = proba_from_scores(test[:, j], sharpness=cal.sharpness_at(e))
        loss = [-np.mean(np.log(p[np.arange(len(y_test)), y_test])) for p in (raw, calibrated)]
        assert loss[1] < loss[0] or (e == 0 and loss[1] == loss[0])  # at the cue: no score
        assert np.array_equal(np.argmax(raw, 1), np.argmax(calibrated, 1)) or cal.sharpness[j] == 0
        assert expected_calibration_error(calibrated, y_test) <= expected_calibration_error(
            raw, y_test
        )


def _early_decisions(scores, y, cal, p_early):
    right, n_early = 0, 0
    for k in range(len(y)):
        ev = Evidence(["a", "b"], Smoothing("mean", early=p_early), calibration=cal)
        t0 = 100.0 * (k + 1)
        ev.cue(t0, "cue")
        a_trial = 1.0 if cal is None else cal.trial
        for j, e in enumerate(ENDS):
            p = proba_of_window([scores[k, j]], sharpness=a_trial)
            d = {"proba": {"a": p[0], "b": p[1]}, "window_end": t0 + e, "trial": False}
            smoothed, done = ev.add(d)
            if done is not None:
                n_early += 1
                right += ["a", "b"].index(max(smoothed, key=smoothed.get)) == y[k]
                break
    return right, n_early


@pytest.mark.parametrize(("p_early", "min_early"), [(0.8, 20), (0.9, 1)])
def test_early_decisions_at_p_are_right_about_p_of_the_time(p_early, min_early):
    """Raw: early decisions on over-confident windows are coin tosses; calibrated: not."""
    rng = np.random.default_rng(1)
    train, y_train = _stream(400, rng)
    test, y_test = _stream(400, rng)
    cal = fit_probability(train.T, y_train, ENDS)
    right_raw, n_raw = _early_decisions(test, y_test, None, p_early)
    right_cal, n_cal = _early_decisions(test, y_test, cal, p_early)
    assert n_raw > 300 and right_raw / n_raw < p_early - 0.1  # the failure being fixed
    assert n_cal >= min_early and right_cal / n_cal >= p_early - 0.05


def test_the_calibration_checks_its_values():
    with pytest.raises(ValueError, match="strictly increasing"):
        ProbabilityCalibration([1.0, 1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="must not decrease"):
        ProbabilityCalibration([1.0, 2.0], [0.5, 0.4])
    with pytest.raises(ValueError, match="one value each"):
        ProbabilityCalibration([1.0, 2.0], [0.5])
    with pytest.raises(ValueError, match=r"in \[0, 10\]"):
        ProbabilityCalibration([1.0], [-0.1])
    with pytest.raises(ValueError, match="finite"):
        ProbabilityCalibration([float("nan")], [0.1])
    cal = ProbabilityCalibration([0.0, 1.0, 3.5], [0.0, 0.5, 0.9])
    assert cal.sharpness_at(-1) == 0.0 and cal.sharpness_at(5) == 0.9
    assert cal.sharpness_at(0.5) == pytest.approx(0.25)
    assert ProbabilityCalibration.from_dict(cal.to_dict()) == cal
    assert window_ends(0.5, 3.5).tolist() == ENDS.tolist()


def test_sharpness_keeps_the_argmax_of_every_form():
    scores = np.random.default_rng(2).standard_normal((50, 3)) * 3
    for mc in ("ovr", "multinomial"):
        raw = proba_from_scores(scores, mc)
        for a in (0.3, 2.0):
            p = proba_from_scores(scores, mc, a)
            assert np.allclose(p.sum(1), 1)
            assert np.array_equal(np.argmax(p, 1), np.argmax(raw, 1))
            assert np.allclose(proba_of_window(scores[0], mc, a), p[0])
    assert np.allclose(
        proba_from_scores(scores[:, 0], sharpness=0.5)[:, 1], expit(scores[:, 0] / 2)
    )


def _calibrated_model():
    model, raw, y = fit_model(run_offsets=[0.0, 0.5], n_epochs=30, features="waveform")
    model.metadata["probability"] = ProbabilityCalibration(
        [0.0, 0.5, 1.0], [0.0, 0.2, 0.4], "test"
    ).to_dict()
    return model, raw, y


def test_the_model_file_round_trips_the_calibration_and_old_files_have_none(tmp_path):
    model, raw, _ = _calibrated_model()
    loaded = load_model(save_model(model, tmp_path / "m.sblr.npz"))
    assert loaded.probability == model.probability
    np.testing.assert_allclose(loaded.predict_proba(raw), model.predict_proba(raw))
    assert "sharpness (the factor on the scores) by window end" in loaded.summary()
    assert "0 s 0.00, 1 s 0.40" in loaded.summary()
    del model.metadata["probability"]
    assert "sharpness" not in model.summary()
    assert load_model(save_model(model, tmp_path / "old.sblr.npz")).probability is None


@pytest.mark.parametrize(
    "bad",
    [
        {"ends": [0.0, 1.0], "sharpness": [0.5]},
        {"ends": [1.0, 0.0], "sharpness": [0.1, 0.5]},
        {"ends": [0.0, 1.0], "sharpness": [0.5, 0.1]},
        {"ends": [0.0], "sharpness": [11.0]},
        {"ends": [0.0]},
        [0.1],
    ],
)
def test_a_file_with_a_bad_calibration_is_refused(tmp_path, bad):
    from tests.io.test_model_file import _rewrite

    model, _, _ = _calibrated_model()
    path = save_model(model, tmp_path / "m.sblr.npz")
    bad_path = tmp_path / "bad.sblr.npz"
    _rewrite(path, bad_path, edit_header=lambda h: h["metadata"].update(probability=bad))
    with pytest.raises(ModelFileError, match="probability"):
        load_model(bad_path)
    model.metadata["probability"] = bad  # and it is never written
    with pytest.raises(ModelFileError, match="probability"):
        save_model(model, tmp_path / "never.sblr.npz")


def test_online_probabilities_equal_offline_and_labels_do_not_change():
    model, raw, _ = _calibrated_model()
    labels, proba = model.labels_from_scores(model.decision_function(raw))
    clf = OnlineClassifier(model)
    assert clf.probability == model.probability
    for k in range(5):
        d = clf.step(raw[k])
        assert d["label"] == labels[k]
        assert list(d["proba"].values()) == pytest.approx(proba[k].tolist(), abs=1e-9)
    # sharpness 0.4 at the trial window: less confident than the raw probabilities
    raw_p = proba_from_scores(model.decision_function(raw))
    assert np.all(proba.max(1) <= raw_p.max(1) + 1e-12)


def test_window_end_scores_score_every_trial_at_every_end():
    """Out-of-fold scores of simulated runs; the trial window's decide above chance."""
    from sblr_rt.calibration.config import load_config

    from sblr_rt.io.recording import Recording

    model, raw, y = fit_model(run_offsets=[0.0], n_epochs=40, features="waveform")
    # one continuous recording: the epochs laid end to end, a cue at each epoch's tmin
    n = raw.shape[2]
    data = np.concatenate(list(raw), axis=1)
    times = np.arange(len(raw)) * n + model.n_pad - round(model.tmin * model.sfreq)
    rec = Recording(
        data=data,
        sfreq=model.sfreq,
        ch_names=model.ch_names,
        marker_times=times / model.sfreq,
        marker_values=[model.classes[c] for c in y],
        unit="uV",
    )
    config = load_config(None, classes={c: c for c in model.classes}, tmin=0.0, tmax=1.0)
    ends = np.array([0.5, 1.0])
    scores, yy = window_end_scores(model, [rec], config, model.classes, ends)
    assert scores.shape == (2, len(yy)) and len(yy) >= 30
    assert np.isfinite(scores[-1]).all()
    assert np.mean((scores[-1] > 0) == yy) > 0.7
    assert np.isnan(scores[0, 0]) and np.isfinite(scores[0, 1:]).all()  # before the start
    # an epoched file: the samples before a cue are another trial's, never read
    rec.epoch_length = n
    scores, _ = window_end_scores(model, [rec], config, model.classes, ends)
    assert np.isnan(scores[0]).all() and np.isfinite(scores[-1]).all()

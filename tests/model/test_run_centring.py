"""Unsupervised run centring: the score-level running mean equals centring the features."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.bci_model import EnsembleModel
from sblr_rt.model.run_centring import RunCentring, centre_runs
from tests.models import fit_model, simulated_epochs


def _model(shift_test=0.0, seed=0):
    """A run-centred model on two calibration runs with different offsets, and a test run."""
    signal = {"informative": ["b"], "signal": "shift", "effect": 0.8}
    model, _, _ = fit_model(["a", "b", "c"], sfreq=50.0, n_times=10, classes=["l", "r"],
                            seed=seed, run_offsets=[1.0, -1.0], **signal,
                            estimator={"mu2": 0.01, "nu2": 0.01, "max_iter": 500})  # fmt: skip
    rng = np.random.default_rng(seed + 100)
    test_raw, test_y = simulated_epochs(model.preprocessor, n_epochs=30, n_classes=2, rng=rng,
                                        offset=shift_test, **signal)  # fmt: skip
    return model, test_raw, test_y


def test_run_scores_equal_features_centred_on_the_running_mean():
    model, raw, _ = _model(shift_test=2.0)
    pre, est = model.preprocessor, model.estimator
    Z = pre.features_from_filtered(pre.filter_epochs(raw))
    # The explicit recursion on the features: m_k = (m_cal + Z_1 + ... + Z_k) / (1 + k).
    Zcal = _calibration_reference(model)
    expected = []
    for k in range(1, len(Z) + 1):
        mean = (1.0 * Zcal + Z[:k].sum(axis=0)) / (1.0 + k)
        Xc = pre.scale((Z[k - 1] - mean + Zcal)[None])  # centred, seen from the reference
        expected.append(est.decision_function(Xc)[0] - model.run_centring.reference_score[0])
    np.testing.assert_allclose(model.decision_function_run(raw), expected, atol=1e-9)


def _calibration_reference(model):
    """A feature matrix the model scores as its calibration reference.

    The score is linear in the features, so every m with <W / scale, m> equal to the
    stored reference score is scored as m_cal is: take the one along W / scale.
    """
    pre, est = model.preprocessor, model.estimator
    W = np.einsum("sr,tr->st", est.spatial_, est.temporal_)
    W = W / (pre.row_scale_[:, None] * pre.col_scale_)
    return W * model.run_centring.reference_score[0] / np.sum(W * W)


def test_run_centring_recovers_a_shifted_run():
    model, raw, y = _model(shift_test=3.0)
    static = np.mean(model.predict(raw) == np.array(["l", "r"])[y])
    adapted = np.mean(model.predict_run(raw) == np.array(["l", "r"])[y])
    assert static <= 0.6  # the shift alone decides every trial the same way
    assert adapted >= 0.85
    assert adapted - static >= 0.25


def test_first_trials_are_pulled_towards_the_calibration_reference():
    centring = RunCentring([0.0], [0.5], warmup=3.0)
    state = centring.start()
    out = [float(state.step(np.array([s]))[0]) for s in (4.5, 4.5)]
    # (4.5 - 0.5) / (3 + 1) = 1 after one trial, 8 / 5 = 1.6 after two
    np.testing.assert_allclose(out, [3.5, 2.9])
    state.update(np.array([np.nan]))  # a window that cannot be decided does not move it
    assert state.n_trials == 2


def test_round_trip_and_bad_values():
    centring = RunCentring([0.25, -1.0], [0.0, 0.5], warmup=2)
    again = RunCentring.from_dict(centring.to_dict())
    np.testing.assert_array_equal(again.reference_score, centring.reference_score)
    assert again.warmup == 2.0
    with pytest.raises(ValueError, match="'warmup' must be a positive number of trials, got 0"):
        RunCentring([0.0], [0.0], warmup=0)
    with pytest.raises(TypeError, match="'warmup' must be a number, got bool True"):
        RunCentring([0.0], [0.0], warmup=True)
    with pytest.raises(ValueError, match="finite"):
        RunCentring([np.nan], [0.0])
    with pytest.raises(ValueError, match="one length"):
        RunCentring([0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match="lacks"):
        RunCentring.from_dict({"warmup": 1.0})


def test_model_file_keeps_the_reference(tmp_path):
    from sblr_rt.io import load_model, save_model

    model, raw, _ = _model()
    again = load_model(save_model(model, tmp_path / "m.sblr.npz"))
    np.testing.assert_allclose(again.decision_function_run(raw), model.decision_function_run(raw))
    assert again.run_centring.warmup == model.run_centring.warmup


def test_centre_runs_checks_its_runs():
    with pytest.raises(ValueError, match="one run per epoch"):
        centre_runs(np.zeros((3, 1, 1)), np.array([0, 1]))


def test_an_ensemble_averages_its_members_and_their_run_centring(tmp_path):
    from sblr_rt.io import load_model, save_model
    from sblr_rt.online import OnlineClassifier

    a, raw, _ = _model(shift_test=2.0, seed=0)
    b, _, _ = _model(shift_test=2.0, seed=1)
    ens = EnsembleModel([a, b])
    assert ens.is_ensemble and ens.features == "ensemble"
    np.testing.assert_allclose(
        ens.decision_function(raw), (a.decision_function(raw) + b.decision_function(raw)) / 2
    )
    # run centring of the mean score is the mean of the members' run centring, exactly
    np.testing.assert_allclose(
        ens.decision_function_run(raw),
        (a.decision_function_run(raw) + b.decision_function_run(raw)) / 2,
        atol=1e-12,
    )
    again = load_model(save_model(ens, tmp_path / "e.sblr.npz"))
    assert len(again.members) == 2
    np.testing.assert_allclose(again.decision_function_run(raw), ens.decision_function_run(raw))
    # online: the plain form, and one window scores as offline
    clf = OnlineClassifier(again)
    assert clf.form == "plain" and clf.n_times_raw == again.n_times_raw
    # streaming: each member on its own fast form, the same scores as the plain pipeline
    n = 3 * again.n_times_raw
    fast, plain = clf.streaming(capacity=n), clf.streaming(capacity=n, form="plain")
    assert fast.form == "ensemble"
    stream = np.concatenate(list(raw[:3]), axis=1).T  # three epochs end to end
    times = np.arange(len(stream)) / again.sfreq
    for state in (fast, plain):
        state.push(stream, times)
    for stop in (again.n_times_raw, len(stream)):
        np.testing.assert_allclose(
            fast.decide(stop)["score"], plain.decide(stop)["score"], rtol=1e-9, atol=1e-9
        )
    np.testing.assert_allclose(clf.decision_function(raw[0])[0], ens.decision_function(raw[:1])[0])
    with pytest.raises(ValueError, match="two or more"):
        EnsembleModel([a])

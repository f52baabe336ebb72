"""The preprocessing as scikit-learn transformers equals the Preprocessor, fold by fold."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_set_params,
    parametrize_with_checks,
)

from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.online import OnlineClassifier
from sblr_rt.preprocessing import (
    FeatureScaler,
    FeatureTransform,
    FilterBank,
    Preprocessor,
    SpatialStage,
    make_steps,
)
from tests.models import fit_model, simulated_epochs

CH = ["C3", "Cz", "C4", "CP3", "CP4", "Pz"]
DESIGNS = {
    "waveform": {"features": "waveform", "l_freq": 1.0, "h_freq": 20.0, "spatial": "csd",
                 "baseline": (0.0, 0.2), "scaling": "channel_time"},
    "bandpower": {"features": "bandpower", "spatial": "car"},
    "spectral": {"features": "spectral"},
    "covariance": {"features": "covariance", "bands": [(8.0, 30.0)]},
}  # fmt: skip


def _raw(pre, seed=0):
    rng = np.random.default_rng(seed)
    return simulated_epochs(pre, n_epochs=40, n_classes=2, informative=["C3", "C4"],
                            effect=1.5, signal="waveform", rng=rng)  # fmt: skip


@pytest.mark.parametrize("name", DESIGNS)
def test_the_pipeline_equals_the_preprocessor(name):
    pre = Preprocessor(ch_names=CH, sfreq=100.0, tmin=0.0, tmax=1.0, **DESIGNS[name])
    raw, _ = _raw(pre)
    pipe = Pipeline(make_steps(pre))
    expected = pre.fit(raw).transform(raw)
    np.testing.assert_allclose(pipe.fit_transform(raw), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pipe.transform(raw[:5]), pre.transform(raw[:5]), rtol=1e-10)
    scaler = pipe.named_steps["scale"]
    np.testing.assert_allclose(scaler.row_scale_, pre.row_scale_)
    np.testing.assert_allclose(scaler.row_offset_, pre.row_offset_)


def test_each_fold_learns_its_own_scaling_and_cross_val_predict_runs():
    pre = Preprocessor(ch_names=CH, sfreq=100.0, tmin=0.0, tmax=1.0, features="bandpower")
    raw, y = _raw(pre)
    pipe = Pipeline([*make_steps(pre), ("sblr", SparseBilinearLogisticRegression(mu1=0.01))])
    train = np.arange(20)
    fitted = clone(pipe).fit(raw[train], y[train])
    alone = Preprocessor(ch_names=CH, sfreq=100.0, tmin=0.0, tmax=1.0, features="bandpower")
    alone.fit(raw[train])  # the scaling of the training fold only, not of every epoch
    np.testing.assert_allclose(fitted.named_steps["scale"].row_scale_, alone.row_scale_)
    assert not np.allclose(alone.row_scale_, pre.fit(raw).row_scale_)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    pred = cross_val_predict(pipe, raw, y, cv=cv)
    assert pred.shape == y.shape and np.mean(pred == y) > 0.7  # the class is learnt


def test_the_pipeline_scores_as_the_model_and_its_online_form():
    model, raw, _ = fit_model(CH, informative=["C3", "C4"], l_freq=1.0, h_freq=20.0,
                              spatial="car")  # fmt: skip
    pipe = Pipeline([*make_steps(model.preprocessor), ("sblr", model.estimator)])
    pipe.named_steps["scale"].fit(model.preprocessor.features_from_filtered(
        model.preprocessor.filter_epochs(raw)))  # fmt: skip
    offline = pipe.decision_function(raw[:6])
    np.testing.assert_allclose(offline, model.decision_function(raw[:6]), rtol=1e-9)
    clf = OnlineClassifier(model)
    online = [clf.decision_function(w)[0] for w in raw[:6, :, -model.n_times_raw :]]
    np.testing.assert_allclose(online, offline, rtol=1e-8, atol=1e-10)


def test_the_stages_say_what_is_wrong():
    with pytest.raises(TypeError, match="must be a Preprocessor"):
        make_steps("waveform")
    with pytest.raises(
        ValueError, match="'scaling' must be None, 'channel' or 'channel_time', got 'z'"
    ):
        FeatureScaler(scaling="z").fit(np.ones((3, 2, 4)))
    with pytest.raises(ValueError, match="n_epochs, n_rows, n_times"):
        FeatureScaler().fit(np.ones((3, 2, 4, 1)))


def _scaler_expected_failures(scaler):
    failures = {
        "check_estimators_nan_inf": (
            "transform passes non-finite features through: a window that cannot be scored "
            "scores NaN, as the preprocessor's does (fit refuses them)"
        )
    }
    if scaler.center:
        failures["check_fit2d_1sample"] = (
            "one epoch of one time point is all zeros once centred: fit says no row has scale"
        )
    return failures


@parametrize_with_checks(
    [FeatureScaler(), FeatureScaler("channel_time", center=True), FeatureScaler(None)],
    expected_failed_checks=_scaler_expected_failures,
)
def test_the_scaler_is_a_scikit_learn_transformer(estimator, check):
    # The one step that learns; 2-D X is read as (n_epochs, n_rows, n_times=1).
    check(estimator)


@pytest.mark.parametrize("stage", [FilterBank, SpatialStage, FeatureTransform])
def test_the_design_stages_keep_the_estimator_contract(stage):
    # Their input shape is fixed by the design (channels, window), so the common checks'
    # free-shaped 2-D data does not apply; the contract that a Pipeline and clone need does.
    pre = Preprocessor(ch_names=CH, sfreq=100.0, tmin=0.0, tmax=1.0, **DESIGNS["bandpower"])
    step = stage(pre)
    check_get_params_invariance(stage.__name__, step)
    check_set_params(stage.__name__, step)
    check_no_attributes_set_in_init(stage.__name__, step)
    copied = clone(step)
    assert copied.design is not pre and copied.design.get_config() == pre.get_config()
    raw, _ = _raw(pre)
    X = FilterBank(pre).transform(raw)
    inputs = {FilterBank: raw, SpatialStage: X, FeatureTransform: pre.apply_spatial(X)}
    out = step.fit(inputs[stage]).transform(inputs[stage])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(step)).transform(inputs[stage]), out)
    with pytest.raises(TypeError, match="'design' must be a Preprocessor"):
        stage().fit(inputs[stage])

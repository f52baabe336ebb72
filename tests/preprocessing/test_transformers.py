"""The preprocessing as scikit-learn transformers equals the Preprocessor, fold by fold."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import Pipeline

from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.online import OnlineClassifier
from sblr_rt.preprocessing import FeatureScaler, Preprocessor, make_steps
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
    with pytest.raises(ValueError, match="'scaling' must be one of"):
        FeatureScaler(scaling="z").fit(np.ones((3, 2, 4)))
    with pytest.raises(ValueError, match="n_epochs, n_rows, n_times"):
        FeatureScaler().fit(np.ones((3, 2, 4, 1)))

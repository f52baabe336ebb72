"""The data scale: the estimator standardises inside fit, so its model ignores units."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sblr_rt.model import SparseBilinearLogisticRegression, l1_penalty_max
from sblr_rt.model.penalty_path import fit_penalty_paths

SCALES = [1e-6, 1.0, 1e6]


def _separable(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 40)
    X = rng.standard_normal((80, 6, 10))
    X[:, 2, 3:7] += 0.8 * (2 * y - 1)[:, None]
    return X, y


def _noisy(seed=0):
    # classes that overlap: the predictions depend on the penalties, not only on the sign
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 30)
    X = rng.standard_normal((60, 8, 12))
    X[:, 3, 4:8] += 0.3 * (2 * y - 1)[:, None]
    return X, y


@pytest.mark.parametrize("params", [dict(mu2=0.1, nu2=0.1), dict(mu1=0.01, nu1=0.01, nu2=0.1)])
@pytest.mark.parametrize("solver", ["paper", "fast"])
def test_the_same_data_at_any_scale_give_the_same_model(params, solver):
    X, y = _noisy()
    fits = {}
    for scale in SCALES:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning about the scale any more
            est = SparseBilinearLogisticRegression(rank=2, solver=solver, **params)
            fits[scale] = est.fit(X * scale, y)
    ref = fits[1.0]
    # the fast route computes in float32 (the data scale too): iterates a float32
    # rounding apart, stopped by the same rule
    tol = dict(rtol=1e-6, atol=1e-9) if solver == "paper" else dict(rtol=0, atol=1e-2)
    for scale, est in fits.items():
        np.testing.assert_array_equal(est.predict(X * scale), ref.predict(X))
        np.testing.assert_allclose(est.predict_proba(X * scale), ref.predict_proba(X), **tol)
        if solver == "paper":
            # the factors are in the caller's units: U scales as 1 / scale, V does not
            np.testing.assert_allclose(est.spatial_ * scale, ref.spatial_, rtol=1e-5, atol=1e-9)
            np.testing.assert_allclose(est.temporal_, ref.temporal_, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(est.l1_penalty_max_, ref.l1_penalty_max_, rtol=1e-6)
    # the penalties act: the fit is not the unpenalised one
    free = SparseBilinearLogisticRegression(rank=2, solver=solver).fit(X, y)
    assert not np.allclose(free.predict_proba(X), ref.predict_proba(X), atol=1e-3)


def test_volts_learn_as_microvolts_do():
    # The toy: 16 epochs x 20 features, one channel carries the class.
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    X = rng.standard_normal((16, 20, 1)) * 10.0  # microvolts
    X[:, 3, 0] += 15.0 * (2 * y - 1)
    volts = SparseBilinearLogisticRegression(mu2=0.1, nu2=0.1).fit(X * 1e-6, y)
    micro = SparseBilinearLogisticRegression(mu2=0.1, nu2=0.1).fit(X, y)
    assert volts.score(X * 1e-6, y) == micro.score(X, y) == 1.0


def test_unit_rms_data_are_fitted_as_given():
    # calibration's scaled features: no copy, no change of the penalties
    X, y = _separable()
    X = X / np.sqrt(np.mean(X**2))
    est = SparseBilinearLogisticRegression(rank=1, mu2=0.1).fit(X, y)
    again = SparseBilinearLogisticRegression(rank=1, mu2=0.1).fit(X.copy(), y)
    np.testing.assert_array_equal(est.spatial_, again.spatial_)
    assert est._fit_scale == 1.0


@pytest.mark.parametrize("scale", [1e-6, 1e10, 1e30, 1e200])
def test_far_from_unit_scale_learns(scale):
    X, y = _separable()
    est = SparseBilinearLogisticRegression(rank=1).fit(X * scale, y)
    assert est.score(X * scale, y) == 1.0
    s = est.decision_function(X * scale)
    assert np.all(np.isfinite(s))


def test_paths_and_thresholds_standardise_like_the_estimator():
    X, y = _separable(2)
    point = dict(mu1=0.0, mu2=0.1, nu1=0.0, nu2=0.1)
    for scale in SCALES:
        Xs = X * scale
        ((path_est,),) = fit_penalty_paths(Xs, y, [[point]])
        # the paths make the paper's updates
        est = SparseBilinearLogisticRegression(**point, solver="paper").fit(Xs, y)
        np.testing.assert_allclose(est.spatial_, path_est.spatial_, rtol=1e-6, atol=1e-12 / scale)
        np.testing.assert_allclose(l1_penalty_max(Xs, y), l1_penalty_max(X, y), rtol=1e-9)
        np.testing.assert_allclose(est.l1_penalty_max_[0], l1_penalty_max(Xs, y), rtol=1e-9)


def test_a_warm_start_on_data_of_another_scale_starts_from_the_same_point():
    X, y = _noisy(1)
    X2, _ = _noisy(2)
    # exactly (the fast route's float32 copies of X2 and 1e-6 X2 differ by rounding)
    params = dict(rank=1, mu2=0.1, nu2=0.1, warm_start=True, solver="paper")
    a = SparseBilinearLogisticRegression(**params).fit(X, y)
    b = SparseBilinearLogisticRegression(**params).fit(X, y)
    a.fit(X2, y)
    b.fit(X2 * 1e-6, y)  # the last fit's U is mapped to this fit's scale
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(b.decision_function(X2 * 1e-6), a.decision_function(X2), rtol=1e-6)

"""Shared fitting steps: data far from unit scale are fitted rescaled, and said so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sblr_rt.model import DataScaleWarning, SparseBilinearLogisticRegression
from sblr_rt.model.path import fit_penalty_paths


def _separable(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 40)
    X = rng.standard_normal((80, 6, 10))
    X[:, 2, 3:7] += 0.8 * (2 * y - 1)[:, None]
    return X, y


def _fit(X, y, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SparseBilinearLogisticRegression(rank=1, **params).fit(X, y)
    return est, [w for w in caught if issubclass(w.category, DataScaleWarning)]


@pytest.mark.parametrize("scale", [1e-6, 1e10, 1e30, 1e200])
def test_far_from_unit_scale_is_rescaled_and_learns(scale):
    X, y = _separable()
    ref, none = _fit(X, y)
    assert not none and ref.score(X, y) == 1.0
    est, warned = _fit(X * scale, y)
    assert len(warned) == 1
    message = str(warned[0].message)
    assert "microvolts" in message and "RMS of 1.02e" in message
    assert est.score(X * scale, y) == 1.0
    assert est.score(X * scale, y) == ref.score(X, y)
    np.testing.assert_array_equal(est.predict(X * scale), ref.predict(X))
    # The factors are in the caller's units: the scores are those of a unit-scale fit.
    s = est.decision_function(X * scale)
    assert np.all(np.isfinite(s)) and np.all(np.sign(s) == np.sign(ref.decision_function(X)))


def test_unit_scale_data_are_fitted_as_given():
    X, y = _separable()
    est, warned = _fit(X, y)
    again, _ = _fit(X.copy(), y)
    assert not warned
    np.testing.assert_array_equal(est.spatial_, again.spatial_)


def test_rescaled_fit_is_the_same_objective():
    # On X * c with penalties (mu1 * c, mu2 * c**2) the problem is that of X with
    # (mu1, mu2), U / c: the fitted weights of a rescaled fit map exactly.
    X, y = _separable(1)
    c = 1e-6
    ref, _ = _fit(X / 1.0, y, mu1=0.0, mu2=0.0, nu2=0.01, tol=1e-10, max_iter=3000)
    est, warned = _fit(X * c, y, mu1=0.0, mu2=0.0, nu2=0.01, tol=1e-10, max_iter=3000)
    assert warned
    np.testing.assert_allclose(
        est.decision_function(X * c), ref.decision_function(X), rtol=0.05, atol=0.05
    )


def test_paths_rescale_like_the_estimator():
    X, y = _separable(2)
    Xv = X * 1e-6
    point = dict(mu1=0.0, mu2=0.0, nu1=0.0, nu2=0.0)
    with pytest.warns(DataScaleWarning):
        ((path_est,),) = fit_penalty_paths(Xv, y, [[point]])
    est, _ = _fit(Xv, y)
    np.testing.assert_allclose(est.spatial_, path_est.spatial_, rtol=1e-6, atol=1e-12)
    assert path_est.score(Xv, y) == 1.0

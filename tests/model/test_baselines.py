"""Baselines of the paper's tables: same API, correct solutions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.model.baselines import (
    BilinearLogisticRegression,
    SparseLogisticRegression,
    VectorizedLogisticRegression,
    fista_l1_logistic,
)


def _data(n=80, s=4, t=6, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, s, t))
    X[:, 0, :3] += 0.8 * (y[:, None] - (n_classes - 1) / 2)
    return X, y


def _l1_objective(Xf, y_pm, w, b, alpha):
    return np.logaddexp(0, -y_pm * (Xf @ w + b)).mean() + alpha * np.abs(w).sum()


def test_fista_matches_an_independent_l1_solver():
    X, y = _data()
    Xf = X.reshape(len(y), -1)
    y_pm = np.where(y == 1, 1.0, -1.0)
    alpha = 0.02
    w, b, _ = fista_l1_logistic(Xf, y_pm, alpha, tol=1e-12, max_iter=20000)
    p = Xf.shape[1]

    def fun(v):  # w = v+ - v-, both >= 0: smooth, bound-constrained
        wv = v[:p] - v[p : 2 * p]
        m = -y_pm * (Xf @ wv + v[-1])
        g = Xf.T @ (-y_pm / (1 + np.exp(-m)) / len(y))
        gb = (-y_pm / (1 + np.exp(-m)) / len(y)).sum()
        f = np.logaddexp(0, m).mean() + alpha * v[: 2 * p].sum()
        return f, np.concatenate([g + alpha, -g + alpha, [gb]])

    ref = minimize(
        fun,
        np.zeros(2 * p + 1),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * (2 * p) + [(None, None)],
        options={"gtol": 1e-13, "ftol": 0, "maxiter": 10000},
    )
    assert _l1_objective(Xf, y_pm, w, b, alpha) == pytest.approx(ref.fun, abs=1e-10)
    np.testing.assert_allclose(w, ref.x[:p] - ref.x[p : 2 * p], atol=1e-5)
    assert np.sum(w == 0) > p // 2  # sparse, with exact zeros


def test_sparse_logistic_regression_estimator():
    X, y = _data(n_classes=3, n=90)
    clf = SparseLogisticRegression(alpha=0.01).fit(X, y)
    assert clf.coef_.shape == (3, 24) and clf.decision_function(X).shape == (90, 3)
    assert clf.score(X, y) > 0.6
    lib = SparseLogisticRegression(alpha=0.01, solver="liblinear").fit(X, y)
    assert lib.coef_.shape == (3, 24)


def test_vectorized_logistic_regression_is_sklearn_on_vec_x():
    X, y = _data()
    clf = VectorizedLogisticRegression(alpha=0.1).fit(X, y)
    ref = LogisticRegression(C=1 / (0.1 * len(y)), tol=1e-6, max_iter=1000)
    ref.fit(X.reshape(len(y), -1), y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(
        clf.decision_function(X), ref.decision_function(X.reshape(len(y), -1)), atol=1e-5
    )


def test_bilinear_is_sblr_without_penalties():
    X, y = _data()
    a = BilinearLogisticRegression(rank=2).fit(X, y)
    b = SparseBilinearLogisticRegression(rank=2, solver="paper").fit(X, y)  # Algorithm 2
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert "mu1" not in a.get_params()


@pytest.mark.parametrize(
    "est",
    [VectorizedLogisticRegression(), SparseLogisticRegression(), BilinearLogisticRegression()],
)
def test_baselines_reject_bad_input(est):
    X, y = _data()
    with pytest.raises(ValueError, match="3-D array"):
        est.fit(X[..., None], y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.fit(X, np.zeros(len(y)))
    est.fit(X, y)
    with pytest.raises(ValueError, match="n_times=5, but"):
        est.predict(X[:, :, :5])

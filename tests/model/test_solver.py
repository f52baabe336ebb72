"""The solver does what the paper's Algorithm 2 promises, checked against references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from sblr_rt.model import ElasticNet, SparseBilinearLogisticRegression
from sblr_rt.model.datafit import Logistic, Multinomial
from sblr_rt.model.solver import bcpd, stationarity_residual, svd_init


def _data(n=60, s=5, t=7, n_classes=2, shift=0.4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, s, t))
    pattern = np.outer(rng.standard_normal(s), np.hanning(t))
    X += shift * (y[:, None, None] - (n_classes - 1) / 2) * pattern
    # at unit RMS the estimator fits the data as given: its objective is the one below
    return X / np.sqrt(np.mean(X**2)), y


def _objective(X, y_pm, U, V, b, mu1, mu2, nu1, nu2):
    f = np.einsum("nst,sr,tr->n", X, U, V) + b
    loss = np.logaddexp(0, -y_pm * f).mean()
    return (
        loss
        + mu1 * np.abs(U).sum()
        + mu2 / 2 * (U**2).sum()
        + nu1 * np.abs(V).sum()
        + nu2 / 2 * (V**2).sum()
    )


SETTINGS = [
    dict(rank=1),
    dict(rank=2, mu1=0.01, nu1=0.01, mu2=0.05, nu2=0.05),
    dict(rank=3, mu1=0.02, nu1=0.005),
    dict(rank=2, mu2=1.0, nu2=1.0, multi_class="multinomial"),
    dict(rank=1, mu1=0.01, multi_class="ovr"),
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("params", SETTINGS)
def test_objective_never_increases(params):
    n_classes = 3 if "multi_class" in params else 2
    X, y = _data(n_classes=n_classes)
    # Algorithm 2's descent (the fast route's float32 phase evaluates F in float32 products)
    clf = SparseBilinearLogisticRegression(tol=1e-7, max_iter=400, solver="paper", **params).fit(
        X, y
    )
    traces = clf.objective_ if isinstance(clf.objective_, list) else [clf.objective_]
    assert np.any(clf.spatial_), "collapsed to zero: the test would be vacuous"
    for F in traces:
        assert len(F) >= 3
        assert np.all(np.diff(F) <= 1e-13 * (1 + np.abs(F[:-1]))), np.diff(F).max()
        assert F[-1] < F[0]


def test_objective_trace_is_the_objective():
    X, y = _data()
    p = dict(mu1=0.01, mu2=0.2, nu1=0.02, nu2=0.1)
    clf = SparseBilinearLogisticRegression(rank=2, solver="paper", **p).fit(X, y)
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    F = _objective(X, y_pm, clf.spatial_, clf.temporal_, clf.intercept_[0], **p)
    assert clf.objective_[-1] == pytest.approx(F, rel=1e-12)
    U0, V0 = svd_init(X.mean(0), 2)
    assert clf.objective_[0] == pytest.approx(_objective(X, y_pm, U0, V0, 0.0, **p), rel=1e-12)
    assert len(clf.objective_) == clf.n_iter_ + 1


@pytest.mark.parametrize("multinomial", [False, True])
def test_stationarity_residual_is_small(multinomial):
    # Measure: dist(0, dF(U, V, b)), the norm of the minimum-norm subgradient (zero exactly
    # at a first-order stationary point); it must fall with the tolerance.
    X, y = _data(n_classes=3 if multinomial else 2)
    pen_u, pen_v = ElasticNet(0.01, 0.1), ElasticNet(0.005, 0.2)
    if multinomial:
        fit = Multinomial(np.eye(3)[y][:, 1:])
    else:
        fit = Logistic(np.where(y == 1, 1.0, -1.0))
    m = 2 if multinomial else 1
    U0, V0 = svd_init(X.mean(0), 2)
    start = (np.repeat(U0[None], m, 0), np.repeat(V0[None], m, 0), np.zeros(m))
    res0 = stationarity_residual(X, fit, *start, pen_u, pen_v)
    loose = bcpd(X, fit, *start, pen_u, pen_v, tol=1e-3)
    tight = bcpd(X, fit, *start, pen_u, pen_v, tol=1e-10, max_iter=5000)
    assert tight.converged
    r_loose = stationarity_residual(X, fit, loose.U, loose.V, loose.b, pen_u, pen_v)
    r_tight = stationarity_residual(X, fit, tight.U, tight.V, tight.b, pen_u, pen_v)
    assert r_tight < 1e-6 * max(res0, 1.0)
    assert r_tight < r_loose < res0


def test_smooth_case_matches_scipy_lbfgs():
    # l2 penalties only: F is smooth, so a quasi-Newton method on (U, V, b) from the same
    # SVD start is an independent reference.
    X, y = _data(n=50, s=4, t=5, seed=3)
    y_pm = np.where(y == 1, 1.0, -1.0)
    mu2, nu2, r = 0.3, 0.2, 2
    s, t = X.shape[1:]
    U0, V0 = svd_init(X.mean(0), r)

    def fun(w):
        U, V, b = w[: s * r].reshape(s, r), w[s * r : -1].reshape(t, r), w[-1]
        f = np.einsum("nst,sr,tr->n", X, U, V) + b
        sig = -y_pm / (1 + np.exp(y_pm * f)) / len(y)
        gU = np.einsum("n,nst,tr->sr", sig, X, V) + mu2 * U
        gV = np.einsum("n,nst,sr->tr", sig, X, U) + nu2 * V
        val = _objective(X, y_pm, U, V, b, 0, mu2, 0, nu2)
        return val, np.concatenate([gU.ravel(), gV.ravel(), [sig.sum()]])

    w0 = np.concatenate([U0.ravel(), V0.ravel(), [0.0]])
    ref = minimize(fun, w0, jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0})
    clf = SparseBilinearLogisticRegression(rank=r, mu2=mu2, nu2=nu2, tol=1e-10, max_iter=5000)
    clf.fit(X, y)
    assert clf.objective_[-1] == pytest.approx(ref.fun, abs=1e-9)
    W_ref = ref.x[: s * r].reshape(s, r) @ ref.x[s * r : -1].reshape(t, r).T
    np.testing.assert_allclose(clf.spatial_ @ clf.temporal_.T, W_ref, atol=1e-5)
    assert clf.intercept_[0] == pytest.approx(ref.x[-1], abs=1e-5)


def _solve_convex_block(F, y_pm, lam1, lam2):
    """min_(z, b) mean logistic(y (F z + b)) + lam1 |z|_1 + lam2/2 |z|^2 by L-BFGS-B.

    The l1 norm is made smooth by splitting z = p - q with p, q >= 0 (a different method
    from the solver's soft-thresholding).
    """
    n, p = F.shape

    def fun(w):
        zp, zq, b = w[:p], w[p : 2 * p], w[-1]
        z = zp - zq
        f = F @ z + b
        sig = -y_pm / (1 + np.exp(y_pm * f)) / n
        g = F.T @ sig + lam2 * z
        val = np.logaddexp(0, -y_pm * f).mean() + lam1 * (zp + zq).sum() + lam2 / 2 * z @ z
        return val, np.concatenate([g + lam1, -g + lam1, [sig.sum()]])

    bounds = [(0, None)] * (2 * p) + [(None, None)]
    res = minimize(
        fun,
        np.zeros(2 * p + 1),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"gtol": 1e-13, "ftol": 0, "maxiter": 10000},
    )
    return res.x[:p] - res.x[p : 2 * p], res.x[-1], res.fun


def test_l1_solution_solves_both_convex_blocks():
    # At a stationary point of the biconvex problem each block is the exact minimiser of its
    # convex subproblem; brute-force those subproblems with an independent solver.
    X, y = _data(n=80, s=6, t=8, shift=0.8, seed=4)
    y_pm = np.where(y == 1, 1.0, -1.0)
    p = dict(mu1=0.02, mu2=0.05, nu1=0.01, nu2=0.1)
    clf = SparseBilinearLogisticRegression(rank=2, tol=1e-11, max_iter=20000, **p).fit(X, y)
    U, V, b = clf.spatial_, clf.temporal_, clf.intercept_[0]
    assert np.any(U == 0) and np.any(V == 0), "expected exact zeros from the l1 penalties"
    XV = np.einsum("nst,tr->nsr", X, V).reshape(len(y), -1)
    z, b_ref, F_u = _solve_convex_block(XV, y_pm, p["mu1"], p["mu2"])
    np.testing.assert_allclose(U.ravel(), z, atol=1e-5)
    assert b == pytest.approx(b_ref, abs=1e-5)
    XU = np.einsum("nst,sr->ntr", X, U).reshape(len(y), -1)
    z, b_ref, _ = _solve_convex_block(XU, y_pm, p["nu1"], p["nu2"])
    np.testing.assert_allclose(V.ravel(), z, atol=1e-5)
    pen_other = p["nu1"] * np.abs(V).sum() + p["nu2"] / 2 * (V**2).sum()
    assert clf.objective_[-1] == pytest.approx(F_u + pen_other, abs=1e-9)


def test_full_rank_unregularised_reaches_plain_logistic_regression():
    rng = np.random.default_rng(5)
    n, s, t = 300, 3, 4
    X = rng.standard_normal((n, s, t))
    y = X.reshape(n, -1) @ rng.standard_normal(s * t) + 2 * rng.standard_normal(n) > 0
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(X.reshape(n, -1), y)
    y_pm = np.where(y, 1.0, -1.0)
    f = X.reshape(n, -1) @ lr.coef_[0] + lr.intercept_[0]
    lr_loss = np.logaddexp(0, -y_pm * f).mean()
    clf = SparseBilinearLogisticRegression(rank=min(s, t), tol=1e-10, max_iter=5000).fit(X, y)
    assert clf.objective_[-1] == pytest.approx(lr_loss, abs=1e-10)
    W = clf.spatial_ @ clf.temporal_.T
    np.testing.assert_allclose(W.ravel(), lr.coef_[0], atol=1e-4)
    # With rank 1 the bilinear model is more constrained: its loss cannot be lower.
    low = SparseBilinearLogisticRegression(rank=1, tol=1e-10, max_iter=5000).fit(X, y)
    assert low.objective_[-1] >= lr_loss - 1e-12


def test_float32_input_is_not_upcast_and_agrees_with_float64():
    X, y = _data(n=80, s=10, t=12, shift=1.0, seed=6)
    # the paper's route runs float32 input as it is (the fast one runs float64 input in
    # float32 first, then finishes in float64)
    p = dict(rank=2, mu1=0.01, nu1=0.01, mu2=0.05, nu2=0.05, solver="paper")
    c64 = SparseBilinearLogisticRegression(**p).fit(X, y)
    X32 = X.astype(np.float32)
    c32 = SparseBilinearLogisticRegression(**p).fit(X32, y)
    assert np.any(c64.spatial_) and c32.n_iter_ == c64.n_iter_
    np.testing.assert_allclose(c32.objective_, c64.objective_, rtol=1e-5)
    np.testing.assert_allclose(c32.decision_function(X32), c64.decision_function(X), atol=1e-4)
    assert c32.decision_function(X32).dtype == np.float64
    assert c32.spatial_.dtype == np.float64


def test_step_size_rule_may_shrink_and_respects_L_min():
    X, y = _data(seed=7)
    fit = Logistic(np.where(y == 1, 1.0, -1.0))
    U0, V0 = svd_init(X.mean(0), 1)
    pen = ElasticNet(0.0, 0.0)
    big = bcpd(
        X, fit, U0[None], V0[None], np.zeros(1), pen, pen, L_u0=1e6, L_v0=1e6, max_iter=3, tol=0
    )
    # From L = 1e6 the rule allows n = -1 per iteration: after 3 iterations L = 1e6 / 8.
    assert big.L_u == pytest.approx(1e6 / 8)
    low = bcpd(X, fit, U0[None], V0[None], np.zeros(1), pen, pen, L_min=50.0, max_iter=5)
    assert low.L_u >= 50.0 and low.L_v >= 50.0


@pytest.mark.parametrize("compiled", [False, True])
def test_block_takes_the_first_passing_trial_as_one_by_one(compiled):
    # _block evaluates several step trials per round (the compiled kernel one by one); each
    # run must accept the first n >= -1 whose step passes and count the distinct trials,
    # as trying them one by one.
    from scipy.special import expit

    from sblr_rt.model.penalties import ElasticNet, elastic_net_prox
    from sblr_rt.model.solver import _block, _block_compiled

    block = _block_compiled if compiled else _block

    rng = np.random.default_rng(5)
    n, p, K = 30, 12, 6
    A = rng.standard_normal((K, 1, n, p)) * np.array([0.1, 1, 3, 10, 30, 100])[:, None, None, None]
    Z, b = rng.standard_normal((K, 1, p)), rng.standard_normal((K, 1))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    l1, l2 = np.full(K, 0.01), np.full(K, 0.1)
    L_min, eta = 1e-4, 2.0
    L_prev = np.array([L_min, L_min, 1.5 * L_min, 1.0, 1e3, 1e-2])
    fit = Logistic(y)
    Z_new, b_new, L, loss, _, trials = block(fit, ElasticNet(l1, l2), A, Z, b, L_prev, eta, L_min)
    for k in range(K):
        f0 = A[k, 0] @ Z[k, 0] + b[k, 0]
        loss0 = np.mean(np.logaddexp(0, -y * f0))
        g = -y * expit(-y * f0) / n
        G, gb = g @ A[k, 0], g.sum()
        tried, last = 0, None
        for e in range(-1, 200):
            Lk = max(L_min, L_prev[k] * eta**e)
            if Lk == last:
                continue
            last, tried = Lk, tried + 1
            Zt = elastic_net_prox(Z[k, 0], G, Lk, l1[k], l2[k])
            bt = b[k, 0] - gb / Lk
            ft = A[k, 0] @ Zt + bt
            d2 = np.sum((Zt - Z[k, 0]) ** 2) + (bt - b[k, 0]) ** 2
            lin = loss0 + G @ (Zt - Z[k, 0]) + gb * (bt - b[k, 0])
            if np.mean(np.logaddexp(0, -y * ft)) <= lin + 0.5 * Lk * d2 + 1e-12:
                break
        assert L[k] == Lk and trials[k] == tried, k
        np.testing.assert_allclose(Z_new[k, 0], Zt, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b_new[k, 0], bt, rtol=1e-12)
        np.testing.assert_allclose(loss[k], np.mean(np.logaddexp(0, -y * ft)), rtol=1e-12)
    assert trials.max() > 3  # some runs needed more than one round of trials

"""Soft-thresholding, the elastic-net prox step and the datafits are exact."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from sblr_rt.model import ElasticNet, soft_threshold
from sblr_rt.model.datafit import Logistic, Multinomial


def test_soft_threshold_known_values():
    z = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(soft_threshold(z, 1.0), [-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(soft_threshold(z, 0.0), z)
    assert soft_threshold(z, 0.0) is not z


def test_soft_threshold_equals_the_textbook_form_bit_for_bit():
    # The solver's iterates depend on every bit: the clipped form must give exactly
    # sign(z) max(|z| - tau, 0), per run thresholds, edges and infinities included.
    rng = np.random.default_rng(1)
    z = rng.standard_normal((4, 3, 50)) * 10.0 ** rng.integers(-8, 3, (4, 3, 50))
    tau = np.array([1e-9, 0.3, 2.0, 7.5])[:, None, None]
    z[:, 0, 0], z[:, 0, 1] = tau[:, 0, 0], -tau[:, 0, 0]
    z[:, 0, 2], z[:, 0, 3] = np.inf, -np.inf
    want = np.sign(z) * np.maximum(np.abs(z) - tau, 0.0)
    got = soft_threshold(z, tau)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(got == 0, np.abs(z) <= tau)


@pytest.mark.parametrize(("l1", "l2", "L"), [(0.0, 0.0, 1.0), (0.3, 0.0, 2.0), (0.2, 1.5, 0.7)])
def test_prox_step_is_the_exact_minimiser(l1, l2, L):
    rng = np.random.default_rng(0)
    z0 = rng.standard_normal(25)
    grad = rng.standard_normal(25)
    pen = ElasticNet(l1, l2)
    z = pen.prox_step(z0, grad, L)
    for j in range(z0.size):

        def obj(x, j=j):
            return (
                grad[j] * (x - z0[j]) + 0.5 * L * (x - z0[j]) ** 2 + l1 * abs(x) + 0.5 * l2 * x**2
            )

        # The problem separates: a numerical 1-D minimiser agrees, and none does better.
        res = minimize_scalar(obj, bounds=(-50, 50), method="bounded", options={"xatol": 1e-10})
        assert z[j] == pytest.approx(res.x, abs=1e-6)
        assert obj(z[j]) <= obj(res.x) + 1e-15
        assert obj(z[j]) <= min(obj(z[j] - 1e-7), obj(z[j] + 1e-7))
    # Exact zeros where the closed form says so, not just small values.
    tau = l1 / (L + l2)
    assert np.all((z == 0) == (np.abs((L * z0 - grad) / (L + l2)) <= tau))


def test_elastic_net_value_and_residual():
    pen = ElasticNet(0.5, 2.0)
    z = np.array([[1.0, -2.0], [0.0, 0.5]])
    assert pen.value(z) == pytest.approx(0.5 * 3.5 + 0.5 * 2.0 * 5.25)
    # At a zero entry the residual is the excess of |grad| over l1; elsewhere the gradient.
    res = pen.subgradient_residual(np.array([0.0, 0.0, 1.0]), np.array([0.3, -0.8, -2.5]))
    np.testing.assert_allclose(res, [0.0, 0.3, -2.5 + 2.0 + 0.5])


@pytest.mark.parametrize("step", [1e-9, 1e-4, 0.3, 5.0])
def test_bregman_divergences_match_direct_difference(step):
    rng = np.random.default_rng(1)
    n = 40
    f0 = rng.standard_normal((n, 1)) * 3
    f1 = f0 + step * rng.standard_normal((n, 1))
    fit = Logistic(np.where(rng.random(n) > 0.5, 1.0, -1.0))
    loss0, grad, cache = fit.loss_grad(f0)
    direct = fit.loss(f1) - loss0 - float(np.vdot(grad, f1 - f0))
    assert fit.bregman(cache, f1) == pytest.approx(direct, rel=1e-6, abs=1e-15)
    assert fit.bregman(cache, f1) >= 0
    y = np.eye(3)[rng.integers(0, 3, n)][:, 1:]
    g0 = rng.standard_normal((n, 2))
    g1 = g0 + step * rng.standard_normal((n, 2))
    mfit = Multinomial(y)
    loss0, grad, cache = mfit.loss_grad(g0)
    direct = mfit.loss(g1) - loss0 - float(np.vdot(grad, g1 - g0))
    assert mfit.bregman(cache, g1) == pytest.approx(direct, rel=1e-6, abs=1e-15)


def test_multinomial_gradient_by_finite_differences():
    rng = np.random.default_rng(2)
    n = 10
    y = np.eye(4)[rng.integers(0, 4, n)][:, 1:]
    fit = Multinomial(y)
    f = rng.standard_normal((n, 3))
    _, grad, _ = fit.loss_grad(f)
    eps = 1e-6
    num = np.zeros_like(f)
    for idx in np.ndindex(f.shape):
        e = np.zeros_like(f)
        e[idx] = eps
        num[idx] = (fit.loss(f + e) - fit.loss(f - e)) / (2 * eps)
    np.testing.assert_allclose(grad, num, atol=1e-8)

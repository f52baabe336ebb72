"""Datafits: the Bregman divergences stay quiet and finite at saturated scores."""

from __future__ import annotations

import warnings

import numpy as np

from sblr_rt.model.datafit import Logistic, Multinomial


def test_multinomial_bregman_saturated_scores_warn_nothing():
    # A free class at probability 1 to rounding, then a step that sends its score far
    # down: the discarded small-step branch evaluates log1p(-1).
    df = Multinomial(np.array([[1.0], [0.0]]))
    _, _, cache = df.loss_grad(np.array([[50.0], [50.0]]))
    new = np.array([[-50.0], [-50.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = df.bregman(cache, new)
    direct = df.loss(new) - df.loss(np.array([[50.0], [50.0]]))
    grad = df.loss_grad(np.array([[50.0], [50.0]]))[1]
    expected = direct - float(np.sum(grad * (new - 50.0)))
    assert np.isfinite(d)
    np.testing.assert_allclose(d, expected, rtol=1e-12)


def test_logistic_bregman_saturated_scores_warn_nothing():
    df = Logistic(np.array([1.0, -1.0]))
    _, _, cache = df.loss_grad(np.array([[-50.0], [50.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = df.bregman(cache, np.array([[50.0], [-50.0]]))
    assert np.isfinite(d) and d >= 0

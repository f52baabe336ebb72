"""The fast (mixed-precision) route against the paper's Algorithm 2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sblr_rt.model import SparseBilinearLogisticRegression, ZeroTrapWarning
from sblr_rt.model.factors import spatial_patterns

PEN = dict(mu1=0.01, nu1=0.01, mu2=0.5, nu2=0.5)


def _bci(n=80, s=30, t=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    ch = np.arange(s)
    spatial = np.exp(-0.5 * ((ch - s / 3) / 3) ** 2) - np.exp(-0.5 * ((ch - 2 * s / 3) / 3) ** 2)
    X = rng.standard_normal((n, s, t))
    X += 0.3 * (2 * y - 1)[:, None, None] * np.outer(spatial, np.hanning(t))
    return _unit_rms(X), y


def _unit_rms(X):
    # data at unit RMS are fitted as given (no standardisation): the solver's own numbers
    return X / np.sqrt(np.mean(X**2))


def _fixed_case():
    rng = np.random.default_rng(3)
    y = np.arange(40) % 2
    shape = np.outer(np.linspace(-1, 1, 6), np.hanning(8))
    X = rng.standard_normal((40, 6, 8)) + 0.5 * (2 * y - 1)[:, None, None] * shape
    return _unit_rms(X), y


def test_paper_route_iterates_unchanged():
    # The objective trace of the paper's Algorithm 2 on a fixed case at unit RMS, recorded
    # before the fast route and the standardisation existed: the default route must keep
    # making exactly these iterations.
    X, y = _fixed_case()
    clf = SparseBilinearLogisticRegression(
        rank=2, mu1=0.02, nu1=0.01, mu2=0.1, nu2=0.1, solver="paper"
    ).fit(X, y)
    ref = [
        1.33028206844, 0.554544312787, 0.419782707944, 0.397875544908, 0.391359285741,
        0.38403368205, 0.379527562053, 0.379435994911, 0.37942460776, 0.379422090341,
        0.379421446708,
    ]  # fmt: skip
    assert clf.n_iter_ == 10
    np.testing.assert_allclose(clf.objective_, ref, rtol=1e-10)
    np.testing.assert_allclose(clf.intercept_, [-0.04901389], rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("pen", [PEN, dict(mu1=0.05, nu1=0.02)])
def test_fast_route_objective_not_above_paper(seed, pen):
    X, y = _bci(seed=seed)
    paper = SparseBilinearLogisticRegression(rank=1, solver="paper", **pen).fit(X, y)
    fast = SparseBilinearLogisticRegression(rank=1, solver="fast", **pen).fit(X, y)
    assert fast._solutions[0].converged
    # The float64 stopping rule held at the end: the last q^k is the float64 one.
    assert fast._solutions[0].q[-1] <= fast.tol
    assert fast.objective_[-1] <= paper.objective_[-1] + 1e-12
    assert fast.objective_.shape == (fast.n_iter_ + 1,)
    np.testing.assert_array_equal(fast.predict(X), paper.predict(X))


def test_fast_route_objective_is_float64_value():
    # The reported final objective is F at the returned factors, evaluated on the float64 data.
    X, y = _bci(seed=5)
    clf = SparseBilinearLogisticRegression(rank=2, solver="fast", **PEN).fit(X, y)
    f = clf.decision_function(X)
    loss = np.mean(np.logaddexp(0.0, -(2 * y - 1) * f))
    U, V = clf.spatial_, clf.temporal_
    pen = 0.01 * (np.abs(U).sum() + np.abs(V).sum()) + 0.25 * ((U**2).sum() + (V**2).sum())
    np.testing.assert_allclose(clf.objective_[-1], loss + pen, rtol=1e-12)


def test_float32_input_fast_makes_the_paper_steps():
    # float32 input: the paper's iterations, with the compiled block update (the same
    # steps; sums in another order)
    X, y = _bci(seed=1)
    X32 = X.astype(np.float32)
    paper = SparseBilinearLogisticRegression(rank=1, solver="paper", **PEN).fit(X32, y)
    fast = SparseBilinearLogisticRegression(rank=1, solver="fast", **PEN).fit(X32, y)
    assert fast.n_iter_ == paper.n_iter_ and np.any(fast.spatial_)
    assert fast._solutions[0].n_trials == paper._solutions[0].n_trials
    np.testing.assert_allclose(fast.objective_, paper.objective_, rtol=1e-12)
    np.testing.assert_allclose(fast.spatial_, paper.spatial_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast.spatial_patterns_, paper.spatial_patterns_, rtol=1e-5)


@pytest.mark.parametrize("unit", [1.0, 1e-6])
def test_fast_route_patterns_match_float64(unit):
    # Patterns from the float32 copy, back in the caller's units (volts included).
    X, y = _bci(seed=2)
    X = X * unit
    clf = SparseBilinearLogisticRegression(rank=2, solver="fast", **PEN).fit(X, y)
    ref = spatial_patterns(X, clf.spatial_, clf.temporal_)
    np.testing.assert_allclose(
        clf.spatial_patterns_, ref, rtol=1e-4, atol=1e-6 * np.abs(ref).max()
    )


def test_fast_route_multiclass_and_warm_start():
    X, _ = _bci(n=90, seed=4)
    y = np.arange(90) % 3
    X[y == 2] += 0.2 * np.hanning(X.shape[2])
    for k in (0, 1):  # every class has a pattern of its own, so no one-vs-rest model is empty
        X[y == k, 3 * k] += 0.5 * np.hanning(X.shape[2])
    for multi_class in ("ovr", "multinomial"):
        paper = SparseBilinearLogisticRegression(
            rank=1, multi_class=multi_class, solver="paper", **PEN
        ).fit(X, y)
        fast = SparseBilinearLogisticRegression(
            rank=1, multi_class=multi_class, solver="fast", **PEN
        ).fit(X, y)
        objectives = [paper.objective_, fast.objective_]
        if multi_class == "multinomial":
            objectives = [[o] for o in objectives]
        f_paper, f_fast = ([o[-1] for o in obj] for obj in objectives)
        assert np.all(np.array(f_fast) <= np.array(f_paper) + 1e-12)
    # warm start, on a binary problem that has something to learn (class 2 against the rest)
    binary = (y == 2).astype(int)
    clf = SparseBilinearLogisticRegression(rank=1, solver="fast", warm_start=True, **PEN)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroTrapWarning)  # a collapsed model fails the test
        clf.fit(X, binary)
        first = clf.objective_[-1]
        clf.fit(X, binary)
    assert clf.objective_[-1] <= first + 1e-12
    assert np.any(clf.spatial_) and np.mean(clf.predict(X) == binary) > 0.8


def test_fast_route_data_beyond_float32_range():
    # Entries beyond float32's range are standardised first (exact scale), then converted.
    X, y = _bci(seed=6)
    X *= 1e40
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fast = SparseBilinearLogisticRegression(rank=1, solver="fast", **PEN).fit(X, y)
        paper = SparseBilinearLogisticRegression(rank=1, solver="paper", **PEN).fit(X, y)
    assert np.all(np.isfinite(fast.spatial_)) and np.any(fast.spatial_)
    assert fast.objective_[-1] <= paper.objective_[-1] + 1e-12
    np.testing.assert_allclose(fast.predict_proba(X), paper.predict_proba(X), atol=1e-3)


def test_fast_route_reaches_paper_stationary_point_l1():
    # A non-convex l1 case where a different step-search rule in the float32 phase
    # (skipping the L/eta probe) ended at a worse stationary point (F higher by 3e-3).
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 60)
    ch = np.arange(60)
    spatial = np.exp(-0.5 * ((ch - 40) / 6.0) ** 2) - np.exp(-0.5 * ((ch - 80) / 6.0) ** 2)
    X = rng.standard_normal((120, 60, 50))
    X += (
        0.15
        * (2 * y - 1)[:, None, None]
        * np.outer(spatial, np.sin(np.linspace(0, np.pi, 50)) ** 2)
    )
    pen = dict(mu1=0.02, nu1=0.02)
    paper = SparseBilinearLogisticRegression(solver="paper", **pen).fit(X, y)
    fast = SparseBilinearLogisticRegression(solver="fast", **pen).fit(X, y)
    assert fast.objective_[-1] <= paper.objective_[-1] + 1e-12


def test_fast_route_follows_the_paper_out_of_the_zero_trap():
    # The paper's Table 1 problem (s = t = 50, the third data set of benchmarks/solver.py,
    # l2-dominated, the paper's start) on which a start of the step parameters at the
    # loss's curvature took the first step to zero factors (F = log 2 against 0.519).
    rng = np.random.default_rng(0)
    y = np.repeat([1, -1], 50)
    for _ in range(3):
        X = rng.standard_normal((100, 50, 50)) + y[:, None, None]
    pen = dict(mu1=0.1, nu1=0.1, mu2=1.0, nu2=1.0)
    paper = SparseBilinearLogisticRegression(solver="paper", **pen).fit(X, y)
    fast = SparseBilinearLogisticRegression(solver="fast", **pen).fit(X, y)
    assert np.any(fast.spatial_) and np.any(fast.temporal_)
    assert fast.objective_[-1] <= paper.objective_[-1] + 1e-12

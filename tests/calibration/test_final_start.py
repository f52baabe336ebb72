"""The final fit's second start: a warm path stuck in a poor minimum gives way to a cold fit."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration.config import CalibrationConfig
from sblr_rt.calibration.search import run_path
from sblr_rt.calibration.selection import penalty_grid

from sblr_rt.preprocessing import apply_scaling, fit_scaling


def _paper_scale(seed, n=210):
    # benchmarks/calibration.py's data: a rank-one class difference in Gaussian noise
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    u = np.zeros(118)
    u[[30, 50, 51, 55]] = [1.0, 0.8, -0.6, 0.5]
    v = np.sin(np.linspace(0, np.pi, 100)) * np.exp(-np.linspace(0, 2, 100))
    X = rng.standard_normal((n, 118, 100))
    X += 0.35 * (2 * y - 1)[:, None, None] * np.outer(u, v)[None]
    return X, y


@pytest.fixture(scope="module")
def stuck_path():
    """Seed 15 and the path of l2 pair (0.1, 0.1) up to (0.2, 0.05), the CV's choice there."""
    config = CalibrationConfig()
    X, y = _paper_scale(15)
    scaling = fit_scaling(X, config.preprocessing.scaling, center=False)
    Z = apply_scaling(X, *scaling).astype(np.float32)
    groups = penalty_grid(
        "fast", config.selection.l1_fractions, config.selection.l2_values, skip_unbounded=True
    )
    pair, path = next(g for g in groups if g[0] == (0.1, 0.1))
    params = {
        "multi_class": "ovr",
        "max_iter": config.selection.max_iter,
        "tol": config.selection.tol,
    }
    return Z, y, pair, path, path.index((0.2, 0.05)), params, scaling


def test_a_path_stuck_in_a_poor_minimum_gives_way_to_the_cold_fit(stuck_path):
    Z, y, pair, path, stop, params, scaling = stuck_path
    along, _, first = run_path(Z, y, 1, pair, path, params, stop=stop, second_start=False)
    kept, _, start = run_path(Z, y, 1, pair, path, params, stop=stop)
    assert first == {
        "start": "path", "path_objective": first["path_objective"], "cold_objective": None
    }  # fmt: skip
    assert start["start"] == "cold"
    assert start["path_objective"] == pytest.approx(first["path_objective"])
    assert start["cold_objective"] < 0.9 * start["path_objective"]
    # the kept model found the class difference (channel 30 carries most of it); the
    # path's did not
    assert kept.spatial_.ravel()[30] != 0 and along.spatial_.ravel()[30] == 0
    X_new, y_new = _paper_scale(115, n=400)
    X_new = apply_scaling(X_new, *scaling)
    assert np.mean(kept.predict(X_new) == y_new) > np.mean(along.predict(X_new) == y_new) + 0.2
    assert kept.warm_start and (kept.mu1, kept.nu1) == (along.mu1, along.nu1)


def test_a_point_reached_cold_needs_no_second_start(stuck_path):
    Z, y, pair, path, _, params, _ = stuck_path
    _, _, start = run_path(Z[:60], y[:60], 1, pair, path, params, stop=0)
    assert start["start"] == "path" and start["cold_objective"] is None

"""Racing in the fixed paths' penalty search (``race_margin``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sblr_rt.calibration import search, selection
from sblr_rt.calibration.config import CalibrationConfig


def _clear_problem(n=90, s=12, t=15, seed=0):
    """A rank-one class difference that a few grid points separate well and most do not."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    u = np.zeros(s)
    u[[2, 5]] = [1.0, -0.7]
    v = np.sin(np.linspace(0, np.pi, t))
    X = rng.standard_normal((n, s, t))
    X += 0.45 * (2 * y - 1)[:, None, None] * np.outer(u, v)[None]
    return X, y


def _points(report):
    """The penalty grid's points of the one candidate (the fixed path)."""
    return report["candidates"][0]["points"]


def _select(X, y, **changes):
    config = CalibrationConfig(features="waveform", cv=3, ranks=(1,), n_jobs=1, **changes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return selection.select(X, y, config=config, center=False)


def test_racing_keeps_the_point_the_full_search_chooses():
    X, y = _clear_problem()
    full, full_report, _ = _select(X, y, race_margin=None)
    raced, raced_report, _ = _select(X, y, race_margin=0.1)
    assert sum(p["raced"] for p in _points(full_report)) == 0
    assert sum(p["raced"] for p in _points(raced_report)) > 0  # it raced some points
    point = ("rank", "mu1_fraction", "mu2", "nu1_fraction", "nu2", "accuracy")
    assert [raced_report["best"][k] for k in point] == [full_report["best"][k] for k in point]
    # the chosen point is refitted the same way: the same model
    np.testing.assert_array_equal(raced.spatial_, full.spatial_)
    np.testing.assert_array_equal(raced.temporal_, full.temporal_)
    assert raced.n_iter_ == full.n_iter_


def test_raced_search_points_stop_early_and_the_final_fit_runs_at_tol(monkeypatch):
    X, y = _clear_problem()
    seen, task = [], search._task

    def spy(*args):
        fit = args[5]  # FoldSettings
        seen.append((fit.est_params["tol"], fit.race))
        return task(*args)

    monkeypatch.setattr(search, "_task", spy)
    est, report, _ = _select(X, y, race_margin=0.1, search_tol=5e-3)
    assert {tol for tol, _ in seen} == {5e-3}
    # (race_margin, race_min_test) in the grid step; the rank step does not race
    assert {race for _, race in seen} == {(0.1, 20)}
    assert est.tol == 1e-3 and est.max_iter == 500
    assert report["candidates"][0]["n_fitted_points"] == len(
        [p for p in _points(report) if not p["unbounded"]]
    )


def test_a_raced_point_scores_its_iterate_below_the_best_finished():
    X, y = _clear_problem()
    rows = [dict(p) for p in _points(_select(X, y, race_margin=0.1)[1])]
    raced = [p for p in rows if p["raced"]]
    assert raced and max(p["accuracy"] for p in raced) < max(p["accuracy"] for p in rows)


@pytest.mark.parametrize("value", [0.0, 1.0, -0.1])
def test_race_margin_must_lie_in_zero_one(value):
    with pytest.raises(ValueError, match=r"'race_margin' must lie in \(0, 1\) or be None, got"):
        CalibrationConfig(race_margin=value)


def test_folds_with_fewer_than_race_min_test_test_epochs_do_not_race():
    X, y = _clear_problem()  # 3-fold CV: 30 test epochs per fold
    _, full, _ = _select(X, y, race_margin=None)
    _, small, _ = _select(X, y, race_margin=0.1, race_min_test=31)
    assert sum(p["raced"] for p in _points(small)) == 0
    assert [p["accuracy"] for p in _points(small)] == [p["accuracy"] for p in _points(full)]
    assert CalibrationConfig().selection.race_margin is None  # racing is off by default

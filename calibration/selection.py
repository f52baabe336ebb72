"""Hyper-parameter selection by cross-validation, as in the paper's experiments.

1. **Rank**: every rank of ``ranks`` with zero penalties; the best mean CV accuracy
   wins (ties: the smaller rank).
2. **Penalties** at that rank, over a grid of (mu1, mu2, nu1, nu2):

   - ``search="paper"``: the paper's full 6 x 5 x 6 x 5 grid: mu1, nu1 from
     ``l1_fractions`` (6 values) and mu2, nu2 from ``l2_values`` (5 values).
   - ``search="fast"`` (default): 6 x 6 x 5 points with ``mu2 = nu2``. Rescaling
     ``U -> U / c, V -> c V`` maps the problem with penalties (mu1, mu2, nu1, nu2) onto
     (mu1 c, mu2 c^2, nu1 / c, nu2 / c^2) with the same solutions up to that rescaling, so
     any grid point with both l2 penalties positive is equivalent to one with equal l2
     penalties ``sqrt(mu2 nu2)`` (and l1 penalties rescaled by ``c``): one of the four
     penalties is redundant. Points where exactly one l2 penalty is zero are not
     covered; use ``"paper"`` for those.
   - ``search="none"``: no penalties (the rank step only).

   **Unbounded points.** Where one factor carries no penalty at all (``mu1 = mu2 = 0``
   or ``nu1 = nu2 = 0``) the same rescaling drives the other factor's penalty to zero:
   the objective at ``(c U, V / c)`` tends to the unpenalised loss as ``c`` grows, so the
   problem has the unpenalised infimum and no minimiser, and the solver only drifts for
   ``max_iter`` iterations. Those grid points (59 of the paper's 900, 11 of the fast
   180) are therefore not fitted again: they are reported with the score of the
   all-zero point (which is fitted), flagged ``"unbounded": true``, unless
   ``skip_unbounded=False`` asks for the brute-force grid. This removes most of the
   search time (the other points converge in tens of iterations).

   The l1 values are *fractions* of the largest useful penalty of each training fold
   (:func:`sblr_rt.model.l1_penalty_max`, the loss gradient's sup-norm at the start), so
   no grid point is a model collapsed to zero from the start, whatever the data's scale.

The procedure is a search plan for the selection engine (:mod:`.search`): one candidate
(the configured feature path), the :class:`~.criteria.Accuracy` criterion (mean test
accuracy over the folds; ties go to the most regularised point), stratified k-fold (shuffled
with a seed) or leave-one-out CV, scaling fitted on each training fold only. Along the path
of one l2 pair the (mu1, nu1) points are visited in snake order from the largest
penalties down with warm starts (a model that collapsed to zero is restarted cold); the
final model replays the chosen path on all epochs with the estimator
(:func:`~.search.run_path`), so it is the same computation that was cross-validated.

**Racing** (``race_margin``, off by default): every
:data:`~.search.RACE_EVERY` iterations of a grid point, the point is ended where it is when
its test accuracy on the fold is more than ``race_margin`` below the best point already
finished on that fold; its path goes on from that iterate and the report counts it as
``"raced"``. Only folds of at least ``race_min_test`` test epochs race. The final model
replays the chosen path at ``tol`` without racing (measurements: docs/benchmarks.md,
"Calibration search").

**Large folds** (``large_fold``, a million values per training fold, as at the paper's
(210, 118, 100)): the cross-validated fits stop at ``large_search_tol`` and the final fit
reads float32 epochs; it still replays the chosen path at ``tol`` (see
:meth:`~sblr_rt.calibration.concerns.SelectionSettings.cv_tol_for`).

Parallelism goes through :mod:`joblib` only. To run the same search on a cluster, wrap
the call in a joblib backend::

    from joblib import parallel_config
    from dask.distributed import Client          # or: import ray; from ray.util.joblib
    client = Client("scheduler:8786")            #     import register_ray; register_ray()
    with parallel_config(backend="dask"):        # backend="ray"
        model = calibrate(recordings, config=config)

The estimator also works inside scikit-learn's ``GridSearchCV``; :func:`paper_param_grid`
builds the same grid as a ``param_grid`` (without warm starts)::

    mu1_max, nu1_max = l1_penalty_max(X, y, rank=1)
    GridSearchCV(SparseBilinearLogisticRegression(rank=1),
                 paper_param_grid(mu1_max, nu1_max), cv=StratifiedKFold(5)).fit(X, y)
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import time

import numpy as np
from joblib import effective_n_jobs
from sblr_rt.calibration.criteria import CRITERIA
from sblr_rt.calibration.search import (
    Candidate,
    FoldSettings,
    Stage,
    candidate_report,
    chosen,
    cross_validate,
    fit_point,
    make_splits,
    report_row,
    search_report,
    summarise,
)

from sblr_rt.preprocessing import apply_scaling, fit_scaling

logger = logging.getLogger("sblr_rt.calibration")

__all__ = [
    "is_unbounded",
    "paper_param_grid",
    "penalty_grid",
    "select",
]


def is_unbounded(mu1, mu2, nu1, nu2) -> bool:
    """Whether one factor is unpenalised while the other is not (no minimiser exists).

    Parameters
    ----------
    mu1, mu2, nu1, nu2 : float
        Penalties (or l1 fractions in place of mu1, nu1).

    Returns
    -------
    unbounded : bool
        True when exactly one of the factors has both penalties zero.
    """
    u_free = mu1 == 0 and mu2 == 0
    v_free = nu1 == 0 and nu2 == 0
    return u_free != v_free


def penalty_grid(
    search: str, l1_fractions, l2_values, *, skip_unbounded: bool = False
) -> list[tuple[tuple, list[tuple]]]:
    """Grid of penalties grouped for warm starts.

    Parameters
    ----------
    search : {"paper", "fast", "none"}
        See the module documentation.
    l1_fractions : sequence of float
        mu1 and nu1 as fractions of the fold's largest useful penalty.
    l2_values : sequence of float
        mu2 and nu2 values.
    skip_unbounded : bool
        Leave out the points where exactly one factor is unpenalised (see
        :func:`is_unbounded`).

    Returns
    -------
    groups : list of ((mu2, nu2), [(mu1_fraction, nu1_fraction), ...])
        One group per l2 pair; its l1 pairs in warm-start (snake) order, from the largest
        penalties down.
    """
    if search == "none":
        return [((0.0, 0.0), [(0.0, 0.0)])]
    l1 = sorted(set(l1_fractions), reverse=True)
    path = []
    for i, m in enumerate(l1):
        row = l1 if i % 2 == 0 else l1[::-1]
        path.extend((m, n) for n in row)
    l2 = sorted(set(l2_values))
    pairs = list(itertools.product(l2, l2)) if search == "paper" else [(v, v) for v in l2]
    groups = []
    for pair in pairs:
        kept = [
            (m, n)
            for m, n in path
            if not (skip_unbounded and is_unbounded(m, pair[0], n, pair[1]))
        ]
        if kept:
            groups.append((pair, kept))
    return groups


def paper_param_grid(mu1_max, nu1_max, l1_fractions=None, l2_values=None) -> dict:
    """Return the paper's grid as a scikit-learn ``param_grid`` (absolute penalties).

    Parameters
    ----------
    mu1_max, nu1_max : float
        Largest useful l1 penalties (:func:`sblr_rt.model.l1_penalty_max`).
    l1_fractions, l2_values : sequence of float | None
        Defaults of :class:`sblr_rt.calibration.config.CalibrationConfig`.

    Returns
    -------
    param_grid : dict
        ``{"mu1": [...6], "mu2": [...5], "nu1": [...6], "nu2": [...5]}``.
    """
    from sblr_rt.calibration.config import CalibrationConfig

    default = CalibrationConfig()
    l1 = default.selection.l1_fractions if l1_fractions is None else l1_fractions
    l2 = default.selection.l2_values if l2_values is None else l2_values
    return {
        "mu1": [f * mu1_max for f in l1],
        "mu2": list(l2),
        "nu1": [f * nu1_max for f in l1],
        "nu2": list(l2),
    }


def select(
    Z: np.ndarray,
    y: np.ndarray,
    *,
    config,
    center: bool,
    progress=None,
    name: str | None = None,
) -> tuple:
    """Select rank and penalties by CV, then fit the chosen model on all epochs.

    Parameters
    ----------
    Z : ndarray, shape (n_epochs, n_rows, n_times)
        Unscaled features (scaling is fitted per training fold).
    y : ndarray of int, shape (n_epochs,)
        Class indices.
    config : CalibrationConfig
        Search settings (``cv``, ``search``, ``ranks``, ``l1_fractions``, ``l2_values``,
        ``scaling``, ``n_jobs``, ``random_state``, solver limits).
    center : bool
        Centre rows when scaling (the non-linear feature paths).
    progress : callable | None
        ``progress(done, total, stage)`` after each finished task.
    name : str | None
        The candidate's name in the report; None: ``"<features>/<spatial>"``.

    Returns
    -------
    estimator : SparseBilinearLogisticRegression
        Fitted on all epochs (scaled with the all-epoch scaling) with the chosen values.
    report : dict
        The search report (:func:`~.search.search_report`): the rank step's rows in
        ``"ranks"``, every penalty point of the candidate, the chosen point, timings.
    scaling : tuple of ndarray
        ``(row_offset, row_scale, col_scale)`` fitted on all epochs.
    """
    t0 = time.perf_counter()
    settings = config.selection
    pre = config.preprocessing
    name = name or f"{pre.features}/{pre.spatial or 'none'}"
    splits = make_splits(y, settings.cv, settings.random_state)
    est_params = config.fit_params()
    # The cross-validated fits stop at the search's rule (looser on large folds); the
    # final fit at the paper's tol.
    fold_shape = (max(len(train) for train, _ in splits), *Z.shape[1:])
    ranks = [r for r in settings.ranks if r <= min(Z.shape[1:])]
    if not ranks:
        raise ValueError(f"'ranks' {settings.ranks} all exceed min(n_rows, n_times)")
    candidate = Candidate(name, name, Z, center)
    fit = FoldSettings(
        CRITERIA[settings.criterion or "accuracy"](),
        est_params,
        pre.scaling,
        np.dtype(settings.search_dtype),
        settings.n_jobs,
        tol_for=config.cv_tol_for,
    )
    rank_rows, best_rank = [], ranks[0]
    if len(ranks) > 1:  # step 1: every rank with zero penalties
        zero = [Stage(r, (((0.0, 0.0), ((0.0, 0.0),)),)) for r in ranks]
        seen = cross_validate([candidate], y, splits, zero, fit, progress=progress,
                              stage_name="rank")  # fmt: skip
        rows = summarise(seen[name], y, splits, zero, fit.criterion)
        best_rank, rank_rows = chosen(rows)["rank"], [report_row(r) for r in rows]
    t_rank = time.perf_counter() - t0
    groups = penalty_grid(
        settings.search,
        settings.l1_fractions,
        settings.l2_values,
        skip_unbounded=settings.skip_unbounded,
    )
    stages = [Stage(best_rank, tuple((pair, tuple(path)) for pair, path in groups))]
    race = None if settings.race_margin is None else (settings.race_margin, settings.race_min_test)
    seen = cross_validate([candidate], y, splits, stages, dataclasses.replace(fit, race=race),
                          progress=progress, stage_name="grid")  # fmt: skip
    rows = summarise(seen[name], y, splits, stages, fit.criterion)
    n_fitted = len(rows)
    if settings.skip_unbounded and settings.search != "none":
        rows += _unbounded_rows(rows, best_rank, settings)
    best = chosen(rows)
    t_grid = time.perf_counter() - t0 - t_rank
    # Final fit on all epochs: replay the chosen warm-start path (on large folds' data in
    # the search's dtype: half the memory traffic).
    scaling = fit_scaling(Z, pre.scaling, center=center)
    Z_all = apply_scaling(Z, *scaling)
    if config.is_large(fold_shape):
        Z_all = Z_all.astype(settings.search_dtype, copy=False)
    est, l1_max, start = fit_point(Z_all, y, stages, best, est_params)
    report = search_report(
        search=settings.search,
        criterion=fit.criterion,
        cv=settings.cv,
        repeats=1,
        n_splits=len(splits),
        search_tol=config.cv_tol_for(fold_shape),
        candidates=[
            candidate_report(
                name,
                rows,
                best,
                features=pre.features,
                spatial=pre.spatial,
                repeats=1,
                n_fitted_points=n_fitted,
            )
        ],
        ensemble=[name],
        ranks=rank_rows,
        estimator=est,
        best=best,
        l1_penalty_max=l1_max,
        final_start=start,
        grid={
            "ranks": list(ranks),
            "l1_fractions": list(settings.l1_fractions),
            "l2_values": list(settings.l2_values),
        },
        seconds={"rank": t_rank, "grid": t_grid, "total": time.perf_counter() - t0},
        n_jobs=effective_n_jobs(settings.n_jobs),  # the jobs that ran, not the setting
    )
    logger.info(
        "selected rank %d, mu1 %.3g, mu2 %.3g, nu1 %.3g, nu2 %.3g: CV accuracy %.3f +/- %.3f",
        best_rank, est.mu1, est.mu2, est.nu1, est.nu2, best["accuracy"], best["accuracy_std"],
    )  # fmt: skip
    return est, report, scaling


def _unbounded_rows(rows, rank, settings) -> list[dict]:
    """Return the grid points skipped as unbounded, scored like the all-zero point.

    ``settings``: the :class:`~sblr_rt.calibration.concerns.SelectionSettings`.
    """
    zero = next(
        (r for r in rows if r["mu1_fraction"] == r["nu1_fraction"] == r["mu2"] == r["nu2"] == 0),
        None,
    )
    figures = ("loss", "accuracy", "accuracy_std", "log_loss")
    scored = {k: zero[k] for k in figures} if zero else dict.fromkeys(figures, float("nan"))
    out = []
    for pair, _ in penalty_grid(settings.search, settings.l1_fractions, settings.l2_values):
        for f_mu, f_nu in penalty_grid("paper", settings.l1_fractions, [0.0])[0][1]:
            if is_unbounded(f_mu, pair[0], f_nu, pair[1]):
                out.append(
                    {"rank": rank, "mu1_fraction": f_mu, "mu2": pair[0], "nu1_fraction": f_nu,
                     "nu2": pair[1], **scored, "collapsed": 0, "raced": 0, "unbounded": True}
                )  # fmt: skip
    return out

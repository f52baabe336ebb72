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

The CV is stratified k-fold (shuffled with a seed) or leave-one-out. Scaling is fitted
on each training fold only. Along the path of one l2 pair the (mu1, nu1) points are
visited in snake order from the largest penalties down with warm starts (a model that
collapsed to zero is restarted cold); the final model replays the chosen path on all
epochs with the estimator, so it is the same computation that was cross-validated.

The paths of one fold run in lockstep (:func:`sblr_rt.model.penalty_path.fit_penalty_paths`):
each solver iteration multiplies the fold's epochs by the factors of every path at once,
one wide product instead of one thin product per path (the paper's grid with 5-fold CV
at (210, 118, 100): 98 s of CPU instead of 199 s path after path).

**Racing** (``race_margin``, off by default): every :data:`RACE_EVERY` iterations of a
grid point, the point is ended where it is when its test accuracy on the fold is more than
``race_margin`` below the best point already finished on that fold; its path goes on from
that iterate and the report counts it as ``"raced"``. Only folds of at least
``race_min_test`` test epochs race. The final model replays the chosen path at ``tol``
without racing. At (210, 118, 100) it kept the choice and the model and saved 30-47 % of
the CPU, but it moved the choice on real data (see
:class:`~sblr_rt.calibration.config.SelectionSettings`), hence off.

**Large folds** (``large_fold``, a million values per training fold, as at the paper's
(210, 118, 100)): the cross-validated fits stop at ``large_search_tol`` (2e-2, about 4x
faster there) and the final fit reads float32 epochs; it still replays the chosen path at
``tol``. Smaller calibrations run at ``tol`` throughout (see
:meth:`~sblr_rt.calibration.config.SelectionSettings.cv_tol_for`).

Parallelism goes through :mod:`joblib` only: tasks are folds (the folds that do not divide
evenly among the workers split into chunks of paths), and fold x rank in step 1. To run the same
search on a cluster, wrap the call in a joblib backend::

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

One procedure (the paper's: the rank step, the penalty grid and the folds' lockstep fits
that serve both and :mod:`.auto`), hence a module of about 540 lines.
"""

from __future__ import annotations

import itertools
import logging
import time
import warnings

import numpy as np
from joblib import effective_n_jobs
from sblr_rt.calibration.workers import run_tasks
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneOut, StratifiedKFold

from sblr_rt.model import SparseBilinearLogisticRegression, ZeroTrapWarning, l1_penalty_max
from sblr_rt.model.penalty_path import fit_fold_paths
from sblr_rt.preprocessing import FeatureScaler, apply_scaling, fit_scaling

logger = logging.getLogger("sblr_rt.calibration")

#: Iterations of a grid point between two racing checks (``race_margin``).
RACE_EVERY = 10

#: How much lower (relative) a cold fit's objective must be for it to replace the final
#: fit along the path (:func:`run_path`): a smaller difference keeps the path's fit. How
#: the margin was chosen: docs/benchmarks.md, "Calibration search".
RESTART_MARGIN = 0.2

__all__ = [
    "is_unbounded",
    "make_splits",
    "paper_param_grid",
    "penalty_grid",
    "select",
]


def make_splits(y: np.ndarray, cv, random_state: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the (train, test) index pairs of the CV.

    Parameters
    ----------
    y : ndarray of int, shape (n_epochs,)
        Class indices.
    cv : int | "loo"
        Number of stratified folds, or leave-one-out.
    random_state : int
        Seed of the shuffling.

    Returns
    -------
    splits : list of (ndarray, ndarray)
        Train and test indices.
    """
    y = np.asarray(y)
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"calibration needs epochs of at least two classes, got {classes}")
    need = 2 if cv == "loo" else int(cv)
    if counts.min() < need:
        what = "leave-one-out" if cv == "loo" else f"{cv}-fold CV"
        raise ValueError(
            f"too few epochs per class for {what}: need at least {need} per class, got "
            f"{dict(zip(classes.tolist(), counts.tolist(), strict=True))} (record more trials "
            "or lower 'cv')"
        )
    splitter = (
        LeaveOneOut()
        if cv == "loo"
        else StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
    )
    return list(splitter.split(np.zeros(len(y)), y))


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


def _collapsed(est) -> bool:
    return not (np.any(est.spatial_) and np.any(est.temporal_))


def scaled_fold(Z, train, test, scaling, center, dtype=np.float64):
    """Return the training and test epochs of one fold, scaled on the training epochs only.

    The scaling is the pipeline's (:class:`~sblr_rt.preprocessing.FeatureScaler`), fitted
    on the fold's training epochs.
    """
    scaler = FeatureScaler(scaling, center=center).fit(Z[train])
    return scaler.transform(Z[train]).astype(dtype), scaler.transform(Z[test]).astype(dtype)


def fold_paths(Xtr, ytr, rank, groups, est_params, score) -> list[list]:
    """Fit warm-started penalty paths on one training fold in lockstep; score each point.

    Parameters
    ----------
    Xtr, ytr : ndarray
        The fold's scaled training epochs and labels.
    rank : int
        Rank of every path.
    groups : list of ((mu2, nu2), [(mu1_fraction, nu1_fraction), ...])
        One path per group; l1 values as fractions of the fold's largest useful penalty.
    est_params : dict
        ``multi_class``, ``max_iter``, ``tol``, ``class_weight``.
    score : callable
        ``score(estimator)`` for every fitted point (what is kept of it).

    Returns
    -------
    scores : list of list
        ``scores[g][k]``: the score of point ``k`` of group ``g``.
    """
    return folds_paths([(Xtr, ytr)], rank, groups, est_params, lambda _f, est: score(est))[0]


def folds_paths(folds, rank, groups, est_params, score, stop_early=None) -> list[list[list]]:
    """Fit the same groups' paths on several training folds in one lockstep; score each point.

    Every fold's points are those :func:`fold_paths` fits on it alone (the folds share the
    solver's batches, :func:`~sblr_rt.model.penalty_path.fit_fold_paths`).

    Parameters
    ----------
    folds : list of (ndarray, ndarray)
        Each fold's scaled training epochs and labels.
    rank, groups, est_params
        As in :func:`fold_paths`.
    score : callable
        ``score(fold_index, estimator)`` for every fitted point.
    stop_early : callable | None
        ``stop_early(fold_index, estimator) -> bool`` every :data:`RACE_EVERY` iterations
        of a point (:func:`~sblr_rt.model.penalty_path.fit_fold_paths`): True ends the point there.

    Returns
    -------
    scores : list of list of list
        ``scores[f][g][k]``: the score of point ``k`` of group ``g`` on fold ``f``.
    """
    jobs = []
    for Xtr, ytr in folds:
        mu1_max, nu1_max = l1_penalty_max(
            Xtr, ytr, rank=rank, multi_class=est_params.get("multi_class", "ovr")
        )
        paths = [
            [
                dict(mu1=f_mu * mu1_max, mu2=pair[0], nu1=f_nu * nu1_max, nu2=pair[1])
                for f_mu, f_nu in path
            ]
            for pair, path in groups
        ]
        jobs.append((Xtr, ytr, paths))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # as in run_path
        return fit_fold_paths(
            jobs,
            rank=rank,
            **est_params,
            callback=lambda f, _p, _k, est: score(f, est),
            stop_early=None if stop_early is None else lambda f, _p, _k, e: stop_early(f, e),
            check_every=RACE_EVERY,
        )


def run_path(X, y, rank, l2pair, l1path, est_params, *, stop, second_start=True):
    """Refit a warm-started path with the estimator up to point ``stop``; return it.

    This is the computation :func:`_task` cross-validated (there in lockstep with other
    paths), replayed on all epochs so that the saved model is the estimator's own fit.
    It makes the search's updates, ``solver="paper"`` (numpy), unless ``est_params``
    names another ``solver`` (the estimator's default fast route ends at other points of
    these weakly penalised paths, so the saved model would not be the one the search
    scored).

    **A second start.** The problem is not convex, and a warm-started path can carry a
    poor local minimum from an early point to the chosen one. Where the chosen point was
    reached warm, it is therefore also fitted cold (from the estimator's own start), and
    the cold fit replaces the path's when its objective is lower by more than
    :data:`RESTART_MARGIN`: the path then failed, rather than regularised. The cold fit
    costs one more fit of the final model. ``second_start=False`` keeps the path's fit as
    it is. What the second start changed where it was measured: docs/benchmarks.md,
    "Calibration search".

    Returns
    -------
    estimator : SparseBilinearLogisticRegression
        Fitted at the path's point ``stop``.
    l1_max : tuple of float
        ``(mu1_max, nu1_max)``, the largest useful l1 penalties on ``X``.
    start : dict
        ``{"start": "path" | "cold", "path_objective": float, "cold_objective": float |
        None}``: which fit was kept (None: the chosen point was reached cold, so no second
        start was needed).
    """
    mu1_max, nu1_max = l1_penalty_max(
        X, y, rank=rank, multi_class=est_params.get("multi_class", "ovr")
    )
    est = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        # Overflow/log(0) notes of the solver at nearly separable points; the CV score
        # of such a point says what matters.
        warnings.simplefilter("ignore", RuntimeWarning)
        for f_mu, f_nu in l1path[: stop + 1]:
            params = dict(
                rank=rank,
                mu1=f_mu * mu1_max,
                mu2=l2pair[0],
                nu1=f_nu * nu1_max,
                nu2=l2pair[1],
            )
            cold = est is None or _collapsed(est)
            if cold:
                est = SparseBilinearLogisticRegression(
                    **params, warm_start=True, **({"solver": "paper"} | est_params)
                )
            else:
                est.set_params(**params)
            est.fit(X, y)
        start = {"start": "path", "path_objective": _final_objective(est), "cold_objective": None}
        if second_start and not cold:  # the chosen point was reached warm: start cold too
            second = clone(est).set_params(warm_start=False).fit(X, y)
            start["cold_objective"] = value = _final_objective(second)
            if value < (1.0 - RESTART_MARGIN) * start["path_objective"]:
                est, start["start"] = second.set_params(warm_start=True), "cold"
    return est, (mu1_max, nu1_max), start


def _final_objective(est) -> float:
    """Return a fitted estimator's final objective (summed over one-vs-rest problems)."""
    objective = est.objective_
    if isinstance(objective, list):
        return float(sum(o[-1] for o in objective))
    return float(objective[-1])


def _task(Z, y, train, test, scaling, center, rank, groups, est_params, dtype, race=None):
    """Fit every group's warm-started path on one training fold, in lockstep.

    ``race``: ``(race_margin, race_min_test)`` or None (no racing). On a fold of at least
    ``race_min_test`` test epochs, every :data:`RACE_EVERY` iterations, a point whose
    current test accuracy is more than ``race_margin`` below the best finished point's of
    this task is ended there (its score is that iterate's).

    Returns one ``(accuracies, collapsed, raced)`` triple of arrays per group, over its
    path.
    """
    Xtr, Xte = scaled_fold(Z, train, test, scaling, center, dtype)
    return _fold_scores(Xtr, y[train], Xte, y[test], rank, groups, est_params, race)


def _rank_task(Z, y, train, test, scaling, center, ranks, groups, est_params, dtype, race=None):
    """:func:`_task` for several ranks on one fold, scaled once (step 1).

    A task per fold and rank scaled the fold again for each rank: half the rank step's
    time at (210, 118, 100). Returns the test accuracy of each rank at the first point of
    the first group (step 1 gives one group of one point, zero penalties).
    """
    Xtr, Xte = scaled_fold(Z, train, test, scaling, center, dtype)
    return [
        float(_fold_scores(Xtr, y[train], Xte, y[test], r, groups, est_params, race)[0][0][0])
        for r in ranks
    ]


def _fold_scores(Xtr, ytr, Xte, yte, rank, groups, est_params, race=None):
    """Score every group's path on one scaled fold: the work of :func:`_task`."""
    best = [-np.inf]  # the best finished point's test accuracy so far
    ended = [False]  # set by behind(); the next score() is that point's (advance follows)

    def accuracy(est):  # Xte is checked once, not at every point
        return float(np.mean(est.predict(Xte, check_input=False) == yte))

    def score(_f, est):
        acc, raced = accuracy(est), ended[0]
        ended[0] = False
        if not raced:
            best[0] = max(best[0], acc)
        return acc, _collapsed(est), raced

    def behind(_f, est):
        ended[0] = accuracy(est) < best[0] - race[0]
        return ended[0]

    # A fold's accuracy on a handful of test epochs moves in steps too coarse to tell a
    # hopeless point from a noisy one: racing only where the fold has race_min_test.
    racing = race is not None and len(yte) >= race[1]
    res = folds_paths([(Xtr, ytr)], rank, groups, est_params, score, behind if racing else None)[0]
    return [tuple(np.array([pt[i] for pt in r]) for i in range(3)) for r in res]


def _fold_chunks(n_folds: int, n_groups: int, n_workers: int) -> list[tuple[int, int, int]]:
    """Plan the grid's tasks as (fold, chunk, n_chunks): chunk c holds groups[c::n_chunks].

    The paths of one task share every pass over the fold's data
    (:func:`~sblr_rt.model.penalty_path.fit_penalty_paths`), so a task is best a whole fold. The
    folds that divide evenly among the workers stay whole; only the remaining folds are cut
    into chunks, one per idle worker, and come last so that they fill the workers that
    would otherwise wait (5 folds on 2 workers: 4 whole folds, then one fold in halves).
    """
    n_workers = max(1, n_workers)
    rest = n_folds % n_workers
    plan = [(f, 0, 1) for f in range(n_folds - rest)]
    if rest:
        n = min(n_groups, -(-n_workers // rest))
        plan += [(f, c, n) for f in range(n_folds - rest, n_folds) for c in range(n)]
    return plan


def select(
    Z: np.ndarray,
    y: np.ndarray,
    *,
    config,
    center: bool,
    progress=None,
) -> tuple[SparseBilinearLogisticRegression, dict, tuple]:
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
        Centre rows when scaling (bandpower path).
    progress : callable | None
        ``progress(done, total, stage)`` after each finished task.

    Returns
    -------
    estimator : SparseBilinearLogisticRegression
        Fitted on all epochs (scaled with the all-epoch scaling) with the chosen values.
    report : dict
        JSON-serialisable: ranks tried, grid tried with mean/std CV accuracy per point,
        the chosen point, timings.
    scaling : tuple of ndarray
        ``(row_offset, row_scale, col_scale)`` fitted on all epochs.
    """
    t0 = time.perf_counter()
    settings = config.selection
    splits = make_splits(y, settings.cv, settings.random_state)
    est_params = config.fit_params()
    # The cross-validated fits stop at the search's rule (looser on large folds); the
    # final fit at the paper's tol.
    fold_shape = (max(len(train) for train, _ in splits), *Z.shape[1:])
    search_params = est_params | {"tol": config.cv_tol_for(fold_shape)}
    ranks = [r for r in settings.ranks if r <= min(Z.shape[1:])]
    if not ranks:
        raise ValueError(f"'ranks' {settings.ranks} all exceed min(n_rows, n_times)")
    fold_args = (Z, y, config, center, search_params, np.dtype(settings.search_dtype))
    rank_rows, best_rank = _select_rank(fold_args, splits, ranks, progress)
    t_rank = time.perf_counter() - t0
    groups = penalty_grid(
        settings.search,
        settings.l1_fractions,
        settings.l2_values,
        skip_unbounded=settings.skip_unbounded,
    )
    grid = _grid_scores(fold_args, splits, best_rank, groups, progress)
    n_fitted = len(grid)
    if settings.skip_unbounded and settings.search != "none":
        grid += _unbounded_points(grid, settings)
    best = _best_point(grid)
    t_grid = time.perf_counter() - t0 - t_rank
    # Final fit on all epochs: replay the chosen warm-start path (on large folds' data in
    # the search's dtype: half the memory traffic).
    scaling = fit_scaling(Z, config.preprocessing.scaling, center=center)
    Z_all = apply_scaling(Z, *scaling)
    if config.is_large(fold_shape):
        Z_all = Z_all.astype(settings.search_dtype, copy=False)
    pair, path = groups[best["group"]]
    est, (mu1_max, nu1_max), start = run_path(
        Z_all, y, best_rank, pair, path, est_params, stop=best["step"]
    )
    est.set_params(warm_start=False)
    report = {
        "cv": "loo" if settings.cv == "loo" else int(settings.cv),
        "n_splits": len(splits),
        "search": settings.search,
        "ranks": rank_rows,
        "rank": int(best_rank),
        "l1_fractions": list(settings.l1_fractions),
        "l2_values": list(settings.l2_values),
        "grid": grid,
        "n_fitted_points": n_fitted,
        "search_tol": search_params["tol"],
        "best": {
            k: best[k] for k in ("mu1_fraction", "mu2", "nu1_fraction", "nu2", "mean", "std")
        },
        "l1_penalty_max": [float(mu1_max), float(nu1_max)],
        "final_start": start,
        "params": {"rank": int(best_rank)}
        | {k: float(getattr(est, k)) for k in ("mu1", "mu2", "nu1", "nu2")},
        "seconds": {"rank": t_rank, "grid": t_grid, "total": time.perf_counter() - t0},
        "n_jobs": effective_n_jobs(settings.n_jobs),  # the jobs that ran, not the setting
    }
    logger.info(
        "selected rank %d, mu1 %.3g, mu2 %.3g, nu1 %.3g, nu2 %.3g: CV accuracy %.3f +/- %.3f",
        best_rank, est.mu1, est.mu2, est.nu1, est.nu2, best["mean"], best["std"],
    )  # fmt: skip
    return est, report, scaling


def _fold_task_args(fold_args, train, test, rank, groups, race=None):
    Z, y, config, center, est_params, dtype = fold_args
    scaling = config.preprocessing.scaling
    return (Z, y, train, test, scaling, center, rank, groups, est_params, dtype, race)


def _select_rank(fold_args, splits, ranks, progress):
    """Step 1: every rank with zero penalties; the best mean CV accuracy (ties: smaller)."""
    if len(ranks) == 1:
        return [], ranks[0]
    zero = [((0.0, 0.0), [(0.0, 0.0)])]
    tasks = [
        (_rank_task, _fold_task_args(fold_args, tr, te, tuple(ranks), zero)) for tr, te in splits
    ]
    res = run_tasks(tasks, fold_args[2].selection.n_jobs, progress, "rank")
    acc = np.array(res).T  # (rank, fold)
    rows = [
        {"rank": r, "mean": float(a.mean()), "std": float(a.std()), "folds": a.tolist()}
        for r, a in zip(ranks, acc, strict=True)
    ]
    return rows, ranks[int(np.argmax(acc.mean(axis=1)))]  # first max: smallest rank


def _grid_scores(fold_args, splits, rank, groups, progress) -> list[dict]:
    """Step 2: CV accuracy of every penalty point at ``rank`` (paths in lockstep)."""
    settings = fold_args[2].selection
    race = None if settings.race_margin is None else (settings.race_margin, settings.race_min_test)
    plan = _fold_chunks(len(splits), len(groups), effective_n_jobs(settings.n_jobs))
    tasks = [
        (_task, _fold_task_args(fold_args, *splits[f], rank, groups[c::n], race))
        for f, c, n in plan
    ]
    res = run_tasks(tasks, settings.n_jobs, progress, "grid")
    per_group = [[None] * len(splits) for _ in groups]  # [group][fold] -> (accs, collapsed, raced)
    for (f, c, n), outs in zip(plan, res, strict=True):
        for i, out in enumerate(outs):
            per_group[c + i * n][f] = out
    grid = []
    for g, (pair, path) in enumerate(groups):
        fold_acc, fold_col, fold_raced = (np.array(a) for a in zip(*per_group[g], strict=True))
        for k, (f_mu, f_nu) in enumerate(path):  # arrays (n_splits, n_path)
            grid.append(
                _point(f_mu, pair[0], f_nu, pair[1], fold_acc[:, k].mean(), fold_acc[:, k].std())
                | {
                    "collapsed": int(fold_col[:, k].sum()),
                    "raced": int(fold_raced[:, k].sum()),
                    "group": g,
                    "step": k,
                }
            )
    return grid


def _point(f_mu, mu2, f_nu, nu2, mean, std, *, unbounded=False) -> dict:
    return {
        "mu1_fraction": f_mu,
        "mu2": mu2,
        "nu1_fraction": f_nu,
        "nu2": nu2,
        "mean": float(mean),
        "std": float(std),
        "collapsed": 0,
        "raced": 0,
        "unbounded": unbounded,
        "group": -1,
        "step": -1,
    }


def _unbounded_points(grid, settings) -> list[dict]:
    """Return the grid points skipped as unbounded, scored like the all-zero point.

    ``settings``: the :class:`~sblr_rt.calibration.config.SelectionSettings`.
    """
    zero = next(
        (p for p in grid if p["mu1_fraction"] == p["nu1_fraction"] == p["mu2"] == p["nu2"] == 0),
        None,
    )
    mean, std = (zero["mean"], zero["std"]) if zero else (float("nan"), float("nan"))
    out = []
    for pair, _ in penalty_grid(settings.search, settings.l1_fractions, settings.l2_values):
        for f_mu, f_nu in penalty_grid("paper", settings.l1_fractions, [0.0])[0][1]:
            if is_unbounded(f_mu, pair[0], f_nu, pair[1]):
                out.append(_point(f_mu, pair[0], f_nu, pair[1], mean, std, unbounded=True))
    return out


def _best_point(grid) -> dict:
    """Return the best point by mean CV accuracy; ties: the most regularised."""
    means = np.array([p["mean"] if not p["unbounded"] else -np.inf for p in grid])
    top = np.flatnonzero(means >= means.max() - 1e-12)
    best_i = max(
        top,
        key=lambda i: (
            grid[i]["mu1_fraction"] + grid[i]["nu1_fraction"],
            grid[i]["mu2"] + grid[i]["nu2"],
        ),
    )
    return grid[best_i]

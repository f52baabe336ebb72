"""The selection engine: candidates x grid x folds, scored by a pluggable criterion.

Every choice calibration makes by cross-validation goes through :func:`cross_validate`:

candidates
    :class:`Candidate`: one set of unscaled features per way of computing them (a fixed
    feature path is one candidate; ``features="auto"`` has one per feature path, spatial
    stage and time grid). All candidates share the epochs and the folds.
grid
    A list of :class:`Stage`: a rank and its warm-started penalty paths, ``((mu2, nu2),
    [(mu1_fraction, nu1_fraction), ...])``, the l1 values as fractions of each training
    fold's largest useful penalty (:func:`sblr_rt.model.l1_penalty_max`), visited from the
    largest down. The paper's procedure (:mod:`.selection`) and ``auto`` (:mod:`.auto`)
    are two search plans: two grids for the same engine.
folds
    The (train, test) splits, possibly several repetitions of a k-fold CV. Scaling is
    fitted on each training fold only (:func:`scaled_fold`).
criterion
    :mod:`.criteria`: what is observed of each fitted point on the test epochs and how the
    points are ranked (:class:`~.criteria.Accuracy`, :class:`~.criteria.LogLoss`).

The paths of one task run in lockstep (:func:`sblr_rt.model.penalty_path.fit_fold_paths`):
every solver iteration advances every path of every (candidate, fold) training set of
the same shape at once. Tasks go to joblib (:func:`~.parallel.run_tasks`): one task per
group of same-shaped candidates with all their folds when there are at least as many
groups as workers, else one task per fold (the folds that do not divide evenly among the
workers cut into chunks of paths). The plan changes the time, not the figures.

The chosen point is then refitted on all epochs by :func:`run_path`, the computation the
search cross-validated, and described in one report format (:func:`candidate_report`).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Hashable

import numpy as np
from joblib import effective_n_jobs
from sblr_rt.calibration.criteria import Criterion, best_point
from sblr_rt.calibration.parallel import run_tasks
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneOut, RepeatedStratifiedKFold, StratifiedKFold

from sblr_rt.model import SparseBilinearLogisticRegression, ZeroTrapWarning, l1_penalty_max
from sblr_rt.model.penalty_path import fit_fold_paths
from sblr_rt.preprocessing import FeatureScaler

__all__ = [
    "Candidate",
    "FoldSettings",
    "Stage",
    "cross_validate",
    "make_splits",
    "run_path",
    "scaled_fold",
    "search_report",
    "summarise",
]

#: Iterations of a grid point between two racing checks (``race_margin``).
RACE_EVERY = 10

#: How much lower (relative) a cold fit's objective must be for it to replace the final
#: fit along the path (:func:`run_path`): a smaller difference keeps the path's fit. How
#: the margin was chosen: docs/benchmarks.md, "Calibration search".
RESTART_MARGIN = 0.2


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One way of computing the features, evaluated on the shared folds.

    Parameters
    ----------
    key : hashable
        What identifies the candidate to its plan.
    name : str
        Its name in the report (``"waveform/car"``).
    Z : ndarray, shape (n_epochs, n_rows, n_times)
        Unscaled features.
    center : bool
        Whether the scaling centres rows (the non-linear feature paths).
    """

    key: Hashable
    name: str
    Z: np.ndarray
    center: bool

    @property
    def shape(self) -> tuple:
        """One epoch's shape: candidates of one shape share the solver's batches."""
        return self.Z.shape[1:]


@dataclasses.dataclass(frozen=True)
class Stage:
    """One rank and its warm-started penalty paths.

    Parameters
    ----------
    rank : int
        Rank of every path.
    groups : tuple of ((float, float), tuple of (float, float))
        ``((mu2, nu2), ((mu1_fraction, nu1_fraction), ...))`` per path, in warm-start order.
    """

    rank: int
    groups: tuple

    def points(self) -> list[dict]:
        """Return this stage's points in order, with where each lies on its path."""
        return [
            {"rank": self.rank, "mu1_fraction": f_mu, "mu2": pair[0], "nu1_fraction": f_nu,
             "nu2": pair[1], "group": g, "step": k}
            for g, (pair, path) in enumerate(self.groups)
            for k, (f_mu, f_nu) in enumerate(path)
        ]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class FoldSettings:
    """How every cross-validated point is fitted and scored.

    Parameters
    ----------
    criterion : Criterion
        What is observed of each point and how points rank.
    est_params : dict
        The estimator's ``multi_class``, ``max_iter``, ``tol``, ``class_weight``... for the
        cross-validated fits.
    scaling : str
        The preprocessing's scaling, fitted on each training fold.
    dtype : numpy dtype or type
        The dtype of the scaled folds.
    n_jobs : int | None
        joblib's ``n_jobs``.
    race : (float, int) | None
        ``(race_margin, race_min_test)``: every :data:`RACE_EVERY` iterations a point whose
        test accuracy on a fold of at least ``race_min_test`` test epochs is more than
        ``race_margin`` below the best finished point of its task ends there. None: no
        racing.
    tol_for : callable | None
        ``tol_for(fold_shape) -> tol``: the stopping rule of the fits on training folds of
        a candidate whose largest training fold has ``fold_shape`` (looser on large
        folds); None: ``est_params["tol"]``.
    """

    criterion: Criterion
    est_params: dict
    scaling: str
    dtype: type = np.float64
    n_jobs: int | None = 1
    race: tuple | None = None
    tol_for: Callable | None = None

    def for_shape(self, fold_shape: tuple) -> FoldSettings:
        """Return these settings with the stopping rule of folds of ``fold_shape``."""
        if self.tol_for is None:
            return self
        tol = self.tol_for(fold_shape)
        return dataclasses.replace(self, est_params=self.est_params | {"tol": tol}, tol_for=None)


def make_splits(y: np.ndarray, cv, random_state: int = 0, repeats: int = 1) -> list[tuple]:
    """Return the (train, test) index pairs of the CV.

    Parameters
    ----------
    y : ndarray of int, shape (n_epochs,)
        Class indices.
    cv : int | "loo"
        Number of stratified folds, or leave-one-out.
    random_state : int
        Seed of the shuffling.
    repeats : int
        Repetitions of the k-fold CV, each shuffled anew (leave-one-out has one).

    Returns
    -------
    splits : list of (ndarray, ndarray)
        Train and test indices, the repetitions one after the other.
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
    if cv == "loo":
        splitter = LeaveOneOut()
    elif repeats > 1:
        splitter = RepeatedStratifiedKFold(
            n_splits=int(cv), n_repeats=repeats, random_state=random_state
        )
    else:
        splitter = StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
    return list(splitter.split(np.zeros(len(y)), y))


def scaled_fold(Z, train, test, scaling, center, dtype=np.float64):
    """Return the training and test epochs of one fold, scaled on the training epochs only.

    The scaling is the pipeline's (:class:`~sblr_rt.preprocessing.FeatureScaler`), fitted
    on the fold's training epochs.
    """
    scaler = FeatureScaler(scaling, center=center).fit(Z[train])
    return scaler.transform(Z[train]).astype(dtype), scaler.transform(Z[test]).astype(dtype)


def collapsed(est) -> bool:
    """Whether a fitted estimator's factors collapsed to zero."""
    return not (np.any(est.spatial_) and np.any(est.temporal_))


def folds_paths(folds, rank, groups, est_params, score, stop_early=None) -> list[list[list]]:
    """Fit the same groups' paths on several training folds in one lockstep; score each point.

    Parameters
    ----------
    folds : list of (ndarray, ndarray)
        Each fold's scaled training epochs and labels.
    rank : int
        Rank of every path.
    groups : sequence of ((mu2, nu2), [(mu1_fraction, nu1_fraction), ...])
        One path per group; l1 values as fractions of each fold's largest useful penalty.
    est_params : dict
        ``multi_class``, ``max_iter``, ``tol``, ``class_weight``.
    score : callable
        ``score(fold_index, group_index, estimator)`` for every fitted point.
    stop_early : callable | None
        ``stop_early(fold_index, group_index, estimator) -> bool`` every
        :data:`RACE_EVERY` iterations of a point: True ends the point there.

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
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # as in run_path
        return fit_fold_paths(
            jobs,
            rank=rank,
            **est_params,
            callback=lambda f, p, _k, est: score(f, p, est),
            stop_early=None if stop_early is None else lambda f, p, _k, e: stop_early(f, p, e),
            check_every=RACE_EVERY,
        )


def _task(Zs, centers, y, splits, stages, fit: FoldSettings) -> list[list[list]]:
    """Fit every stage's paths on every (candidate, fold) training set of one task.

    Returns ``out[c][i]``: one ``(observed, collapsed, raced)`` per point of ``stages`` in
    order (None where the rank exceeds the candidate's shape), for candidate ``c`` on
    split ``i``.
    """
    sets = [
        (c, i, *scaled_fold(Z, train, test, fit.scaling, center, fit.dtype))
        for c, (Z, center) in enumerate(zip(Zs, centers, strict=True))
        for i, (train, test) in enumerate(splits)
    ]
    out = [[[] for _ in splits] for _ in Zs]
    criterion = fit.criterion
    for stage in stages:
        n_points = sum(len(path) for _, path in stage.groups)
        run = [st for st in sets if stage.rank <= min(st[2].shape[1:])]
        for c, i, Xtr, _ in sets:
            if stage.rank > min(Xtr.shape[1:]):
                out[c][i] += [None] * n_points
        if not run:
            continue
        tests = [y[splits[i][1]] for _, i, *_ in run]
        best = [-np.inf] * len(run)  # per training set: the best finished point's accuracy
        ended = set()  # (set, group) whose current point racing ended

        def score(f, g, est, run=run, best=best, ended=ended, tests=tests):
            observed = criterion.observe(est, run[f][3])  # the test set is checked once
            raced = (f, g) in ended
            ended.discard((f, g))
            if fit.race is not None and not raced:
                best[f] = max(best[f], criterion.fold_score(observed, tests[f]))
            return observed, collapsed(est), raced

        def behind(f, g, est, run=run, best=best, ended=ended, tests=tests):
            if len(tests[f]) < fit.race[1]:  # too few test epochs to tell hopeless from noisy
                return False
            now = criterion.fold_score(criterion.observe(est, run[f][3]), tests[f])
            if now < best[f] - fit.race[0]:
                ended.add((f, g))
                return True
            return False

        res = folds_paths(
            [(Xtr, y[splits[i][0]]) for _, i, Xtr, _ in run],
            stage.rank,
            stage.groups,
            fit.est_params,
            score,
            None if fit.race is None else behind,
        )
        for (c, i, *_), r in zip(run, res, strict=True):
            out[c][i] += [point for path in r for point in path]
    return out


def fold_chunks(n_folds: int, n_groups: int, n_workers: int) -> list[tuple[int, int, int]]:
    """Plan one candidate's tasks as (fold, chunk, n_chunks): chunk c holds groups[c::n].

    The paths of one task share every pass over the fold's data, so a task is best a
    whole fold. The folds that divide evenly among the workers stay whole; only the
    remaining folds are cut into chunks, one per idle worker, and come last so that they
    fill the workers that would otherwise wait (5 folds on 2 workers: 4 whole folds, then
    one fold in halves).
    """
    n_workers = max(1, n_workers)
    rest = n_folds % n_workers
    plan = [(f, 0, 1) for f in range(n_folds - rest)]
    if rest:
        n = min(n_groups, -(-n_workers // rest))
        plan += [(f, c, n) for f in range(n_folds - rest, n_folds) for c in range(n)]
    return plan


def _plan(candidates, split_ids, stages, n_workers) -> list[tuple[list, list, int, int]]:
    """Return the tasks as (candidate indices, split indices, chunk, n_chunks).

    Candidates of one shape run in one lockstep; with fewer shapes than workers the
    folds are the tasks instead (:func:`fold_chunks`).
    """
    by_shape = {}
    for c, cand in enumerate(candidates):
        by_shape.setdefault(cand.shape, []).append(c)
    if len(by_shape) >= n_workers:
        return [(cs, list(split_ids), 0, 1) for cs in by_shape.values()]
    n_groups = max(len(s.groups) for s in stages)
    return [
        (cs, [split_ids[f]], c, n)
        for cs in by_shape.values()
        for f, c, n in fold_chunks(len(split_ids), n_groups, n_workers)
    ]


def cross_validate(
    candidates: list[Candidate], y, splits, stages: list[Stage], fit: FoldSettings,
    *, split_ids=None, progress=None, stage_name: str = "", observed=None, span=None,
) -> dict:  # fmt: skip
    """Fit and observe every point of ``stages`` for every candidate on the given splits.

    Parameters
    ----------
    candidates : list of Candidate
        What to evaluate.
    y : ndarray of int
        Class indices of the epochs.
    splits : list of (ndarray, ndarray)
        Every (train, test) split of the CV.
    stages : list of Stage
        The grid.
    fit : FoldSettings
        How each point is fitted and observed.
    split_ids : sequence of int | None
        The splits to run now (None: all).
    progress : callable | None
        ``progress(done, total, stage_name)`` at the start and after each finished task,
        counting (candidate, split) evaluations.
    stage_name : str
        Passed to ``progress``.
    observed : dict | None
        Earlier observations to add these to (the same ``stages``).
    span : (int, int) | None
        ``(done, total)`` of a plan that calls this more than once: the evaluations done
        before this call and the plan's total (None: this call's own).

    Returns
    -------
    observed : dict
        Candidate key -> ``[split][point]``: ``(observation, collapsed, raced)`` or None
        (a rank the candidate's shape cannot have, or a split not run).
    """
    split_ids = list(range(len(splits))) if split_ids is None else list(split_ids)
    n_points = sum(len(s.points()) for s in stages)
    observed = {} if observed is None else observed
    for cand in candidates:
        observed.setdefault(cand.key, [[None] * n_points for _ in splits])
    plan = _plan(candidates, split_ids, stages, effective_n_jobs(fit.n_jobs))
    n_train = max(len(train) for train, _ in splits)
    tasks = []
    for cs, ids, c, n in plan:
        chunk = [dataclasses.replace(s, groups=s.groups[c::n]) for s in stages]
        settings = fit.for_shape((n_train, *candidates[cs[0]].shape))
        args = ([candidates[i].Z for i in cs], [candidates[i].center for i in cs], y,
                [splits[i] for i in ids], chunk, settings)  # fmt: skip
        tasks.append((_task, args))
    units = len(candidates) * len(split_ids)
    start, total = (0, units) if span is None else span

    def report(done, n_tasks, _stage):
        progress(start + round(units * done / max(n_tasks, 1)), total, stage_name)

    results = run_tasks(tasks, fit.n_jobs, None if progress is None else report, stage_name)
    for (cs, ids, c, n), res in zip(plan, results, strict=True):
        where = _chunk_points(stages, c, n)
        for ci, per_split in zip(cs, res, strict=True):
            for i, points in zip(ids, per_split, strict=True):
                for j, point in zip(where, points, strict=True):
                    observed[candidates[ci].key][i][j] = point
    return observed


def _chunk_points(stages, c: int, n: int) -> list[int]:
    """Return the grid indices of the points of chunk ``c`` of ``n``, in the task's order."""
    where, start = [], 0
    for stage in stages:
        offsets = np.cumsum([0] + [len(path) for _, path in stage.groups])
        for g in range(c, len(stage.groups), n):
            where += range(start + offsets[g], start + offsets[g + 1])
        start += offsets[-1]
    return where


def summarise(observed, y, splits, stages, criterion, *, split_ids=None, n_repeats=1) -> list:
    """Return one row per grid point of one candidate: its figures over ``split_ids``.

    Parameters
    ----------
    observed : list of list
        One candidate's ``[split][point]`` observations (:func:`cross_validate`).
    y, splits, stages, criterion
        As in :func:`cross_validate`.
    split_ids : sequence of int | None
        The splits to summarise, ``n_repeats`` repetitions of the folds (None: all).
    n_repeats : int
        Repetitions in ``split_ids``.

    Returns
    -------
    rows : list of dict
        The point (``rank``, ``mu1_fraction``, ``mu2``, ``nu1_fraction``, ``nu2``, and its
        ``stage``, ``group``, ``step`` and ``index`` in the grid), the criterion's figures
        (``loss``, ``accuracy``, ``accuracy_std``, ``log_loss``) and the folds where it
        ``collapsed`` or was ``raced``. Points that no split could fit are left out.
    """
    split_ids = list(range(len(splits))) if split_ids is None else list(split_ids)
    points = [p | {"stage": s} for s, stage in enumerate(stages) for p in stage.points()]
    points = [p | {"index": j} for j, p in enumerate(points)]
    rows = []
    for j, point in enumerate(points):
        got = [observed[i][j] for i in split_ids]
        if any(g is None for g in got):
            continue
        row = criterion.summarise(
            [g[0] for g in got], y, [splits[i] for i in split_ids], n_repeats
        )
        rows.append(
            point
            | row
            | {
                "collapsed": sum(bool(g[1]) for g in got),
                "raced": sum(bool(g[2]) for g in got),
                "unbounded": False,
            }
        )
    return rows


def chosen(rows: list[dict]) -> dict:
    """Return the best row (:func:`~.criteria.best_point`)."""
    return rows[best_point(rows)]


def run_path(X, y, rank, l2pair, l1path, est_params, *, stop, second_start=True):
    """Refit a warm-started path with the estimator up to point ``stop``; return it.

    This is the computation :func:`cross_validate` scored (there in lockstep with other
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
            cold = est is None or collapsed(est)
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


def fit_point(X, y, stages: list[Stage], row: dict, est_params: dict):
    """Refit the point of ``row`` (a row of :func:`summarise`) on all epochs ``X``.

    Returns what :func:`run_path` returns, with the estimator's ``warm_start`` off.
    """
    pair, path = stages[row["stage"]].groups[row["group"]]
    est, l1_max, start = run_path(
        X, y, row["rank"], pair, list(path), est_params, stop=row["step"]
    )
    est.set_params(warm_start=False)
    return est, l1_max, start


def _final_objective(est) -> float:
    """Return a fitted estimator's final objective (summed over one-vs-rest problems)."""
    objective = est.objective_
    if isinstance(objective, list):
        return float(sum(o[-1] for o in objective))
    return float(objective[-1])


#: The keys of a point's row that the report keeps.
ROW_KEYS = ("rank", "mu1_fraction", "mu2", "nu1_fraction", "nu2", "accuracy", "accuracy_std",
            "log_loss", "collapsed", "raced", "unbounded")  # fmt: skip


def report_row(row: dict) -> dict:
    """Return a row as the report keeps it (JSON-serialisable, no engine bookkeeping)."""
    return {k: row.get(k) for k in ROW_KEYS} | ({"auc": row["auc"]} if "auc" in row else {})


def candidate_report(name: str, rows: list[dict], best: dict, **identity) -> dict:
    """Return one candidate's entry of the report: its identity, best point, every point.

    Parameters
    ----------
    name : str
        The candidate's name.
    rows : list of dict
        Every point's row (:func:`summarise`).
    best : dict
        The row the candidate is chosen by.
    **identity
        What else names it (``features``, ``spatial``, ``n_times``, ``repeats``...).

    Returns
    -------
    entry : dict
        ``name``, the identity, the best row's figures, and ``points``: every row.
    """
    return {"name": name, **identity, **report_row(best), "points": [report_row(r) for r in rows]}


def search_report(
    *, search, criterion, cv, repeats, n_splits, search_tol, grid, candidates, ensemble,
    ranks, estimator, best, l1_penalty_max, final_start, seconds, n_jobs, dropped=(),
    chance_level=None,
) -> dict:  # fmt: skip
    """Return the report of a search, in the one format every search plan writes.

    The model file stores it as ``metadata["selection"]``;
    :func:`sblr_rt.bci_model.search_record.search_record` reads it (and upgrades older
    files' reports).

    Returns
    -------
    report : dict
        JSON-serialisable: ``search`` (the plan), ``criterion``, ``cv``, ``repeats``,
        ``n_splits``, ``search_tol``, ``grid`` (its axes), ``ranks`` (the rank step's rows,
        empty without one), ``candidates`` (each with its best point's figures and every
        point), ``chosen``, ``ensemble``, ``dropped`` and ``chance_level`` (members left
        out as not above chance), ``rank``, ``best`` (the chosen point's row), ``params``
        (the chosen estimator's), ``l1_penalty_max``, ``final_start``, ``seconds``,
        ``n_jobs``.
    """
    return {
        "search": search,
        "criterion": criterion.name,
        "cv": "loo" if cv == "loo" else int(cv),
        "repeats": int(repeats),
        "n_splits": int(n_splits),
        "search_tol": float(search_tol),
        "grid": grid,
        "ranks": list(ranks),
        "candidates": list(candidates),
        "chosen": ensemble[0],
        "ensemble": list(ensemble),
        "dropped": list(dropped),
        "chance_level": chance_level,
        "rank": int(best["rank"]),
        "best": report_row(best),
        "params": {"rank": int(best["rank"])}
        | {k: float(getattr(estimator, k)) for k in ("mu1", "mu2", "nu1", "nu2")},
        "l1_penalty_max": [float(v) for v in l1_penalty_max],
        "final_start": final_start,
        "seconds": seconds,
        "n_jobs": n_jobs,
    }

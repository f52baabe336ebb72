"""Warm-started penalty paths, many at once, sharing every pass over the data.

Cross-validated selection fits the same training epochs at hundreds of penalty settings.
One fit is memory-bound: each iteration multiplies X (n x s x t) by a thin V (t x r) and
X^T by a thin U, two passes over X for a few flops per byte. The paths of a grid are
independent of one another (one per l2 pair, say), so :func:`fit_penalty_paths` runs them
in lockstep: one iteration computes ``X [V_1 ... V_P]`` and ``X^T [U_1 ... U_P]`` as two
wide products over all P runs (a matrix-matrix product instead of P matrix-vector
products) and then advances each run by its own block updates, step sizes and
sufficient-decrease tests (:class:`~sblr_rt.model.solver.BCPDBatch`, the very code
:func:`~sblr_rt.model.solver.bcpd` runs), vectorised over the runs.

Along a path each point is warm-started from the previous point's solution and step
parameters, exactly as a ``SparseBilinearLogisticRegression(warm_start=True)`` refitted
with new penalties; a point whose factors collapsed to zero is followed by a cold start,
since zero is a fixed point of the solver. The results equal those of fitting each path
point by point with the estimator, up to floating-point rounding of the wider products.

Cross-validation fits the same grid on several training folds. :func:`fit_fold_paths`
runs the paths of every fold in one lockstep as well: the folds' runs share one batch (one
row of labels per run) when the folds have the same size and classes, so each iteration
makes one round of small vectorised updates for all folds instead of one per fold (the
products stay one per fold, on that fold's epochs). With 30 epochs the fits are far from
memory-bound and this removes most of the per-iteration interpreter cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_array

from sblr_rt.model._fitting import (
    assemble,
    class_problems,
    cold_start,
    moments,
    ray_scaled,
    sample_weights,
    standardise,
)
from sblr_rt.model.datafit import Logistic, Multinomial
from sblr_rt.model.estimator import SparseBilinearLogisticRegression
from sblr_rt.model.penalties import ElasticNet
from sblr_rt.model.products import x_times_u, x_times_v
from sblr_rt.model.solver import SOLVER_RULES, BCPDBatch, SolverSettings, single_threaded_blas

__all__ = ["fit_fold_paths", "fit_penalty_paths"]

_KEYS = ("mu1", "mu2", "nu1", "nu2")


def _point_penalties(point, where):
    """Return (mu1, mu2, nu1, nu2) of a path point, checked."""
    if not isinstance(point, dict) or set(point) != set(_KEYS):
        raise ValueError(f"each path point must be a dict of {_KEYS}; got {point!r} at {where}.")
    values = tuple(float(point[k]) for k in _KEYS)
    if any(not np.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"penalties must be finite and >= 0; got {point} at {where}.")
    return values


def _collapsed_factors(est):
    """Whether a fitted point's spatial or temporal factor is all zero."""
    return not (np.any(est.spatial_) and np.any(est.temporal_))


def _split(product, sizes):
    """Split a product over concatenated runs back into parts of ``sizes`` rows (views)."""
    # Slices, not np.split: np.split's overhead counts, as auto calls this tens of
    # thousands of times.
    parts, start = [], 0
    for size in sizes:
        parts.append(product[start : start + size])
        start += size
    return parts


def _stack(fits):
    """Return one datafit with a row of labels (and weights) per run from the runs' own."""
    if len(fits) == 1 or all(f is fits[0] for f in fits):
        return fits[0]
    w = None
    if any(f.w is not None for f in fits):
        w = np.stack([np.ones(f.n) if f.w is None else f.w for f in fits])
    if isinstance(fits[0], Logistic):
        return Logistic(np.stack([f.y[:, 0] for f in fits]), w)
    return Multinomial(np.stack([f.y for f in fits]), w)


def fit_penalty_paths(
    X,
    y,
    paths: Sequence[Sequence[dict]],
    *,
    rank: int = 1,
    multi_class: str = "ovr",
    tol: float = SolverSettings.tol,
    max_iter: int = SolverSettings.max_iter,
    eta: float = SolverSettings.eta,
    L_min: float = SolverSettings.L_min,
    init: str = "svd",
    random_state=None,
    callback: Callable | None = None,
    sample_weight=None,
    class_weight=None,
    kernel: str = SolverSettings.kernel,
):
    """Fit warm-started penalty paths in lockstep on the same epochs.

    Parameters
    ----------
    X : array-like, shape (n_epochs, n_channels, n_times)
        Training epochs, float32 or float64 (kept as given: float32 products stay
        float32, as in the estimator).
    y : array-like, shape (n_epochs,)
        Labels, two or more distinct values.
    paths : sequence of sequence of dict
        Each path is a sequence of points ``{"mu1", "mu2", "nu1", "nu2"}`` fitted in order,
        each warm-started from the one before.
    rank, multi_class, tol, max_iter, eta, L_min, init, random_state
        As in :class:`~sblr_rt.model.SparseBilinearLogisticRegression`.
    callback : callable | None
        ``callback(path_index, point_index, estimator)`` as soon as a point is fitted;
        what it returns is stored in place of the estimator (so a caller that only
        scores each point keeps no models).
    sample_weight : array-like, shape (n_epochs,) | None
        Weight of each epoch, as in the estimator's ``fit``.
    class_weight : dict | "balanced" | None
        As in the estimator.
    kernel : {"numpy", "numba"}
        The block update (:data:`~sblr_rt.model.solver.KERNELS`): numpy (default), the
        estimator's ``solver="paper"`` updates exactly, or the compiled one. At the
        paper's shape the compiled kernel saved about 10 % of a fold's search, and its
        rounding moved 11 of 170 grid points' test accuracy on that fold, so the search
        keeps numpy.

    Returns
    -------
    results : list of list
        ``results[p][k]`` is the fitted estimator of point ``k`` of path ``p`` (rebuilt
        with :meth:`~SparseBilinearLogisticRegression.from_factors`, with ``n_iter_`` and
        ``objective_`` set, ``spatial_patterns_`` None), or the callback's return value.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 6, 8)); y = np.repeat([0, 1], 20)
    >>> X[y == 1, 2] += 0.5
    >>> path = [dict(mu1=m, mu2=0.1, nu1=m, nu2=0.1) for m in (0.05, 0.01)]
    >>> out = fit_penalty_paths(X, y, [path, path[::-1]])
    >>> [len(p) for p in out]
    [2, 2]
    """
    cb = None if callback is None else (lambda _f, p, k, est: callback(p, k, est))
    return fit_fold_paths(
        [(X, y, paths, sample_weight)], rank=rank, multi_class=multi_class, tol=tol,
        max_iter=max_iter, eta=eta, L_min=L_min, init=init, random_state=random_state,
        callback=cb, class_weight=class_weight, kernel=kernel,
    )[0]  # fmt: skip


def fit_fold_paths(
    folds: Sequence[tuple],
    *,
    rank: int = 1,
    multi_class: str = "ovr",
    tol: float = SolverSettings.tol,
    max_iter: int = SolverSettings.max_iter,
    eta: float = SolverSettings.eta,
    L_min: float = SolverSettings.L_min,
    init: str = "svd",
    random_state=None,
    callback: Callable | None = None,
    class_weight=None,
    kernel: str = SolverSettings.kernel,
    stop_early: Callable | None = None,
    check_every: int = 10,
):
    """Fit the warm-started penalty paths of several training sets in one lockstep.

    Every run makes the updates :func:`fit_penalty_paths` makes on its own training set;
    training sets of the same shape, dtype and classes (the folds of a stratified CV, as a
    rule) share the batches, so one iteration advances the runs of all of them.

    Parameters
    ----------
    folds : sequence of (X, y, paths) or (X, y, paths, sample_weight)
        One training set per fold: epochs (n_epochs, n_channels, n_times), labels
        (n_epochs,), its paths, as in :func:`fit_penalty_paths`, and optionally the
        epochs' weights (n_epochs,) or None.
    rank, multi_class, tol, max_iter, eta, L_min, init, random_state
        As in :class:`~sblr_rt.model.SparseBilinearLogisticRegression`.
    callback : callable | None
        ``callback(fold_index, path_index, point_index, estimator)`` as soon as a point
        is fitted; what it returns is stored in place of the estimator.
    class_weight : dict | "balanced" | None
        As in the estimator; ``"balanced"`` is computed on each training set.
    kernel : {"numpy", "numba"}
        As in :func:`fit_penalty_paths`.
    stop_early : callable | None
        ``stop_early(fold_index, path_index, point_index, estimator) -> bool``, asked every
        ``check_every`` iterations of a point that has not converged, with the point's
        current iterate as an estimator (``n_iter_`` its iterations so far): True ends the
        point there, as if it had converged (the callback gets that iterate and the path
        goes on from it). None (default): every point runs to ``tol`` or ``max_iter``.
        Cross-validation uses it to drop grid points that are clearly behind (racing).
    check_every : int
        Iterations between two questions to ``stop_early``.

    Returns
    -------
    results : list of list of list
        ``results[f][p][k]``: point ``k`` of path ``p`` of fold ``f``, as in
        :func:`fit_penalty_paths`.
    """
    params = dict(
        rank=rank, multi_class=multi_class, tol=tol, max_iter=max_iter, eta=eta,
        L_min=L_min, init=init, random_state=random_state,
    )  # fmt: skip
    settings = SolverSettings(tol=tol, max_iter=max_iter, eta=eta, L_min=L_min, kernel=kernel)
    sets, same = [], {}
    for f, (X, y, paths, *weight) in enumerate(folds):
        X, y_enc, classes = _check_inputs(X, y, rank, max_iter)
        w = sample_weights(np.asarray(y), (weight or [None])[0], class_weight, X.shape[0])
        # Standardised as the estimator standardises (the penalties are relative to it).
        X, scale = standardise(X, sample_weight=w)
        points = [list(path) for path in paths]
        pens = [
            [_point_penalties(pt, f"fold {f}, path {p}, point {k}") for k, pt in enumerate(path)]
            for p, path in enumerate(points)
        ]
        problems = class_problems(y_enc, classes.size, multi_class, w)
        sets.append(_TrainingSet(X, problems, classes, points, pens, scale))
        same.setdefault((X.shape, X.dtype.str, tuple(classes.tolist())), []).append(f)
    if check_every < 1:
        raise ValueError(f"'check_every' must be at least 1; got {check_every}.")
    results = [None] * len(sets)
    with single_threaded_blas():
        for members in same.values():
            lockstep = _Lockstep([sets[f] for f in members], params, settings, members, callback)
            if stop_early is not None:
                lockstep.stop_early, lockstep.check_every = stop_early, check_every
            out = lockstep.run()
            for f, res in zip(members, out, strict=True):
                results[f] = res
    return results


def _check_inputs(X, y, rank, max_iter):
    """Return X checked, the encoded labels and the classes."""
    X = check_array(X, allow_nd=True, dtype=[np.float64, np.float32], order="C")
    if X.ndim != 3:
        raise ValueError(f"'X' must be 3-D (n_epochs, n_channels, n_times); got shape {X.shape}.")
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"'y' must have shape ({X.shape[0]},) to match 'X'; got {y.shape}.")
    _, s, t = X.shape
    if not 1 <= rank <= min(s, t):
        raise ValueError(f"'rank' must lie in [1, {min(s, t)}]; got {rank}.")
    SOLVER_RULES["max_iter"].check("max_iter", max_iter)
    le = LabelEncoder()
    y_enc = le.fit_transform(y)
    if le.classes_.size < 2:
        raise ValueError(f"'y' must contain at least 2 classes; got {le.classes_.tolist()}.")
    return X, y_enc, le.classes_


@dataclass
class _TrainingSet:
    """One training set of :func:`fit_fold_paths`, checked and standardised.

    ``points`` are the caller's path points, ``pens`` their penalties as tuples.
    """

    X: np.ndarray
    problems: list
    classes: np.ndarray
    points: list
    pens: list
    scale: float


class _Lockstep:
    """Paths fitted in lockstep: one :class:`BCPDBatch` per class problem, one run per path.

    Run ``j`` of every batch is path ``runs[j] = (d, p)`` of training set ``d``;
    ``position[j]`` is the point it is at. With one training set the labels are shared;
    with several (of the same size and classes) each run has its own row of labels.
    """

    def __init__(self, sets, params, settings, fold_ids, callback):
        self.sets, self.params, self.settings = sets, params, settings
        self.fold_ids, self.callback = fold_ids, callback
        self.results = [[[None] * len(path) for path in ts.points] for ts in sets]
        self.runs = [
            (d, p) for d, ts in enumerate(sets) for p, path in enumerate(ts.points) if path
        ]
        self.dataset = np.array([d for d, _ in self.runs], dtype=int)
        self.position = [0] * len(self.runs)
        self.stop_early, self.check_every = None, 1

    def run(self):
        """Fit every path; return ``results[d][p][k]``."""
        if not self.runs:
            return self.results
        par = self.params
        self.cold = []
        for ts in self.sets:
            x_mean, Ds = moments(ts.X, ts.problems)
            self.cold.append(
                [
                    (*cold_start(x_mean, D, par["rank"], par["init"], par["random_state"]), None)
                    for D in Ds
                ]
            )
        first = [self.sets[d].pens[p][0] for d, p in self.runs]
        starts = [self.cold_starts(d, pen) for (d, _), pen in zip(self.runs, first, strict=True)]
        self.batches = [
            BCPDBatch(
                _stack([self.sets[d].problems[c] for d, _ in self.runs]),
                [st[c][0] for st in starts],
                [st[c][1] for st in starts],
                [st[c][2] for st in starts],
                *(ElasticNet(*pair) for pair in np.array(first).T.reshape(2, 2, -1)),
                self.settings,
            )
            for c in range(len(self.sets[0].problems))
        ]
        while any(batch.active.size for batch in self.batches):
            self.iterate()
            for j, (d, p) in enumerate(self.runs):
                if self.position[j] >= len(self.sets[d].points[p]):
                    continue
                if all(b.done(j) for b in self.batches) or self.raced(j):
                    self.advance(j)
        return self.results

    def raced(self, j):
        """Whether ``stop_early`` ends run ``j``'s point now (then its batches stop it)."""
        k = max(int(batch.k[j]) for batch in self.batches)  # a class problem may be done
        if self.stop_early is None or k == 0 or k % self.check_every:
            return False
        d, p = self.runs[j]
        if not self.stop_early(self.fold_ids[d], p, self.position[j], self.estimator(j)):
            return False
        for batch in self.batches:
            batch.stop(j)
        return True

    def cold_starts(self, d, pen):
        """Return the cold start of every class problem of set ``d`` for penalties ``pen``."""
        if self.params["init"] != "svd_gradient":
            return self.cold[d]
        ts = self.sets[d]
        return ray_scaled(
            ts.X, ts.problems, self.cold[d], ElasticNet(*pen[:2]), ElasticNet(*pen[2:])
        )

    def products(self, live, factors, product):
        """Return ``product(X, factors)`` of every live batch's active runs, one part per batch.

        One product per training set, over the factors of all its active runs.
        """
        if len(self.sets) == 1:
            P = product(self.sets[0].X, np.concatenate([getattr(b, factors)() for b in live]))
            return _split(P, [b.active.size * b.m for b in live])
        parts = [[] for _ in live]
        for d, ts in enumerate(self.sets):
            runs = [b.active[self.dataset[b.active] == d] for b in live]
            if not any(r.size for r in runs):
                continue
            blocks = [getattr(b, factors)(r) for b, r in zip(live, runs, strict=True)]
            P = product(ts.X, np.concatenate(blocks))
            sizes = [r.size * b.m for b, r in zip(live, runs, strict=True)]
            for i, part in enumerate(_split(P, sizes)):
                parts[i].append(part)
        return [np.concatenate(p) for p in parts]

    def iterate(self):
        """One U-block and one V-block step of every live run, two passes over each X."""
        live = [batch for batch in self.batches if batch.active.size]
        for batch, part in zip(live, self.products(live, "V3", x_times_v), strict=True):
            batch.u_step(part)
        for batch, part in zip(live, self.products(live, "U3", x_times_u), strict=True):
            batch.v_step(part)

    def estimator(self, j):
        """Return run ``j``'s current iterate as an estimator of its current point."""
        d, p = self.runs[j]
        ts, k = self.sets[d], self.position[j]
        sols = [batch.result(j) for batch in self.batches]
        two = ts.classes.size == 2
        U, V, b, n_iter, objective = assemble(sols, ts.classes.size, self.params["multi_class"])
        return SparseBilinearLogisticRegression.from_factors(
            (U[0] if two else U) / ts.scale,
            V[0] if two else V,
            b,
            ts.classes,
            fit_info={"n_iter": n_iter, "objective": objective},
            **self.params,
            **ts.points[p][k],
        )

    def finish(self, j):
        """Store run ``j``'s fitted point; return whether it collapsed."""
        d, p = self.runs[j]
        k = self.position[j]
        est = self.estimator(j)
        out = est if self.callback is None else self.callback(self.fold_ids[d], p, k, est)
        self.results[d][p][k] = out
        self.position[j] = k + 1
        return _collapsed_factors(est)

    def advance(self, j):
        """Store run ``j``'s point and restart it on the next point of its path."""
        collapsed = self.finish(j)
        d, p = self.runs[j]
        if self.position[j] == len(self.sets[d].points[p]):
            return  # the path is finished: its runs stay done
        pen = self.sets[d].pens[p][self.position[j]]
        if collapsed:  # zero is a fixed point: start the next point cold
            for batch, (U0, V0, b0, *_) in zip(
                self.batches, self.cold_starts(d, pen), strict=True
            ):
                batch.restart(j, *pen, U0=U0, V0=V0, b0=b0)
        else:
            for batch in self.batches:
                batch.restart(j, *pen)

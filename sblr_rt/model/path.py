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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_array

from ._fitting import assemble, class_problems, cold_start, moments, ray_scaled, rescale_for_fit
from .estimator import SparseBilinearLogisticRegression
from .penalties import ElasticNet
from .solver import BCPDBatch, single_threaded_blas, x_times_u, x_times_v

__all__ = ["fit_penalty_paths"]

_KEYS = ("mu1", "mu2", "nu1", "nu2")


def _point_penalties(point, where):
    """Return (mu1, mu2, nu1, nu2) of a path point, checked."""
    if not isinstance(point, dict) or set(point) != set(_KEYS):
        raise ValueError(f"each path point must be a dict of {_KEYS}; got {point!r} at {where}.")
    values = tuple(float(point[k]) for k in _KEYS)
    if any(not np.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"penalties must be finite and >= 0; got {point} at {where}.")
    return values


def _scaled(penalties, scale):
    """Return the penalties of the X / scale problem (as the estimator's ``_penalties``)."""
    mu1, mu2, nu1, nu2 = penalties
    return (mu1 / scale, mu2 / scale / scale, nu1, nu2)


def _split(product, batches):
    """Split a product over the concatenated active runs back into one part per batch."""
    sizes = np.cumsum([batch.active.size * batch.m for batch in batches])[:-1]
    return np.split(product, sizes)


def fit_penalty_paths(
    X,
    y,
    paths: Sequence[Sequence[dict]],
    *,
    rank: int = 1,
    multi_class: str = "ovr",
    tol: float = 1e-3,
    max_iter: int = 500,
    eta: float = 2.0,
    L_min: float = 1e-4,
    init: str = "svd",
    random_state=None,
    callback: Callable | None = None,
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
    X, y_enc, classes = _check_inputs(X, y, rank, max_iter)
    problems = class_problems(y_enc, classes.size, multi_class)
    params = dict(
        rank=rank, multi_class=multi_class, tol=tol, max_iter=max_iter, eta=eta,
        L_min=L_min, init=init, random_state=random_state,
    )  # fmt: skip
    points = [list(path) for path in paths]
    # Data far from unit scale are fitted as the estimator fits them (see rescale_for_fit).
    X, scale = rescale_for_fit(X, L_min, stacklevel=2)
    pens = [
        [_scaled(_point_penalties(pt, f"path {p}, point {k}"), scale) for k, pt in enumerate(path)]
        for p, path in enumerate(points)
    ]
    run = _Lockstep(X, problems, classes, params, points, pens, scale=scale, callback=callback)
    with single_threaded_blas():
        return run.run()


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
    if max_iter < 1:
        raise ValueError(f"'max_iter' must be at least 1; got {max_iter}.")
    le = LabelEncoder()
    y_enc = le.fit_transform(y)
    if le.classes_.size < 2:
        raise ValueError(f"'y' must contain at least 2 classes; got {le.classes_.tolist()}.")
    return X, y_enc, le.classes_


class _Lockstep:
    """Paths fitted in lockstep: one :class:`BCPDBatch` per class problem, one run per path.

    Run ``j`` of every batch is path ``todo[j]``; ``position[p]`` is the point path ``p``
    is at. ``pens`` are the penalties of the (possibly rescaled) problem, ``points`` the
    caller's.
    """

    def __init__(self, X, problems, classes, params, points, pens, *, scale, callback):
        self.X, self.problems, self.classes, self.params = X, problems, classes, params
        self.points, self.pens, self.scale, self.callback = points, pens, scale, callback
        self.results = [[None] * len(path) for path in points]
        self.todo = [p for p, path in enumerate(points) if path]
        self.position = dict.fromkeys(self.todo, 0)

    def run(self):
        """Fit every path; return ``results[p][k]``."""
        if not self.todo:
            return self.results
        x_mean, Ds = moments(self.X, self.problems)
        par = self.params
        self.cold = [
            (*cold_start(x_mean, D, par["rank"], par["init"], par["random_state"]), None, None)
            for D in Ds
        ]
        first = [self.pens[p][0] for p in self.todo]
        starts = [self.cold_starts(pen) for pen in first]
        self.batches = [
            BCPDBatch(
                datafit,
                [st[c][0] for st in starts],
                [st[c][1] for st in starts],
                [st[c][2] for st in starts],
                *np.array(first).T,
                tol=par["tol"],
                max_iter=par["max_iter"],
                eta=par["eta"],
                L_min=par["L_min"],
            )
            for c, datafit in enumerate(self.problems)
        ]
        while any(batch.active.size for batch in self.batches):
            self.iterate()
            for j, p in enumerate(self.todo):
                if self.position[p] < len(self.points[p]) and all(b.done(j) for b in self.batches):
                    self.advance(j, p)
        return self.results

    def cold_starts(self, pen):
        """Return the cold start of every class problem for penalties ``pen``."""
        if self.params["init"] != "svd_gradient":
            return self.cold
        return ray_scaled(
            self.X, self.problems, self.cold, ElasticNet(*pen[:2]), ElasticNet(*pen[2:])
        )

    def iterate(self):
        """One U-block and one V-block step of every live run, two passes over X."""
        live = [batch for batch in self.batches if batch.active.size]
        A = x_times_v(self.X, np.concatenate([batch.V3() for batch in live]))
        for batch, part in zip(live, _split(A, live), strict=True):
            batch.u_step(part)
        B = x_times_u(self.X, np.concatenate([batch.U3() for batch in live]))
        for batch, part in zip(live, _split(B, live), strict=True):
            batch.v_step(part)

    def finish(self, j, p):
        """Store the fitted point of path ``p`` (run ``j``); return whether it collapsed."""
        k = self.position[p]
        sols = [batch.result(j) for batch in self.batches]
        two = self.classes.size == 2
        U, V, b, n_iter, objective = assemble(sols, self.classes.size, self.params["multi_class"])
        est = SparseBilinearLogisticRegression.from_factors(
            (U[0] if two else U) / self.scale,
            V[0] if two else V,
            b,
            self.classes,
            **self.params,
            **self.points[p][k],
        )
        est.n_iter_, est.objective_ = n_iter, objective
        self.results[p][k] = est if self.callback is None else self.callback(p, k, est)
        self.position[p] = k + 1
        return not (np.any(U) and np.any(V))

    def advance(self, j, p):
        """Store run ``j``'s point and restart it on the next point of path ``p``."""
        collapsed = self.finish(j, p)
        if self.position[p] == len(self.points[p]):
            return  # the path is finished: its runs stay done
        pen = self.pens[p][self.position[p]]
        if collapsed:  # zero is a fixed point: start the next point cold
            for batch, (U0, V0, b0, _, _) in zip(self.batches, self.cold_starts(pen), strict=True):
                batch.restart(j, *pen, U0=U0, V0=V0, b0=b0)
        else:
            for batch in self.batches:
                batch.restart(j, *pen)

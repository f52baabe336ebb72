"""Mixed-precision route of the block coordinate proximal descent (``solver="fast"``).

At the paper's BCI shape (210 x 118 x 100) float64 epochs take 20 MB, more than the
cache, and the two passes over X of every iteration dominate a fit; float32 epochs take
half the memory and their passes run about 7x faster. This route therefore runs the
paper's iterations (:func:`~sblr_rt.model.solver.bcpd`, unchanged) on a float32 copy of
X until its stopping rule holds, then continues the very same iterations on the float64
data from that point until the float64 stopping rule ``q^k <= tol`` holds. The small
state (factors, scores, losses, gradients) is float64 throughout, and every iteration
is a descent step of the float64 objective up to float32 rounding of the products; the
float64 iterations that finish the fit are exact descent steps, so the result is a point
at which the paper's own stopping test holds on the data as given.

The step parameters start where the paper starts them (``L_min``, or a warm start's).
A start at the loss's curvature along its gradient saved about 10 % of a fit at the BCI
shape, but its first long step took one of the paper's Table 1 problems (s = t = 50,
l2-dominated, the paper's start) to the zero factors, which the paper's route does not
reach (F = log 2 against 0.519); with the paper's start the route ends no higher than
the paper's on every problem of ``benchmarks/solver.py``.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.model.solver import SolverResult, bcpd

__all__ = ["TOL32", "as_float32", "bcpd_mixed"]

#: The float32 phase stops at ``TOL32 * tol``: its iterations are cheap, and going further
#: down the slow tail than the paper's rule makes the fit end no higher than the paper's
#: (with 1.0 one l1 case of the tests ended 3e-6 higher; 0.3 and 0.1 gave F no higher than
#: the paper's on all 18 cases of a seed sweep, 0.3 with 1-2 fewer iterations).
TOL32 = 0.3


def as_float32(X):
    """Return X as a C-contiguous float32 array (X itself when it already is one)."""
    # Entries beyond the float32 range become inf here; the caller then measures the
    # scale on X itself, rescales it and converts again.
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(X, dtype=np.float32)


def bcpd_mixed(X, X32, datafit, U0, V0, b0, penalty_u, penalty_v, *, tol, max_iter, **kwargs):
    """Run :func:`~sblr_rt.model.solver.bcpd` on float32 products, then finish on X.

    Parameters
    ----------
    X : ndarray, shape (n, s, t), C-contiguous float32 or float64
        Samples as given.
    X32 : ndarray, shape (n, s, t), C-contiguous float32
        X in float32 (X itself when X is float32: the route is then plain ``bcpd``).
        The float32 phase stops at ``q^k <= TOL32 * tol``.
    datafit, U0, V0, b0, penalty_u, penalty_v, tol, max_iter, **kwargs
        As in :func:`~sblr_rt.model.solver.bcpd` (``kwargs``: ``eta``, ``L_min``,
        ``L_u0``, ``L_v0``).

    Returns
    -------
    SolverResult
        ``objective`` holds ``F^0`` and the objective after every iteration of both
        phases (float64 products for the last ones), ``n_iter`` counts both phases and
        ``converged`` is the float64 stopping test.
    """
    if X32 is X:
        return bcpd(
            X, datafit, U0, V0, b0, penalty_u, penalty_v, tol=tol, max_iter=max_iter, **kwargs
        )
    first = bcpd(
        X32,
        datafit,
        U0,
        V0,
        b0,
        penalty_u,
        penalty_v,
        tol=tol * TOL32,
        max_iter=max_iter,
        **kwargs,
    )
    kwargs.update(L_u0=first.L_u, L_v0=first.L_v)
    last = bcpd(
        X,
        datafit,
        first.U,
        first.V,
        first.b,
        penalty_u,
        penalty_v,
        tol=tol,
        max_iter=max(max_iter - first.n_iter, 1),
        **kwargs,
    )
    # The float64 F^0 replaces the float32 evaluation of the same point.
    return SolverResult(
        U=last.U,
        V=last.V,
        b=last.b,
        objective=np.concatenate([first.objective[:-1], last.objective]),
        n_iter=first.n_iter + last.n_iter,
        converged=last.converged,
        L_u=last.L_u,
        L_v=last.L_v,
        n_trials=first.n_trials + last.n_trials,
        q=first.q + last.q,
    )

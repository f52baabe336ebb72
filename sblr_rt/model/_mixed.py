"""Mixed-precision route of the block coordinate proximal descent (``solver="fast"``).

At the paper's BCI shape (210 x 118 x 100) float64 epochs take 20 MB, more than the
cache, and the two passes over X of every iteration dominate a fit; float32 epochs take
half the memory, and their passes are faster (docs/benchmarks.md, "Solver"). This
route therefore runs the paper's iterations (:func:`~sblr_rt.model.solver.bcpd`, each
block update one compiled call, :data:`KERNEL`) on a standardised float32 copy of X
until its stopping rule holds, then continues the very same iterations on the float64
data from that point until the float64 stopping rule ``q^k <= tol`` holds (the float64
data are not copied: the products are divided by the scale, see :func:`fast_inputs`).
The small state (factors, scores, losses, gradients) is float64 throughout, and every iteration
is a descent step of the float64 objective up to float32 rounding of the products; the
float64 iterations that finish the fit are exact descent steps, so the result is a point
at which the paper's own stopping test holds on the data as given.

The step parameters start where the paper starts them (``L_min``, or a warm start's):
a longer first step can reach the zero factors where the paper's route does not (why
this start: docs/benchmarks.md, "Solver"). The route's objective is compared with the
paper's route on the Table 1 problems by ``benchmarks/solver.py --routes``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.utils import assert_all_finite

from sblr_rt.model._fitting import data_scale, standardise, unit_scale
from sblr_rt.model.solver import SolverResult, bcpd

__all__ = ["KERNEL", "TOL32", "as_float32", "bcpd_mixed", "fast_inputs"]

#: The float32 phase stops at ``TOL32 * tol``: its iterations are cheap, and going further
#: down the slow tail than the paper's rule makes the fit end no higher than the paper's
#: (with 1.0 one l1 case of the tests ended 3e-6 higher; 0.3 and 0.1 gave F no higher than
#: the paper's on all 18 cases of a seed sweep, 0.3 with 1-2 fewer iterations).
TOL32 = 0.3

#: The block update of both phases (:data:`sblr_rt.model.solver.KERNELS`): the compiled one.
#: ``benchmarks/solver.py`` sets it to "numpy" to measure what the compiled kernel earns.
KERNEL = "numba"


def as_float32(X):
    """Return X as a C-contiguous float32 array (X itself when it already is one)."""
    # Entries beyond the float32 range become inf here; the caller then measures the
    # scale on X itself, rescales it and converts again.
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(X, dtype=np.float32)


def fast_inputs(X, sample_weight=None):
    """Return the fast route's data: X as given, its standardised float32 copy, the scale.

    Float64 epochs are read twice in all: once converted to float32, and once more as the
    float32 copy is divided by the scale in place. The scale is the RMS of the float32
    copy (a float32 dot product reads half the bytes of the float64 sum of squares, and its
    relative error of about 1e-6 only moves the standardising factor, which any value
    fits), and the same sum of squares proves X finite, so scikit-learn's check of the
    float64 data (one more pass) is left out (``check_X(..., ensure_all_finite=False)``).
    The float64 data are never divided: the float64 iterations divide their products by
    the scale instead (:func:`~sblr_rt.model.solver.bcpd`'s ``x_scale``). Sample weights,
    values beyond the float32 range and sums of squares that could overflow or underflow
    take the exact scale (:func:`~sblr_rt.model._fitting.data_scale`), then convert.

    Parameters
    ----------
    X : ndarray, shape (n_epochs, n_channels, n_times), float32 or float64
        Epochs as validated, finite or not (a non-finite entry raises scikit-learn's
        ``ValueError``).
    sample_weight : ndarray, shape (n_epochs,) | None
        Epoch weights (the RMS is the weighted one).

    Returns
    -------
    X64 : ndarray
        X itself for float64 input (unscaled: divide its products by ``scale``); for
        float32 input, the standardised float32 epochs (``scale`` then does not apply
        to it).
    X32 : ndarray, shape of X, float32
        The standardised epochs in float32 (``X64`` itself for float32 input).
    scale : float
        The RMS the fit divides the data by (1.0 for data used as given).
    """
    if X.dtype == np.float32:  # the paper's iterations on float32 data
        assert_all_finite(X, input_name="X")
        X_fit, scale = standardise(X, sample_weight=sample_weight)
        return X_fit, X_fit, scale
    X32 = as_float32(X)  # a new array, ours to scale in place
    flat = X32.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        ss = float(np.dot(flat, flat)) if flat.size else 0.0
    # equal weights: the weighted RMS is the plain one (and the fit the unweighted one)
    uniform = sample_weight is None or np.all(sample_weight == sample_weight[0])
    if uniform and np.isfinite(ss) and 1e-30 < ss < 1e30:
        scale = unit_scale(np.sqrt(ss / flat.size))
        if scale != 1.0:
            np.multiply(X32, np.float32(1.0 / scale), out=X32)
        return X, X32, scale
    assert_all_finite(X, input_name="X")
    scale = unit_scale(data_scale(X, sample_weight))
    if scale != 1.0:
        X32 = as_float32(X / scale)
    return X, X32, scale


def bcpd_mixed(
    X, X32, datafit, U0, V0, b0, penalty_u, penalty_v, settings, *, x_scale=1.0, **starts
):
    """Run :func:`~sblr_rt.model.solver.bcpd` on float32 products, then finish on X.

    Parameters
    ----------
    X : ndarray, shape (n, s, t), C-contiguous float32 or float64
        Samples as given.
    X32 : ndarray, shape (n, s, t), C-contiguous float32
        ``X / x_scale`` in float32 (X itself when X is float32: the route is then plain
        ``bcpd``). The float32 phase stops at ``q^k <= TOL32 * settings.tol``.
    datafit, U0, V0, b0, penalty_u, penalty_v
        As in :func:`~sblr_rt.model.solver.bcpd`.
    settings : SolverSettings
        The rules of the fit; both phases use :data:`KERNEL`.
    x_scale : float
        The data of the problem are ``X / x_scale`` (see :func:`fast_inputs`).
    **starts
        ``L_u0``, ``L_v0`` as in :func:`~sblr_rt.model.solver.bcpd`.

    Returns
    -------
    SolverResult
        ``objective`` holds ``F^0`` and the objective after every iteration of both
        phases (float64 products for the last ones), ``n_iter`` counts both phases and
        ``converged`` is the float64 stopping test.
    """
    settings = replace(settings, kernel=KERNEL)
    args = (datafit, U0, V0, b0, penalty_u, penalty_v)
    if X32 is X:
        return bcpd(X, *args, settings, **starts)
    first = bcpd(X32, *args, settings, tol=settings.tol * TOL32, **starts)
    last = bcpd(
        X,
        datafit,
        first.U,
        first.V,
        first.b,
        penalty_u,
        penalty_v,
        settings,
        max_iter=max(settings.max_iter - first.n_iter, 1),
        L_u0=first.L_u,
        L_v0=first.L_v,
        x_scale=x_scale,
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

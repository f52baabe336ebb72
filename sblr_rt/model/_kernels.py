"""Compiled (numba) form of one block update of the solver for the logistic datafit.

:func:`~sblr_rt.model.solver._block` evaluates the proximal-linear trials of many runs in
vectorised numpy; with few runs each trial is a handful of small array operations, and the
interpreter's cost of calling them is most of an iteration (the figures: the solver's
benchmark, ``benchmarks/solver.py``). :func:`logistic_block` makes the same updates in one
compiled call: per run, the scores, loss and gradient at the current point, then the step
parameters ``L = max(L_min, L_prev eta^n)``, ``n = -1, 0, 1, ...``, one after another until
the sufficient-decrease test (in its Bregman form) passes. It accepts the same step as the
numpy code; the values agree up to the order of floating-point sums (the numpy code sums
by BLAS and pairwise reductions).

Compiled with ``cache=True``: the machine code is written beside this module (or in
numba's user-wide cache when that is read-only) on the first call, and a fresh process,
such as a calibration worker, loads it instead of compiling again.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["logistic_block"]

#: Below this change of the margin the divergence uses the expm1/log1p form (as the
#: numpy datafit's ``_SMALL``).
_SMALL = 1.0


@numba.njit(cache=True, nogil=True)
def _logaddexp0(x):
    # log(1 + exp(x)) without overflow, as np.logaddexp(0, x)
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@numba.njit(cache=True, nogil=True)
def _expit(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


#: Sums may be reassociated (vectorised dot products); NaN and inf keep their meaning, so
#: a test on a NaN divergence still fails as in numpy.
_FLAGS = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS)
def logistic_block(A, Z, b, y, w, l1, l2, L_prev, eta, L_min, max_trials):
    """Return the block update of K runs of a binary logistic problem.

    Parameters
    ----------
    A : ndarray, shape (K, n, p), float64
        ``X V`` (U-block) or ``X^T U`` (V-block) of each run.
    Z : ndarray, shape (K, p)
        The block's factor of each run.
    b : ndarray, shape (K,)
        Intercepts.
    y : ndarray, shape (1, n) or (K, n)
        Labels in {-1, +1}, shared or one row per run.
    w : ndarray, shape (1, n) or (K, n)
        Epoch weights of mean 1 (ones for an unweighted fit).
    l1, l2, L_prev : ndarray, shape (K,)
        Penalties and the last accepted step parameters.
    eta, L_min : float
    max_trials : int
        Step parameters tried at most per run.

    Returns
    -------
    Z_new : ndarray, shape (K, p)
    b_new, L, loss_new, loss0 : ndarray, shape (K,)
    trials : ndarray of int64, shape (K,)
        Distinct step parameters tried up to the accepted one (-1: none passed).
    """
    K, n, p = A.shape
    Z_new = np.empty((K, p))
    b_new = np.empty(K)
    L_acc = np.empty(K)
    loss_new = np.empty(K)
    loss0 = np.empty(K)
    trials = np.zeros(K, dtype=np.int64)
    margin = np.empty(n)
    sig = np.empty(n)
    loss_i = np.empty(n)
    G = np.empty(p)
    Zt = np.empty(p)
    for k in range(K):
        ky = k if y.shape[0] > 1 else 0
        kw = k if w.shape[0] > 1 else 0
        # the point: margins m = -y f, loss, gradient with respect to the scores
        gb = 0.0
        total = 0.0
        for j in range(p):
            G[j] = 0.0
        for i in range(n):
            f = b[k]
            for j in range(p):
                f += A[k, i, j] * Z[k, j]
            m = -y[ky, i] * f
            margin[i] = m
            loss_i[i] = _logaddexp0(m)
            total += w[kw, i] * loss_i[i]
            s = _expit(m)
            sig[i] = s
            g = -y[ky, i] * s * w[kw, i] / n
            gb += g
            for j in range(p):
                G[j] += g * A[k, i, j]
        loss0[k] = total / n
        last_L = -1.0
        accepted = False
        for step in range(-1, max_trials):
            L = max(L_min, L_prev[k] * eta**step)
            if L == last_L:  # clamped at L_min: that trial was made already
                continue
            last_L = L
            trials[k] += 1
            denom = L + l2[k]
            tau = l1[k] / denom
            step2 = 0.0
            for j in range(p):
                z = (L * Z[k, j] - G[j]) / denom
                z = z - min(max(z, -tau), tau)
                Zt[j] = z
                step2 += (z - Z[k, j]) ** 2
            bt = b[k] - gb / L
            step2 += (bt - b[k]) ** 2
            D = 0.0
            for i in range(n):
                f = bt
                for j in range(p):
                    f += A[k, i, j] * Zt[j]
                d = -y[ky, i] * f - margin[i]
                s = sig[i]
                if abs(d) <= _SMALL:
                    D += w[kw, i] * (math.log1p(s * math.expm1(d)) - s * d)
                else:
                    D += w[kw, i] * (_logaddexp0(margin[i] + d) - loss_i[i] - s * d)
            if D / n <= 0.5 * L * step2:
                new_total = 0.0  # the loss at the accepted point only
                for i in range(n):
                    f = bt
                    for j in range(p):
                        f += A[k, i, j] * Zt[j]
                    new_total += w[kw, i] * _logaddexp0(-y[ky, i] * f)
                for j in range(p):
                    Z_new[k, j] = Zt[j]
                b_new[k] = bt
                L_acc[k] = L
                loss_new[k] = new_total / n
                accepted = True
                break
        if not accepted:
            trials[k] = -1
    return Z_new, b_new, L_acc, loss_new, loss0, trials

"""The two products with the data that one solver iteration makes: ``X V`` and ``X^T U``.

Each is one pass over the epochs X (n, s, t); everything else in an iteration works on
the small results (``O(n s r)``). Shared by the solver, the penalty paths in lockstep and
the mixed-precision route. Each is one matrix product; the form of ``X V`` depends on the
width of ``V`` only (see :data:`WIDE`), never on the size of the data or the machine, and
the results differ from the definition only by rounding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["x_times_u", "x_times_v"]

#: Widths ``m r`` above which :func:`x_times_v` is one product over all epochs' rows,
#: ``(n s, t) @ (t, m r)``; up to it, one product per epoch (:func:`numpy.matmul`'s
#: stack), the faster form for thin ``V``. The two forms round differently, so the value
#: is part of what a calibration computes: the penalty paths in lockstep are wider than it
#: (up to 30 l2 pairs x rank 3), a single fit is not.
WIDE = 64


def x_times_v(X, V):
    """Return ``A[c, i] = vec(X_i V_c)`` for all classes in one pass over ``X``.

    Parameters
    ----------
    X : ndarray, shape (n, s, t), C-contiguous
    V : ndarray, shape (m, t, r)

    Returns
    -------
    ndarray, shape (m, n, s * r), float64
    """
    n, s, t = X.shape
    m, _, r = V.shape
    v_all = np.ascontiguousarray(V.transpose(1, 0, 2).reshape(t, m * r), dtype=X.dtype)
    if m * r <= WIDE:
        prod = np.matmul(X, v_all).reshape(n, s, m, r)
    else:
        prod = (X.reshape(n * s, t) @ v_all).reshape(n, s, m, r)
    return np.ascontiguousarray(prod.transpose(2, 0, 1, 3), dtype=np.float64).reshape(m, n, s * r)


def x_times_u(X, U):
    """Return ``B[c, i] = vec(X_i^T U_c)`` for all classes in one pass over ``X``.

    Parameters
    ----------
    X : ndarray, shape (n, s, t), C-contiguous
    U : ndarray, shape (m, s, r)

    Returns
    -------
    ndarray, shape (m, n, t * r), float64
    """
    n, s, t = X.shape
    m, _, r = U.shape
    u_all_t = np.ascontiguousarray(U.transpose(0, 2, 1).reshape(m * r, s), dtype=X.dtype)
    prod = np.matmul(u_all_t, X).reshape(n, m, r, t)
    return np.ascontiguousarray(prod.transpose(1, 0, 3, 2), dtype=np.float64).reshape(m, n, t * r)

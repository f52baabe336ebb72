"""The two products with the data that one solver iteration makes: ``X V`` and ``X^T U``.

Each is one pass over the epochs X (n, s, t); everything else in an iteration works on
the small results (``O(n s r)``). Shared by the solver, the penalty paths in lockstep and
the mixed-precision route. Both are one :func:`numpy.matmul` each, whatever the width and
the size of the data: the results differ from the definition only by rounding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["x_times_u", "x_times_v"]


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
    prod = np.matmul(X, v_all).reshape(n, s, m, r)
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

"""The two products with the data that one solver iteration makes: ``X V`` and ``X^T U``.

Each is one pass over the epochs X (n, s, t); everything else in an iteration works on
the small results (``O(n s r)``). Shared by the solver, the penalty paths in lockstep and
the mixed-precision route.
"""

from __future__ import annotations

import numpy as np

__all__ = ["x_times_u", "x_times_v"]


#: Widths ``m r`` up to which :func:`x_times_v` multiplies epoch by epoch (measured at
#: 168 x 118 x 100, one thread: faster up to 50 columns, slower at 100).
_BATCHED_MAX_WIDTH = 64


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
    if m * r <= _BATCHED_MAX_WIDTH:
        # n products X_i V: OpenBLAS runs a thin (n s x t) @ (t x w) GEMM at about half
        # the speed of n small ones (168 x 118 x 100 float32, w = 5: 0.81 ms vs 0.42 ms).
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

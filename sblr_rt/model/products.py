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

#: Widths that OpenBLAS multiplies slowly, and what the products do instead on data of at
#: least :data:`BY_WIDTH_MIN_VALUES` values. Measured at 168 x 118 x 100 float32, one
#: thread, ms per product ``X V`` / ``X^T U`` by width: 1: 0.10/0.09, 2: 0.33/0.31,
#: 3: 0.49/0.45, 4: 0.39/0.27, 5: 0.57/0.43, 6: 0.58/0.46, 7: 0.77/0.61, 8: 0.39/0.45
#: (float64 alike). Two or three columns therefore go one matrix-vector product each
#: (0.19 and 0.28 ms), and ``X V`` pads five to seven columns with zeros to eight. The
#: search's lockstep paths run at these widths (five l2 paths of rank 1; ranks 1-3): at
#: (210, 118, 100) the selection took 2.5-2.7 s against 2.8-3.4 s in alternating runs.
_ONE_BY_ONE = (2, 3)
_PAD_TO = 8

#: Data of fewer values keep one product per call whatever the width. Other calls round
#: differently, and on small calibrations, whose products take microseconds, that moved
#: single cross-run results both ways (``benchmarks/accuracy.py``: S013 spectral 0.267 ->
#: 0.533, S005 covariance 0.667 -> 0.600, BCI Competition 2003 IV auto 0.852 -> 0.847).
#: A million is the search's ``large_fold``: the calibrations of ``accuracy.py`` (at most
#: 195,000 values per fold) stay as they were, bit for bit.
BY_WIDTH_MIN_VALUES = 1_000_000


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
    w = m * r
    by_width = X.size >= BY_WIDTH_MIN_VALUES
    if by_width and w in _ONE_BY_ONE:
        prod = np.empty((n, s, w), dtype=X.dtype)
        for k in range(w):
            prod[..., k] = np.matmul(X, v_all[:, k])
        prod = prod.reshape(n, s, m, r)
    elif by_width and 4 < w < _PAD_TO:
        padded = np.zeros((t, _PAD_TO), dtype=X.dtype)
        padded[:, :w] = v_all
        prod = np.matmul(X, padded)[..., :w].reshape(n, s, m, r)
    elif w <= _BATCHED_MAX_WIDTH:
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
    if X.size >= BY_WIDTH_MIN_VALUES and m * r in _ONE_BY_ONE:
        prod = np.empty((n, m * r, t), dtype=X.dtype)
        for k in range(m * r):
            prod[:, k] = np.matmul(u_all_t[k], X)
        prod = prod.reshape(n, m, r, t)
    else:
        prod = np.matmul(u_all_t, X).reshape(n, m, r, t)
    return np.ascontiguousarray(prod.transpose(1, 0, 3, 2), dtype=np.float64).reshape(m, n, t * r)

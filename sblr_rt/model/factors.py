"""Readable factors: a canonical form of (U, V) and Haufe activation patterns.

The bilinear factors are not unique: ``U G`` and ``V G^{-T}`` give the same weight matrix
``W = U V^T``; under the elastic-net penalties paired sign flips and the column order
remain free. :func:`canonical_factors` fixes one representative and
:func:`spatial_patterns` turns the spatial filters into activation patterns
(Haufe et al. 2014, NeuroImage 87:96-110), which is where the brain signal is.
"""

from __future__ import annotations

import numpy as np

__all__ = ["canonical_factors", "spatial_patterns"]


def canonical_factors(U, V):
    """Return a canonical form of the factors of one class.

    Each component ``k`` (column pair ``u_k, v_k``, contribution ``u_k v_k^T`` to W) is
    rescaled so that the spatial column has unit Euclidean norm and the temporal column
    carries the scale ``|u_k| |v_k|``. Components are sorted by that scale, largest first
    (ties keep their original order). Sign rule: the entry of largest absolute value of each
    spatial column is made positive (the first one if several tie); the temporal column is
    flipped with it, so ``u_k v_k^T`` is unchanged. An all-zero component stays zero and goes
    last.

    Parameters
    ----------
    U : ndarray, shape (n_channels, rank)
        Spatial factor.
    V : ndarray, shape (n_times, rank)
        Temporal factor.

    Returns
    -------
    spatial : ndarray, shape (n_channels, rank)
        Unit-norm spatial columns (zero for a zero component).
    temporal : ndarray, shape (n_times, rank)
        Temporal columns carrying the scale.
    order : ndarray of int, shape (rank,)
        ``order[j]`` is the column of ``U``/``V`` that became column ``j``.
    signs : ndarray, shape (rank,)
        +1 or -1: the sign applied to original column ``order[j]``.
    """
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    nu = np.linalg.norm(U, axis=0)
    nv = np.linalg.norm(V, axis=0)
    strength = nu * nv
    order = np.argsort(-strength, kind="stable")
    spatial = np.zeros_like(U)
    temporal = np.zeros_like(V)
    signs = np.ones(U.shape[1])
    for j, k in enumerate(order):
        if strength[k] == 0:
            continue
        u = U[:, k] / nu[k]
        sign = 1.0 if u[np.argmax(np.abs(u))] > 0 else -1.0
        signs[j] = sign
        spatial[:, j] = sign * u
        temporal[:, j] = sign * nu[k] * V[:, k]
    return spatial, temporal, order, signs


def spatial_patterns(X, U, V):
    """Return Haufe activation patterns of the spatial filters, one per component.

    For component ``k`` the model applies the spatial filter ``u_k`` to the temporally
    projected epochs ``z_i = X_i v_k`` (n_channels,). As MNE's ``LinearModel.patterns_``
    does for a linear model with a one-dimensional output, the pattern is
    ``a_k = Cov(z) u_k``, the covariance taken over epochs (``ddof=1``).

    Parameters
    ----------
    X : ndarray, shape (n_epochs, n_channels, n_times)
        Training epochs.
    U : ndarray, shape (n_channels, rank)
    V : ndarray, shape (n_times, rank)

    Returns
    -------
    ndarray, shape (n_channels, rank)
    """
    n, s, t = X.shape
    V = np.asarray(V, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    Z = (X.reshape(n * s, t) @ V.astype(X.dtype)).reshape(n, s, -1).astype(np.float64)
    Z -= Z.mean(axis=0)
    ddof = max(n - 1, 1)
    proj = np.einsum("nsk,sk->nk", Z, U)
    return np.einsum("nsk,nk->sk", Z, proj) / ddof

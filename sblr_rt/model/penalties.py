r"""Elastic-net penalty and its proximal operator (paper eq. 7 and 12).

The penalty on a factor ``Z`` is

.. math:: r(Z) = \lambda_1 \|Z\|_1 + \frac{\lambda_2}{2} \|Z\|_F^2 ,

and the proximal-linear step of the paper,

.. math::

    Z^+ = \arg\min_Z \langle G, Z - Z^0 \rangle + \frac{L}{2} \|Z - Z^0\|_F^2 + r(Z)
        = \mathcal{S}_{\lambda_1 / (L + \lambda_2)}
          \left( \frac{L Z^0 - G}{L + \lambda_2} \right),

has the closed form of component-wise soft-thresholding :math:`\mathcal{S}_\tau`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ElasticNet", "elastic_net_prox", "elastic_net_value", "soft_threshold"]


def soft_threshold(z, tau):
    r"""Apply the component-wise shrinkage operator :math:`\mathcal{S}_\tau`.

    Parameters
    ----------
    z : ndarray, any shape
        Input values.
    tau : float | ndarray
        Non-negative threshold (an array broadcasts against ``z``: one threshold per run).

    Returns
    -------
    ndarray, same shape as ``z``
        ``z - tau`` where ``z > tau``, ``z + tau`` where ``z < -tau`` and 0 elsewhere.
    """
    z = np.asarray(z)
    if not np.any(tau):
        return z.copy()
    # z minus z clipped to [-tau, tau]: the same values as sign(z) max(|z| - tau, 0) (zero
    # exactly where |z| <= tau) in three array operations instead of five.
    return z - np.minimum(np.maximum(z, -tau), tau)


def elastic_net_prox(z0, grad, L, l1, l2):
    r"""Return the proximal-linear update of the paper's eq. 12, for one run or many.

    Parameters
    ----------
    z0 : ndarray
        Current factor :math:`Z^0`.
    grad : ndarray, same shape as ``z0``
        Gradient of the smooth loss at the current point.
    L, l1, l2 : float | ndarray
        Step parameter :math:`L > 0` and penalty weights; arrays broadcast against ``z0``
        (shape ``(K, 1, 1)`` for K runs of factors ``(K, m, p)``).

    Returns
    -------
    ndarray, same shape as ``z0``
        :math:`\mathcal{S}_{l_1/(L+l_2)}((L Z^0 - G) / (L + l_2))`.
    """
    denom = L + l2
    return soft_threshold((L * z0 - grad) / denom, l1 / denom)


def elastic_net_value(z, l1, l2):
    """Return ``l1 |z_k|_1 + l2 / 2 |z_k|_F^2`` per run ``k`` of ``z`` (K, ...) as (K,)."""
    z = z.reshape(z.shape[0], -1)
    return l1 * np.abs(z).sum(axis=1) + 0.5 * l2 * np.einsum("kp,kp->k", z, z)


@dataclass(frozen=True, eq=False)
class ElasticNet:
    """Elastic-net penalty ``l1 * |Z|_1 + l2 / 2 * |Z|_F^2`` on one factor, of one run or many.

    The solver calls it, as skglm's solvers call their penalties: :meth:`prox` for the
    proximal-linear update of a block and :meth:`values` for the objective. A batch of K
    runs (penalty paths in lockstep) holds one penalty whose weights are arrays of shape
    (K,), one per run; :meth:`take` selects runs.

    Parameters
    ----------
    l1 : float | ndarray, shape (K,)
        Weight of the l1 norm (``mu1`` for U, ``nu1`` for V).
    l2 : float | ndarray, shape (K,)
        Weight of the halved squared Frobenius norm (``mu2`` for U, ``nu2`` for V).
    """

    l1: float = 0.0
    l2: float = 0.0

    def value(self, z):
        """Return the penalty of ``z`` (ndarray, any shape) as a float (one run)."""
        return float(elastic_net_value(np.asarray(z)[None], self.l1, self.l2)[0])

    def values(self, z):
        """Return the penalty of each run's factor ``z[k]`` (K, ...) as (K,)."""
        return elastic_net_value(z, self.l1, self.l2)

    def take(self, runs):
        """Return the penalty of the runs ``runs`` (itself when its weights are shared)."""
        if np.ndim(self.l1) == 0 and np.ndim(self.l2) == 0:
            return self
        return ElasticNet(np.asarray(self.l1)[runs], np.asarray(self.l2)[runs])

    def with_run(self, j, l1, l2):
        """Return a copy of this penalty of K runs with run ``j``'s weights replaced."""
        l1s, l2s = np.array(self.l1, dtype=np.float64), np.array(self.l2, dtype=np.float64)
        l1s[j], l2s[j] = l1, l2
        return ElasticNet(l1s, l2s)

    def prox(self, z0, grad, L):
        r"""Return the proximal-linear update of the paper's eq. 12, run by run.

        Parameters
        ----------
        z0 : ndarray, shape (K, ...)
            Current factors :math:`Z^0`, the runs first (the weights are one per run, or
            shared).
        grad : ndarray, broadcasting against ``z0``
            Gradient of the smooth loss at the current point.
        L : float | ndarray
            Step parameters :math:`L > 0`, broadcasting against ``z0``.

        Returns
        -------
        ndarray
            :math:`\mathcal{S}_{l_1/(L+l_2)}((L Z^0 - G) / (L + l_2))`.
        """
        l1, l2 = self.l1, self.l2
        if np.ndim(l1) or np.ndim(l2):  # one weight per run: (K, 1, ..., 1)
            trailing = (1,) * (np.ndim(z0) - 1)
            l1 = np.reshape(np.broadcast_to(l1, np.shape(z0)[:1]), (-1, *trailing))
            l2 = np.reshape(np.broadcast_to(l2, np.shape(z0)[:1]), (-1, *trailing))
        return elastic_net_prox(z0, grad, L, l1, l2)

    def prox_step(self, z0, grad, step_inv):
        r"""Return the proximal-linear update of the paper's eq. 12 (one run).

        Parameters
        ----------
        z0 : ndarray, any shape
            Current factor :math:`Z^0`.
        grad : ndarray, same shape as ``z0``
            Gradient of the smooth loss at the current point.
        step_inv : float
            The step parameter :math:`L > 0` (inverse step length).

        Returns
        -------
        ndarray, same shape as ``z0``
            :math:`\mathcal{S}_{l_1/(L+l_2)}((L Z^0 - G) / (L + l_2))`.
        """
        return elastic_net_prox(z0, grad, step_inv, self.l1, self.l2)

    def subgradient_residual(self, z, grad):
        """Return the distance from ``-grad`` to the subdifferential of the penalty at ``z``.

        This is the first-order optimality residual of ``min_z f(z) + r(z)`` where
        ``grad`` is the gradient of ``f`` at ``z``; it is zero at a stationary point.

        Parameters
        ----------
        z : ndarray, any shape
            Point.
        grad : ndarray, same shape as ``z``
            Gradient of the smooth part at ``z``.

        Returns
        -------
        ndarray, same shape as ``z``
            Component-wise residual.
        """
        g = grad + self.l2 * z
        nz = z != 0
        return np.where(nz, g + self.l1 * np.sign(z), np.maximum(np.abs(g) - self.l1, 0.0))

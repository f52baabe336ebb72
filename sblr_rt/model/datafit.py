"""Data-fitting terms: the mean logistic and multinomial losses as functions of scores.

Both datafits see only the scores ``f`` (one column per free class); the solver turns the
gradient with respect to the scores into gradients for U, V and b through the cached
products ``X V`` and ``X^T U``. This keeps every backtracking trial at ``O(n s r)``.

Each datafit also gives the Bregman divergence
``D(f0, f1) = loss(f1) - loss(f0) - <grad loss(f0), f1 - f0>``, the left-hand side of the
paper's sufficient-decrease tests (eq. 14 and 16) once the linear terms are moved over. It is
computed per sample from ``expm1``/``log1p`` so that it keeps full relative precision when
the step is tiny, where the difference of two nearly equal losses would be rounding noise.

Scores may carry leading batch axes, ``(..., n_epochs, m)``: the solver then evaluates many
runs that share the labels (penalty paths fitted in lockstep) in one call, and losses and
divergences come back per run, shape ``(...)``. Plain ``(n_epochs, m)`` scores give floats.
The labels may carry one leading axis too, one row per run (runs on different training
folds of the same size, fitted in one batch); :meth:`take` then selects the rows of a subset
of the runs.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp

__all__ = ["Logistic", "Multinomial"]

# Below this score change the divergence uses the cancellation-free expm1/log1p form;
# above it the direct difference is accurate and cannot overflow.
_SMALL = 1.0


def _per_run(values):
    """Return the mean over the last axis: a float, or one value per leading batch index."""
    # The sum over n then one division: what ``mean`` computes, without its wrapper.
    out = np.add.reduce(values, axis=-1) / values.shape[-1]
    return float(out) if out.ndim == 0 else out


class Logistic:
    """Mean logistic loss ``1/n sum log(1 + exp(-y_i f_i))`` with ``y_i`` in {-1, +1}.

    Parameters
    ----------
    y : ndarray, shape (n_epochs,) or (n_runs, n_epochs)
        Labels in {-1, +1}.
    """

    def __init__(self, y):
        y = np.asarray(y, dtype=np.float64)
        self.y = y.reshape(-1, 1) if y.ndim < 2 else y[..., None]
        self.n = self.y.shape[-2]

    def take(self, runs):
        """Return the datafit of the runs ``runs`` (itself when the labels are shared)."""
        if self.y.ndim == 2:
            return self
        return Logistic(self.y[runs, :, 0])

    def trials(self, runs):
        """Return the datafit of ``runs`` for scores of shape (k, n_trials, n_epochs, 1)."""
        if self.y.ndim == 2:
            return self
        return Logistic(self.y[runs, None, :, 0])

    def loss(self, scores):
        """Return the mean loss for ``scores`` of shape (..., n_epochs, 1)."""
        return _per_run(np.logaddexp(0.0, -self.y * scores)[..., 0])

    def loss_grad(self, scores):
        """Return the loss, its gradient w.r.t. ``scores`` (..., n_epochs, 1) and a cache."""
        m = -self.y * scores
        loss = _per_run(np.logaddexp(0.0, m)[..., 0])
        sig = expit(m)
        return loss, -self.y * sig / self.n, (m, sig)

    def bregman(self, cache, scores_new):
        """Return the mean Bregman divergence from the cached point to ``scores_new``."""
        m, sig = cache
        m_new = -self.y * scores_new
        d = m_new - m
        sd = sig * d
        # The usual case: one cancellation-free branch (a NaN max takes the other branch).
        if np.abs(d).max() <= _SMALL:
            return _per_run((np.log1p(sig * np.expm1(d)) - sd)[..., 0])
        # Saturated scores make log1p(-1) = -inf in the branch np.where discards.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            small = np.log1p(sig * np.expm1(np.minimum(d, _SMALL))) - sd
            large = np.logaddexp(0.0, m_new) - np.logaddexp(0.0, m) - sd
        return _per_run(np.where(np.abs(d) <= _SMALL, small, large)[..., 0])


class Multinomial:
    """Mean multinomial loss with a reference class whose score is fixed at zero.

    ``1/n sum_i (log(1 + sum_c exp f_ic) - sum_c y_ic f_ic)`` over the ``m`` free classes
    (paper section 7.3).

    Parameters
    ----------
    y_onehot : ndarray, shape (n_epochs, m) or (n_runs, n_epochs, m)
        One-hot labels of the free classes (all zeros for the reference class).
    """

    def __init__(self, y_onehot):
        self.y = np.asarray(y_onehot, dtype=np.float64)
        self.n = self.y.shape[-2]

    def take(self, runs):
        """Return the datafit of the runs ``runs`` (itself when the labels are shared)."""
        return self if self.y.ndim == 2 else Multinomial(self.y[runs])

    def trials(self, runs):
        """Return the datafit of ``runs`` for scores of shape (k, n_trials, n_epochs, m)."""
        return self if self.y.ndim == 2 else Multinomial(self.y[runs, None])

    @staticmethod
    def _full(scores):
        zeros = np.zeros((*scores.shape[:-1], 1))
        return np.concatenate([zeros, scores], axis=-1)

    def loss(self, scores):
        """Return the mean loss for ``scores`` of shape (..., n_epochs, m)."""
        lse = logsumexp(self._full(scores), axis=-1)
        return _per_run(lse - (self.y * scores).sum(-1))

    def loss_grad(self, scores):
        """Return the loss, its gradient w.r.t. ``scores`` (..., n_epochs, m) and a cache."""
        full = self._full(scores)
        lse = logsumexp(full, axis=-1)
        loss = _per_run(lse - (self.y * scores).sum(-1))
        proba = np.exp(full - lse[..., None])
        return loss, (proba[..., 1:] - self.y) / self.n, (full, lse, proba)

    def bregman(self, cache, scores_new):
        """Return the mean Bregman divergence from the cached point to ``scores_new``."""
        full, lse, proba = cache
        full_new = self._full(scores_new)
        d = full_new - full
        lin = (proba * d).sum(-1)
        # Saturated scores make log1p(-1) = -inf in the branch np.where discards.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            small = np.log1p((proba * np.expm1(np.minimum(d, _SMALL))).sum(-1)) - lin
            large = logsumexp(full_new, axis=-1) - lse - lin
        return _per_run(np.where(np.abs(d).max(-1) <= _SMALL, small, large))

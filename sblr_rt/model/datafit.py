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

Sample weights ``w_i`` (``sample_weight``, ``class_weight``) make every mean a weighted mean,
``sum_i w_i l_i / sum_i w_i``: weights of 2 are the same fit as each epoch given twice, and
a zero weight the same fit as the epoch left out. They are stored normalised to mean 1 (per
run), with the labels' leading axes.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.special import expit, logsumexp

__all__ = ["Logistic", "Multinomial"]

# Below this score change the divergence uses the cancellation-free expm1/log1p form;
# above it the direct difference is accurate and cannot overflow.
_SMALL = 1.0


def _per_run(values, w=None):
    """Return the (weighted) mean over the last axis: a float, or one value per batch index."""
    if w is not None:
        values = values * w
    # The sum over n then one division: what ``mean`` computes, without its wrapper.
    out = np.add.reduce(values, axis=-1) / values.shape[-1]
    return float(out) if out.ndim == 0 else out


def _weights(sample_weight, shape):
    """Return weights of ``shape`` (..., n_epochs) normalised to mean 1 per run, or None."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != shape[-w.ndim :] or w.ndim > len(shape):
        raise ValueError(f"'sample_weight' must have shape {shape}; got {w.shape}.")
    total = w.sum(axis=-1, keepdims=True)
    if np.any(w < 0) or not np.all(np.isfinite(w)) or np.any(total <= 0):
        raise ValueError("'sample_weight' must be finite, >= 0 and not all zero.")
    return w * (w.shape[-1] / total)


def _rows(w, runs, trials=False):
    """Return the weights of ``runs`` (shared weights are returned as they are)."""
    if w is None or w.ndim == 1:
        return w
    return w[runs, None] if trials else w[runs]


class Logistic:
    """Mean logistic loss ``1/n sum log(1 + exp(-y_i f_i))`` with ``y_i`` in {-1, +1}.

    Parameters
    ----------
    y : ndarray, shape (n_epochs,) or (n_runs, n_epochs)
        Labels in {-1, +1}.
    sample_weight : ndarray, shape (n_epochs,) or (n_runs, n_epochs), or None
        Weights of the epochs (see the module notes).
    """

    def __init__(self, y, sample_weight=None):
        y = np.asarray(y, dtype=np.float64)
        self.y = y.reshape(-1, 1) if y.ndim < 2 else y[..., None]
        self.n = self.y.shape[-2]
        self.w = _weights(sample_weight, self.y.shape[:-1])
        #: d (mean loss) / d (loss of epoch i): w_i / n, shaped as the scores
        self.wn = 1.0 / self.n if self.w is None else self.w[..., None] / self.n
        self._w3 = None if self.w is None else self.w[..., None]

    @cached_property
    def rows(self):
        """The labels and the weights (ones if none) as (1 or n_runs, n_epochs) arrays.

        What the compiled block update (:mod:`sblr_rt.model._kernels`) reads.
        """
        y = np.ascontiguousarray(self.y[..., 0]).reshape(-1, self.n)
        w = np.ones((1, self.n)) if self.w is None else self.w
        return y, np.ascontiguousarray(w, dtype=np.float64).reshape(-1, self.n)

    def take(self, runs):
        """Return the datafit of the runs ``runs`` (itself when the labels are shared)."""
        if self.y.ndim == 2:
            return self
        return Logistic(self.y[runs, :, 0], _rows(self.w, runs))

    def trials(self, runs):
        """Return the datafit of ``runs`` for scores of shape (k, n_trials, n_epochs, 1)."""
        if self.y.ndim == 2:
            return self
        return Logistic(self.y[runs, None, :, 0], _rows(self.w, runs, trials=True))

    def loss(self, scores):
        """Return the mean loss for ``scores`` of shape (..., n_epochs, 1)."""
        return _per_run(np.logaddexp(0.0, -self.y * scores)[..., 0], self.w)

    def loss_grad(self, scores):
        """Return the loss, its gradient w.r.t. ``scores`` (..., n_epochs, 1) and a cache."""
        m = -self.y * scores
        loss = _per_run(np.logaddexp(0.0, m)[..., 0], self.w)
        sig = expit(m)
        grad = -self.y * sig if self._w3 is None else -self.y * sig * self._w3
        return loss, grad / self.n, (m, sig)

    def bregman(self, cache, scores_new):
        """Return the mean Bregman divergence from the cached point to ``scores_new``."""
        m, sig = cache
        m_new = -self.y * scores_new
        d = m_new - m
        sd = sig * d
        # The usual case: one cancellation-free branch (a NaN max takes the other branch).
        if np.abs(d).max() <= _SMALL:
            return _per_run((np.log1p(sig * np.expm1(d)) - sd)[..., 0], self.w)
        # Saturated scores make log1p(-1) = -inf in the branch np.where discards.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            small = np.log1p(sig * np.expm1(np.minimum(d, _SMALL))) - sd
            large = np.logaddexp(0.0, m_new) - np.logaddexp(0.0, m) - sd
        return _per_run(np.where(np.abs(d) <= _SMALL, small, large)[..., 0], self.w)


class Multinomial:
    """Mean multinomial loss with a reference class whose score is fixed at zero.

    ``1/n sum_i (log(1 + sum_c exp f_ic) - sum_c y_ic f_ic)`` over the ``m`` free classes
    (paper section 7.3).

    Parameters
    ----------
    y_onehot : ndarray, shape (n_epochs, m) or (n_runs, n_epochs, m)
        One-hot labels of the free classes (all zeros for the reference class).
    sample_weight : ndarray, shape (n_epochs,) or (n_runs, n_epochs), or None
        Weights of the epochs (see the module notes).
    """

    def __init__(self, y_onehot, sample_weight=None):
        self.y = np.asarray(y_onehot, dtype=np.float64)
        self.n = self.y.shape[-2]
        self.w = _weights(sample_weight, self.y.shape[:-1])
        self.wn = 1.0 / self.n if self.w is None else self.w[..., None] / self.n
        self._w3 = None if self.w is None else self.w[..., None]

    def take(self, runs):
        """Return the datafit of the runs ``runs`` (itself when the labels are shared)."""
        return self if self.y.ndim == 2 else Multinomial(self.y[runs], _rows(self.w, runs))

    def trials(self, runs):
        """Return the datafit of ``runs`` for scores of shape (k, n_trials, n_epochs, m)."""
        if self.y.ndim == 2:
            return self
        return Multinomial(self.y[runs, None], _rows(self.w, runs, trials=True))

    @staticmethod
    def _full(scores):
        zeros = np.zeros((*scores.shape[:-1], 1))
        return np.concatenate([zeros, scores], axis=-1)

    def loss(self, scores):
        """Return the mean loss for ``scores`` of shape (..., n_epochs, m)."""
        lse = logsumexp(self._full(scores), axis=-1)
        return _per_run(lse - (self.y * scores).sum(-1), self.w)

    def loss_grad(self, scores):
        """Return the loss, its gradient w.r.t. ``scores`` (..., n_epochs, m) and a cache."""
        full = self._full(scores)
        lse = logsumexp(full, axis=-1)
        loss = _per_run(lse - (self.y * scores).sum(-1), self.w)
        proba = np.exp(full - lse[..., None])
        grad = proba[..., 1:] - self.y
        if self._w3 is not None:
            grad = grad * self._w3
        return loss, grad / self.n, (full, lse, proba)

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
        return _per_run(np.where(np.abs(d).max(-1) <= _SMALL, small, large), self.w)

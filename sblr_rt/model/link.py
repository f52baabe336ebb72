"""From scores to class probabilities: the one rule, offline and online.

Examples
--------
>>> import numpy as np
>>> proba_from_scores(np.array([0.0, 2.0])).round(3).tolist()
[[0.5, 0.5], [0.119, 0.881]]
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, softmax

__all__ = ["proba_from_scores", "proba_of_window"]


def proba_from_scores(scores, multi_class: str = "ovr") -> np.ndarray:
    """Return class probabilities from decision scores.

    Parameters
    ----------
    scores : array-like, shape (n_epochs,) or (n_epochs, n_classes)
        Scores ``tr(U^T X V) + b``: one column for two classes, one per class otherwise.
    multi_class : {"ovr", "multinomial"}
        How three or more classes are normalised: one-versus-rest logistics divided by
        their sum, or the multinomial softmax.

    Returns
    -------
    proba : ndarray, shape (n_epochs, n_classes)
        Rows sum to one.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        p1 = expit(scores)
        return np.column_stack([1.0 - p1, p1])
    if scores.ndim != 2:
        raise ValueError(f"'scores' must be 1-D or 2-D, got shape {scores.shape}")
    if multi_class == "multinomial":
        return softmax(scores, axis=1)
    proba = expit(scores)
    return proba / proba.sum(axis=1, keepdims=True)


def _logistic(s: float) -> float:
    """Return the logistic of one score without overflow (as :func:`scipy.special.expit`)."""
    if s >= 0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


def proba_of_window(scores, multi_class: str = "ovr") -> list[float]:
    """Return the class probabilities of one window: :func:`proba_from_scores` for one row.

    The online loop decides one window at a time, every few milliseconds; for two classes
    this computes the same logistic in plain floats, without array overhead.

    Parameters
    ----------
    scores : sequence of float, length 1 (two classes) or n_classes
        The window's scores.
    multi_class : {"ovr", "multinomial"}
        As in :func:`proba_from_scores`.

    Returns
    -------
    proba : list of float
        One probability per class, summing to one.
    """
    if len(scores) == 1:
        p1 = _logistic(float(scores[0]))
        return [1.0 - p1, p1]
    return proba_from_scores(np.asarray(scores, dtype=np.float64)[None], multi_class)[0].tolist()

"""From scores to class probabilities: the one rule, offline and online.

Examples
--------
>>> import numpy as np
>>> proba_from_scores(np.array([0.0, 2.0])).round(3).tolist()
[[0.5, 0.5], [0.119, 0.881]]
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

__all__ = ["proba_from_scores"]


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

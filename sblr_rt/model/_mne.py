"""Read :class:`mne.Epochs` where the estimator takes an array (no import of MNE)."""

from __future__ import annotations

import numpy as np


def _is_epochs(obj) -> bool:
    return hasattr(obj, "get_data") and hasattr(obj, "info") and hasattr(obj, "events")


def epochs_array(X):
    """Return the data of an :class:`mne.Epochs`, or ``X`` unchanged if it is not one.

    Parameters
    ----------
    X : array-like, mne.Epochs, or list of mne.Epochs
        The estimator's input. scikit-learn's cross-validation indexes an Epochs object
        epoch by epoch (``_safe_indexing`` falls back to ``[X[i] for i in idx]``), so a
        list of Epochs is read as their epochs concatenated in order.

    Returns
    -------
    X : array-like
        ``epochs.get_data()``, shape (n_epochs, n_channels, n_times), for Epochs; the
        input itself otherwise.
    """
    if _is_epochs(X):
        return X.get_data()
    if isinstance(X, list | tuple) and X and all(_is_epochs(x) for x in X):
        return np.concatenate([x.get_data() for x in X], axis=0)
    return X

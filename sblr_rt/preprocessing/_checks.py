"""Checks of the :class:`~sblr_rt.preprocessing.Preprocessor`'s parameters and input."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

__all__ = [
    "as_float_or_none",
    "check_bands",
    "check_ch_names",
    "check_epochs",
    "check_picks",
    "check_window",
]


def as_float_or_none(name, value):
    """Return ``value`` as a finite float (or None), or raise naming the parameter."""
    if value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"'{name}' must be a number or None, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"'{name}' must be a finite number, got {value}")
    return float(value)


def check_ch_names(ch_names) -> list[str]:
    if isinstance(ch_names, str) or not all(isinstance(c, str) for c in ch_names):
        raise TypeError("'ch_names' must be a list of str")
    ch_names = list(ch_names)
    if len(set(ch_names)) != len(ch_names):
        raise ValueError(f"'ch_names' must be unique, got duplicates in {ch_names}")
    return ch_names


def check_window(sfreq, tmin, tmax) -> tuple[float, float, float, int]:
    """Return ``sfreq, tmin, tmax, n_window`` checked."""
    sfreq_ = as_float_or_none("sfreq", sfreq)
    if sfreq_ is None or sfreq_ <= 0:
        raise ValueError(f"'sfreq' must be a positive number, got {sfreq}")
    tmin_ = as_float_or_none("tmin", tmin)
    tmax_ = as_float_or_none("tmax", tmax)
    if tmin_ is None or tmax_ is None:
        raise ValueError("'tmin' and 'tmax' are required")
    n_window = round((tmax_ - tmin_) * sfreq_)
    if n_window < 1:
        raise ValueError(
            f"'tmax' - 'tmin' must span at least one sample at {sfreq_} Hz, "
            f"got tmin={tmin}, tmax={tmax}"
        )
    return sfreq_, tmin_, tmax_, n_window


def check_picks(picks, ch_names: list[str]) -> tuple[list[str], np.ndarray]:
    """Return the picked names and their indices in ``ch_names``."""
    if picks is None:
        picks = list(ch_names)
    else:
        if isinstance(picks, str):
            raise TypeError("'picks' must be a list of channel names, got a str")
        picks = [str(p) for p in picks]
    # A dict keeps this linear: channel lists may be long (a hostile model file's too).
    index = {name: i for i, name in enumerate(ch_names)}
    missing = [p for p in picks if p not in index]
    if missing:
        raise ValueError(
            f"'picks' names channels missing from the data: {missing}; available: {ch_names}"
        )
    if len(set(picks)) != len(picks) or not picks:
        raise ValueError(f"'picks' must be unique and non-empty, got {picks}")
    return picks, np.array([index[p] for p in picks], dtype=np.intp)


def check_bands(bands) -> list[tuple[float, ...]]:
    if isinstance(bands, str | bytes) or not isinstance(bands, Sequence):
        raise TypeError(f"'bands' must be a list of (low, high) pairs, got {bands!r}")
    out = []
    for band in bands:
        if isinstance(band, str | bytes) or not isinstance(band, Sequence):
            raise TypeError(f"'bands' must be a list of (low, high) pairs, got {bands!r}")
        out.append(tuple(as_float_or_none("bands", f) for f in band))
    return out


def check_epochs(epochs, n_channels: int, n_pad: int, n_window: int) -> np.ndarray:
    """Return ``epochs`` as an array of shape (n_epochs, n_channels, n_pad + n_window)."""
    epochs = np.asarray(epochs)
    if epochs.ndim != 3:
        raise ValueError(
            "'epochs' must have shape (n_epochs, n_channels, n_times_raw), "
            f"got {epochs.ndim} dimensions {epochs.shape}"
        )
    expected = (n_channels, n_pad + n_window)
    if epochs.shape[1:] != expected:
        pad = f" ({n_pad} samples of filter warm-up before the {n_window}-sample window)"
        raise ValueError(
            f"'epochs' must have shape (n_epochs, {expected[0]}, {expected[1]})"
            f"{pad if n_pad else ''}, got {epochs.shape}"
        )
    if not np.issubdtype(epochs.dtype, np.number):
        raise TypeError(f"'epochs' must be numeric, got dtype {epochs.dtype}")
    return epochs


def check_spatial_matrix(matrix, spatial, n_picks: int) -> np.ndarray | None:
    """Return the spatial operator as a finite (n_picks, n_picks) array, or None."""
    if spatial is None:
        if matrix is not None and not np.array_equal(matrix, np.eye(n_picks)):
            raise ValueError("'spatial_matrix' must be None (or the identity) when spatial=None")
        return None
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.shape != (n_picks, n_picks):
        raise ValueError(
            f"'spatial_matrix' must have shape ({n_picks}, {n_picks}) (one row and column "
            f"per picked channel), got {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError("'spatial_matrix' must hold finite numbers only")
    return matrix

"""Scaling of features: the one rule, used by the preprocessor and by calibration.

Rows (channels, or channels x bands) are divided by their RMS over the training epochs
and time points; ``"channel_time"`` then also divides each time point by its RMS, a
separable product that keeps the bilinear structure. Bandpower features are centred per
row first (log powers have arbitrary offsets); waveforms are never centred, so the path
stays linear.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.validation.constraints import option

__all__ = [
    "SCALINGS",
    "SCALING_RULE",
    "apply_scaling",
    "check_scaling",
    "fit_scaling",
    "safe_scale",
]

#: Scaling modes: none, per channel (row), per channel and time (separable).
SCALINGS = (None, "channel", "channel_time")
#: The rule of a scaling's name (``"none"``, as a configuration file writes it, is None).
SCALING_RULE = option(*SCALINGS, aliases={"none": None})


def check_scaling(scaling) -> str | None:
    """Return the scaling named by ``scaling`` (:data:`SCALING_RULE`); raise ValueError if none.

    The one check of the rule's name for the preprocessor, the pipeline's scaler and the
    calibration's settings.

    Examples
    --------
    >>> check_scaling("channel_time")
    'channel_time'
    >>> check_scaling("none") is None
    True
    """
    return SCALING_RULE.check("scaling", scaling)


def fit_scaling(
    Z: np.ndarray, scaling: str | None, *, center: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit row offsets, row scales and column scales on training features.

    Parameters
    ----------
    Z : array, shape (n_epochs, n_rows, n_times)
        Unscaled training features.
    scaling : {"channel", "channel_time", None}
        See :class:`Preprocessor`.
    center : bool
        Subtract each row's mean first (bandpower path).

    Returns
    -------
    row_offset : ndarray, shape (n_rows,)
    row_scale : ndarray, shape (n_rows,)
    col_scale : ndarray, shape (n_times,)
    """
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 3 or Z.shape[0] < 1:
        raise ValueError(f"'Z' must have shape (n_epochs, n_rows, n_times), got {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("features hold NaN or infinite values: reject those epochs first")
    n_rows, n_times = Z.shape[1:]
    offset = Z.mean(axis=(0, 2)) if center else np.zeros(n_rows)
    row = np.ones(n_rows)
    col = np.ones(n_times)
    if scaling is not None:
        Zc = Z - offset[None, :, None]
        row = safe_scale(np.sqrt(np.mean(Zc**2, axis=(0, 2))), "row")
        if scaling == "channel_time":
            col = safe_scale(np.sqrt(np.mean((Zc / row[None, :, None]) ** 2, axis=(0, 1))), "time")
    return offset, row, col


def safe_scale(s: np.ndarray, what: str) -> np.ndarray:
    """Return RMS values usable as divisors: tiny ones are raised to 1e-12 of the largest.

    Parameters
    ----------
    s : ndarray, shape (n,)
        Non-negative RMS values.
    what : str
        What they scale (``"row"``, ``"time"``), for the error message.

    Returns
    -------
    scale : ndarray, shape (n,)
    """
    top = float(np.max(s))
    if not top > 0:
        raise ValueError(f"cannot scale: every {what} of the training features is zero")
    return np.maximum(s, 1e-12 * top)


def apply_scaling(
    Z: np.ndarray, row_offset: np.ndarray, row_scale: np.ndarray, col_scale: np.ndarray
) -> np.ndarray:
    """Apply :func:`fit_scaling`'s output.

    Parameters
    ----------
    Z : array, shape (n_epochs, n_rows, n_times)
        Unscaled features.
    row_offset, row_scale : ndarray, shape (n_rows,)
        Row centring and scales.
    col_scale : ndarray, shape (n_times,)
        Time-point scales.

    Returns
    -------
    X : ndarray, shape (n_epochs, n_rows, n_times)
        ``(Z - offset) / row_scale / col_scale``.
    """
    Z = np.asarray(Z, dtype=np.float64)
    return (Z - row_offset[None, :, None]) / (row_scale[None, :, None] * col_scale[None, None, :])

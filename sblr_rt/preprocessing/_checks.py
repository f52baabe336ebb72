"""The rules of the :class:`~sblr_rt.preprocessing.Preprocessor`'s parameters; checks of input."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sblr_rt.preprocessing.features import FEATURES
from sblr_rt.preprocessing.scaling import SCALING_RULE
from sblr_rt.validation.constraints import (
    Rule,
    any_value,
    custom,
    integer,
    names,
    number,
    numbers_list,
    option,
    positive,
)

__all__ = [
    "PARAMETER_RULES",
    "check_epochs",
    "check_picks",
    "check_spatial_matrix",
    "window_samples",
]


def _ch_names(name: str, ch_names) -> list[str]:
    listed = not isinstance(ch_names, str) and isinstance(ch_names, Sequence | np.ndarray)
    if not listed or not all(isinstance(c, str) for c in ch_names):
        raise TypeError(f"{name!r} must be a list of str, got {ch_names!r:.80}")
    ch_names = list(ch_names)
    if len(set(ch_names)) != len(ch_names):
        raise ValueError(f"{name!r} must be unique, got duplicates in {ch_names}")
    return ch_names


def _bands(name: str, bands) -> tuple[tuple[float, float], ...]:
    message = f"{name!r} must be a list of (low, high) pairs, got {bands!r:.80}"
    if isinstance(bands, str | bytes) or not isinstance(bands, Sequence):
        raise TypeError(message)
    pairs = tuple(numbers_list().check(name, band) for band in bands)
    if any(len(band) != 2 for band in pairs):
        raise ValueError(message)
    return pairs


#: The rule of each :class:`~sblr_rt.preprocessing.Preprocessor` parameter, by name
#: (:mod:`sblr_rt.validation.constraints`); the calibration's settings of the same names
#: use these rules. Relations between parameters (the window spans a sample, the picks
#: are among the channels, the spatial operator fits the picks) are checked by the
#: preprocessor.
PARAMETER_RULES: dict[str, Rule] = {
    "ch_names": custom(_ch_names),
    "sfreq": number(limit="sfreq"),
    "tmin": number(limit="epoch", low_open=False),
    "tmax": number(limit="epoch", low_open=False),
    "picks": names(),
    "features": option(*FEATURES),
    "l_freq": number(none=True),
    "h_freq": number(none=True),
    "bands": custom(_bands, none=True),
    "n_times": integer(positive, "be a positive integer", none=True),
    "baseline": numbers_list(lambda v: len(v) == 2, "be a (start, end) pair", none=True),
    "scaling": SCALING_RULE,
    "filter_length": number(positive, "be a positive number", none=True),
    "spatial": any_value(),  # with spatial_matrix: check_spatial_matrix, spatial_operator
    "reference": option("default", "channels", "bands", None, aliases={"none": None}),
    "spatial_matrix": any_value(),
}


def window_samples(sfreq: float, tmin: float, tmax: float) -> int:
    """Return the samples of the window ``[tmin, tmax)`` at ``sfreq``: at least one."""
    n_window = round((tmax - tmin) * sfreq)
    if n_window < 1:
        raise ValueError(
            f"'tmax' - 'tmin' must span at least one sample at {sfreq} Hz, "
            f"got tmin={tmin}, tmax={tmax}"
        )
    return n_window


def check_picks(picks, ch_names: list[str]) -> tuple[list[str], np.ndarray]:
    """Return the picked names (checked ``picks``; None: all) and their indices in ``ch_names``."""
    picks = list(ch_names) if picks is None else list(picks)
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
    try:
        matrix = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"'spatial_matrix' must be a ({n_picks}, {n_picks}) array of numbers, got "
            f"{type(matrix).__name__} {matrix!r:.80}"
        ) from None
    if matrix.shape != (n_picks, n_picks):
        raise ValueError(
            f"'spatial_matrix' must have shape ({n_picks}, {n_picks}) (one row and column "
            f"per picked channel), got {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError("'spatial_matrix' must hold finite numbers only")
    return matrix

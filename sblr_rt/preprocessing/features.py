"""Feature paths: from filtered windows to the model's rows x time points, one class each.

A feature path owns what differs between paths: which filters it needs, how many model
rows one picked channel gives and their names, the model's time grid, and the map from
filtered windows ``(n_epochs, n_filtered, n_window)`` to unscaled features
``(n_epochs, n_rows, n_times)``. The :class:`~sblr_rt.preprocessing.Preprocessor` owns
what they share (channels, window, scaling, serialisation). A new path is one more class
here (its :meth:`FeaturePath.from_params` picks the parameters it uses), registered in
:data:`FEATURE_PATHS`.

``"waveform"`` (:class:`WaveformPath`, the paper's input, every step linear)
    optional causal band-pass -> optional baseline -> anti-aliased resampling of the
    window to the model's time grid.
``"bandpower"`` (:class:`BandpowerPath`, for oscillatory paradigms such as motor imagery)
    causal band-pass into one or more bands -> square -> mean in time bins -> log. The
    model's rows are channels x bands (band-major).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from .filters import auto_numtaps, auto_transition, design_fir
from .operators import baseline_matrix, bin_edges, resampling_matrix

__all__ = ["FEATURES", "FEATURE_PATHS", "BandpowerPath", "FeaturePath", "WaveformPath"]

_DEFAULT_BANDPOWER_BINS = 8
_DEFAULT_WAVEFORM_TIMES = 100


def _check_n_times(n_times: int | None, default: int, n_window: int) -> int:
    n = min(default, n_window) if n_times is None else int(n_times)
    if not 1 <= n <= n_window:
        raise ValueError(
            f"'n_times' must be in [1, n_window={n_window}] (the model's grid "
            f"cannot be finer than the raw window), got {n_times}"
        )
    return n


class FeaturePath:
    """Base of the feature paths (see the module docstring).

    Attributes
    ----------
    filters : list of ndarray
        FIR coefficient vectors, all of one length (empty: no filter).
    n_times : int
        Points of the model's time grid.
    """

    #: The ``features`` value that selects this path.
    name: ClassVar[str] = ""
    #: Whether the whole path is linear in the raw window (foldable into matrices).
    linear: ClassVar[bool] = False
    #: Whether scaling centres each row first.
    centred: ClassVar[bool] = False

    filters: list[np.ndarray]
    n_times: int

    @classmethod
    def from_params(cls, **params) -> FeaturePath:
        """Build the path from the preprocessor's parameters, taking those it uses.

        Parameters
        ----------
        **params
            ``sfreq``, ``tmin``, ``tmax``, ``n_window``, ``l_freq``, ``h_freq``,
            ``bands``, ``n_times``, ``baseline`` and ``numtaps`` (FIR length or None).

        Returns
        -------
        path : FeaturePath
        """
        raise NotImplementedError

    def n_rows(self, n_picks: int) -> int:
        """Return the model rows given by ``n_picks`` picked channels."""
        return n_picks

    def row_names(self, picks: Sequence[str]) -> list[str]:
        """Return the names of the model's rows."""
        return list(picks)

    def grid_index(self) -> np.ndarray:
        """Return the position of each grid point in window samples, shape (n_times,)."""
        raise NotImplementedError

    def features(self, windows: np.ndarray) -> np.ndarray:
        """Return unscaled features ``(n_epochs, n_rows, n_times)`` from filtered windows."""
        raise NotImplementedError


class WaveformPath(FeaturePath):
    """Band-pass, baseline and resampling: ``Z = window @ T``.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    tmin, tmax : float
        Window relative to the cue in seconds, ``[tmin, tmax)``.
    n_window : int
        Window length in samples.
    l_freq, h_freq : float | None
        Optional band-pass edges in Hz (both None: no filter).
    n_times : int | None
        Resampled points (default ``min(100, n_window)``).
    baseline : (float, float) | None
        Interval in seconds whose mean each channel loses before resampling.
    numtaps : int | None
        FIR length in samples (None: from the transition width).
    """

    name = "waveform"
    linear = True
    centred = False

    def __init__(self, *, sfreq, tmin, tmax, n_window, l_freq, h_freq, n_times, baseline, numtaps):
        self.n_window = n_window
        self.filters = (
            []
            if l_freq is None and h_freq is None
            else [design_fir(sfreq, l_freq, h_freq, numtaps)]
        )
        self.n_times = _check_n_times(n_times, _DEFAULT_WAVEFORM_TIMES, n_window)
        T = resampling_matrix(n_window, self.n_times)
        self.baseline_samples = None
        if baseline is not None:
            start = round((baseline[0] - tmin) * sfreq)
            stop = round((baseline[1] - tmin) * sfreq)
            if not 0 <= start < stop <= n_window:
                raise ValueError(
                    f"'baseline' must lie within [tmin, tmax) = [{tmin}, {tmax}) "
                    f"and span a sample, got {baseline}"
                )
            self.baseline_samples = (start, stop)
            T = baseline_matrix(n_window, start, stop) @ T
        #: ndarray, shape (n_window, n_times): baseline then resampling.
        self.temporal = T

    @classmethod
    def from_params(cls, **params) -> WaveformPath:
        """Build from the preprocessor's parameters (``bands`` is unused)."""
        keys = ("sfreq", "tmin", "tmax", "n_window", "l_freq", "h_freq", "n_times")
        keys += ("baseline", "numtaps")
        return cls(**{k: params[k] for k in keys})

    def grid_index(self) -> np.ndarray:
        """Return the centre of each resampling bin in window samples, shape (n_times,)."""
        ratio = self.n_window / self.n_times
        return (np.arange(self.n_times) + 0.5) * ratio - 0.5

    def features(self, windows: np.ndarray) -> np.ndarray:
        """Return the resampled windows ``(n_epochs, n_rows, n_times)``."""
        return windows @ self.temporal


class BandpowerPath(FeaturePath):
    """Band-pass per band, then log of the mean power in time bins.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    n_window : int
        Window length in samples.
    bands : list of (float, float)
        Frequency bands in Hz.
    n_times : int | None
        Time bins (default 8).
    numtaps : int | None
        FIR length in samples (None: from the narrowest transition of all bands, so that
        every band's filter has the same length and warm-up).
    """

    name = "bandpower"
    linear = False
    centred = True

    def __init__(self, *, sfreq, n_window, bands, n_times, numtaps):
        if not bands or any(len(b) != 2 for b in bands):
            raise ValueError(f"'bands' must be a list of (low, high) pairs, got {bands}")
        self.bands = bands
        if numtaps is None:
            nyq = sfreq / 2
            trans = min(auto_transition(lo, hi, nyq) for lo, hi in bands)
            numtaps = auto_numtaps(sfreq, trans)
        self.filters = [design_fir(sfreq, lo, hi, numtaps) for lo, hi in bands]
        self.n_times = _check_n_times(n_times, _DEFAULT_BANDPOWER_BINS, n_window)
        #: ndarray of int, shape (n_times + 1,): sample edges of the time bins.
        self.edges = bin_edges(n_window, self.n_times)

    @classmethod
    def from_params(cls, **params) -> BandpowerPath:
        """Build from the preprocessor's parameters (no band-pass edges, no baseline)."""
        if params["baseline"] is not None:
            raise ValueError(
                f"'baseline' applies to the waveform path only, got {params['baseline']}"
            )
        keys = ("sfreq", "n_window", "bands", "n_times", "numtaps")
        return cls(**{k: params[k] for k in keys})

    def n_rows(self, n_picks: int) -> int:
        """Return the model rows: one per picked channel and band."""
        return n_picks * len(self.bands)

    def row_names(self, picks: Sequence[str]) -> list[str]:
        """Return ``"C3 8-13Hz"``-style names, band-major."""
        return [f"{ch} {lo:g}-{hi:g}Hz" for lo, hi in self.bands for ch in picks]

    def grid_index(self) -> np.ndarray:
        """Return the centre of each time bin in window samples, shape (n_times,)."""
        return (self.edges[:-1] + self.edges[1:] - 1) / 2.0

    def features(self, windows: np.ndarray) -> np.ndarray:
        """Return the log mean power per bin ``(n_epochs, n_rows, n_times)``."""
        power = np.square(windows)
        sums = np.add.reduceat(power, self.edges[:-1], axis=2)
        mean = sums / np.diff(self.edges)
        return np.log(np.maximum(mean, np.finfo(np.float64).tiny))


#: The feature paths by their ``features`` name.
FEATURE_PATHS: dict[str, type[FeaturePath]] = {
    WaveformPath.name: WaveformPath,
    BandpowerPath.name: BandpowerPath,
}
#: The feature path names.
FEATURES = tuple(FEATURE_PATHS)

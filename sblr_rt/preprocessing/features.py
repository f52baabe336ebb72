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
    causal band-pass into one or more bands -> square -> mean in time bins -> log ->
    log power relative to the mean over channels of the same band and bin. The model's
    rows are channels x bands (band-major), its columns time bins.
``"spectral"`` (:class:`SpectralPath`: which frequencies matter)
    causal band-pass into narrow bands (2 Hz from 6 to 34 Hz by default) -> square ->
    mean over the whole window -> log -> each channel's log power relative to its mean
    over the bands. The model's rows are channels, its columns the bands, so the
    temporal factor V is a weighting over frequency.
``"covariance"`` (:class:`CovariancePath`: which channels co-vary, the Riemannian family)
    causal band-pass (8-30 Hz by default) -> spatial covariance of the window with
    oracle approximating shrinkage (OAS) -> matrix logarithm. The log-Euclidean tangent
    space: the reference at which it is taken is the calibration runs' mean log
    covariance, which run centring (:mod:`sblr_rt.model.run_centring`) subtracts. The
    model's rows and columns are both channels, so both factors are spatial (the
    bilinear form of SBLEST, Wang et al., IEEE TPAMI 2023).

Why the reference. Between two runs of one person the log power of each electrode
shifts by more than the class effect, mostly by a per-channel offset shared by every band
(contact and gain) and by one offset shared by every channel. A model centred on the
calibration runs reads every such offset of a new run as evidence, and its decisions flip
from run to run (the figures: docs/benchmarks.md, "Accuracy across runs"). Subtracting,
within each window, the mean log power over channels (band power) or over bands
(spectral) cancels those offsets exactly. It needs no state and no labels, so the online
loop computes the same numbers from one window. ``reference=None`` gives the plain log power.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from sblr_rt.preprocessing.filters import auto_numtaps, auto_transition, design_fir
from sblr_rt.preprocessing.operators import baseline_matrix, bin_edges, resampling_matrix

__all__ = [
    "FEATURES",
    "FEATURE_PATHS",
    "BandpowerPath",
    "CovariancePath",
    "FeaturePath",
    "SpectralPath",
    "WaveformPath",
    "centres_rows",
]

_DEFAULT_BANDPOWER_BINS = 8
#: Bands of the band-power path (mu and beta).
BANDPOWER_BANDS = ((8.0, 13.0), (13.0, 30.0))
#: Bands of the spectral path: 2 Hz wide from 6 to 34 Hz.
SPECTRAL_BANDS = tuple((float(f), float(f + 2)) for f in range(6, 34, 2))
_DEFAULT_WAVEFORM_TIMES = 100
#: Band of the covariance path (mu and beta).
COVARIANCE_BANDS = ((8.0, 30.0),)


def _check_n_times(n_times: int | None, default: int, n_window: int) -> int:
    n = min(default, n_window) if n_times is None else int(n_times)
    if not 1 <= n <= n_window:
        raise ValueError(
            f"'n_times' must be in [1, n_window={n_window}] (the model's grid "
            f"cannot be finer than the raw window), got {n_times}"
        )
    return n


def _check_no_baseline(params: dict) -> None:
    """Refuse a baseline on a power or covariance path (it applies to the waveform only)."""
    if params["baseline"] is not None:
        raise ValueError(f"'baseline' applies to the waveform path only, got {params['baseline']}")


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

    @classmethod
    def default_bands(cls) -> tuple[tuple[float, float], ...]:
        """Return the bands the path uses when none are given."""
        return BANDPOWER_BANDS


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
    reference : {"channels", None}
        ``"channels"``: subtract, in each window, the mean log power over channels of the
        same band and bin (see the module notes); None: plain log power.
    """

    name = "bandpower"
    linear = False
    centred = True
    #: The per-window references this path offers; the first is its default.
    references: ClassVar[tuple] = ("channels", None)
    #: Whether each band is a block of model rows (True) or a model column (spectral).
    bands_as_rows: ClassVar[bool] = True

    def __init__(self, *, sfreq, n_window, bands, n_times, numtaps, reference="default"):
        if reference == "default":
            reference = self.references[0]
        if reference not in self.references:
            raise ValueError(
                f"'reference' must be one of {self.references} for the {self.name} path, "
                f"got {reference!r}"
            )
        self.reference = reference
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
        _check_no_baseline(params)
        keys = ("sfreq", "n_window", "bands", "n_times", "numtaps")
        return cls(**{k: params[k] for k in keys}, reference=params.get("reference", "default"))

    def n_rows(self, n_picks: int) -> int:
        """Return the model rows: one per picked channel (and band, if bands are rows)."""
        return n_picks * (len(self.bands) if self.bands_as_rows else 1)

    def row_names(self, picks: Sequence[str]) -> list[str]:
        """Return ``"C3 8-13Hz"``-style names, band-major (the channels if bands are columns)."""
        if not self.bands_as_rows:
            return list(picks)
        return [f"{ch} {lo:g}-{hi:g}Hz" for lo, hi in self.bands for ch in picks]

    def grid_index(self) -> np.ndarray:
        """Return the centre of each time bin in window samples, shape (n_times,)."""
        return (self.edges[:-1] + self.edges[1:] - 1) / 2.0

    def features(self, windows: np.ndarray) -> np.ndarray:
        """Return the log mean power per bin ``(n_epochs, n_rows, n_times)``."""
        # Sum of squares per bin as a dot product of each bin with itself: 4x faster
        # than squaring the windows and np.add.reduceat (no temporary of their size).
        e = self.edges
        sums = np.stack(
            [
                np.einsum("...k,...k->...", windows[..., a:b], windows[..., a:b])
                for a, b in itertools.pairwise(e)
            ],
            axis=-1,
        )
        mean = sums / np.diff(e)
        return self.from_log_power(np.log(np.maximum(mean, np.finfo(np.float64).tiny)))

    def from_log_power(self, log_power: np.ndarray) -> np.ndarray:
        """Return the features from the log mean power of each band-major row and bin.

        The one place where the per-window reference is applied: offline here, online by
        the streaming band-power path, which computes ``log_power`` from running sums.

        Parameters
        ----------
        log_power : ndarray, shape (n_epochs, n_bands * n_picks, n_bins)
            Log mean power, band-major rows.

        Returns
        -------
        Z : ndarray, shape (n_epochs, n_rows, n_times)
            Unscaled features.
        """
        if self.reference is None:
            return log_power
        n_ep, n_rows, n_bins = log_power.shape
        blocks = log_power.reshape(n_ep, len(self.bands), -1, n_bins)
        mean = blocks.sum(axis=2, keepdims=True)
        mean *= 1.0 / blocks.shape[2]
        return (blocks - mean).reshape(n_ep, n_rows, n_bins)


class SpectralPath(BandpowerPath):
    """Log power of narrow bands over the whole window: channels x frequencies.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    n_window : int
        Window length in samples.
    bands : list of (float, float)
        Frequency bands in Hz (the model's columns).
    n_times : int | None
        Must be None or the number of bands.
    numtaps : int | None
        FIR length in samples (None: from the narrowest transition).
    reference : {"bands", None}
        ``"bands"``: subtract, in each window, each channel's mean log power over the
        bands (see the module notes); None: plain log power.
    """

    name = "spectral"
    references: ClassVar[tuple] = ("bands", None)
    bands_as_rows: ClassVar[bool] = False

    def __init__(self, *, sfreq, n_window, bands, n_times, numtaps, reference="default"):
        if n_times is not None and int(n_times) != len(bands):
            raise ValueError(
                f"'n_times' of the spectral path is its number of bands ({len(bands)}), "
                f"got {n_times}"
            )
        super().__init__(
            sfreq=sfreq,
            n_window=n_window,
            bands=bands,
            n_times=1,
            numtaps=numtaps,
            reference=reference,
        )
        self.n_times = len(bands)

    @classmethod
    def default_bands(cls) -> tuple[tuple[float, float], ...]:
        """Return 2 Hz bands from 6 to 34 Hz."""
        return SPECTRAL_BANDS

    def grid_index(self) -> np.ndarray:
        """Return the centre of the window for every band (the columns are frequencies)."""
        return np.full(self.n_times, (self.edges[0] + self.edges[-1] - 1) / 2.0)

    @property
    def freqs(self) -> np.ndarray:
        """Centre frequency of each column in Hz, shape (n_bands,)."""
        return np.array([(lo + hi) / 2.0 for lo, hi in self.bands])

    def from_log_power(self, log_power: np.ndarray) -> np.ndarray:
        """Return ``(n_epochs, n_picks, n_bands)`` features from band-major log power.

        Parameters
        ----------
        log_power : ndarray, shape (n_epochs, n_bands * n_picks, 1)
            Log mean power over the window, band-major rows.

        Returns
        -------
        Z : ndarray, shape (n_epochs, n_picks, n_bands)
            Unscaled features: channels x bands.
        """
        n_ep = log_power.shape[0]
        Z = log_power.reshape(n_ep, len(self.bands), -1).transpose(0, 2, 1)
        if self.reference is None:
            return np.ascontiguousarray(Z)
        return Z - Z.mean(axis=2, keepdims=True)


class CovariancePath(FeaturePath):
    """Shrunk spatial covariance of the band-passed window, in log-Euclidean coordinates.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    n_window : int
        Window length in samples.
    bands : list of (float, float)
        One frequency band in Hz (the covariance is of the band-passed window).
    n_picks : int
        Picked channels: the model's rows and columns.
    numtaps : int | None
        FIR length in samples (None: from the transition width).

    Notes
    -----
    Each window's covariance ``S = X X^T / n`` (channels centred over the window) is
    shrunk towards ``tr(S) / n_picks * I`` by the OAS coefficient (Chen et al., IEEE TSP
    2010; scikit-learn's :func:`~sklearn.covariance.oas`), which keeps it positive
    definite however few samples the window holds, and mapped by the matrix logarithm.
    Everything is a function of the one window, so the online loop computes the same
    numbers from the same samples.

    Examples
    --------
    >>> import numpy as np
    >>> path = CovariancePath(sfreq=100.0, n_window=200, bands=[(8.0, 30.0)], n_picks=3,
    ...                       numtaps=None)
    >>> Z = path.features(np.random.default_rng(0).standard_normal((2, 3, 200)))
    >>> Z.shape, bool(np.allclose(Z, Z.transpose(0, 2, 1)))
    ((2, 3, 3), True)
    """

    name = "covariance"
    linear = False
    centred = True

    def __init__(self, *, sfreq, n_window, bands, n_picks, numtaps):
        if len(bands) != 1:
            raise ValueError(
                f"'bands' of the covariance path must hold one (low, high) band, got {bands}"
            )
        if n_window < 2:
            raise ValueError(f"'n_window' must be at least 2 samples, got {n_window}")
        self.bands = bands
        self.filters = [design_fir(sfreq, *bands[0], numtaps)]
        self.n_times = int(n_picks)
        self.n_window = n_window

    @classmethod
    def from_params(cls, **params) -> CovariancePath:
        """Build from the preprocessor's parameters (one band; no baseline, no grid)."""
        _check_no_baseline(params)
        if params["n_times"] is not None and int(params["n_times"]) != params["n_picks"]:
            raise ValueError(
                "'n_times' of the covariance path is its number of channels "
                f"({params['n_picks']}), got {params['n_times']}"
            )
        keys = ("sfreq", "n_window", "bands", "n_picks", "numtaps")
        return cls(**{k: params[k] for k in keys})

    @classmethod
    def default_bands(cls) -> tuple[tuple[float, float], ...]:
        """Return the mu and beta range, 8-30 Hz."""
        return COVARIANCE_BANDS

    def grid_index(self) -> np.ndarray:
        """Return the centre of the window for every column (the columns are channels)."""
        return np.full(self.n_times, (self.n_window - 1) / 2.0)

    def features(self, windows: np.ndarray) -> np.ndarray:
        """Return the log of the shrunk covariance ``(n_epochs, n_picks, n_picks)``."""
        return log_covariance(windows)


def log_covariance(windows: np.ndarray) -> np.ndarray:
    """Return the matrix log of each window's OAS-shrunk covariance.

    Parameters
    ----------
    windows : ndarray, shape (n_epochs, n_channels, n_times)
        Band-passed windows.

    Returns
    -------
    L : ndarray, shape (n_epochs, n_channels, n_channels)
        Symmetric. A window whose covariance is zero (every channel flat) gives the log of
        the smallest normal float on the diagonal: finite, and far from any real window.
    """
    X = windows - windows.mean(axis=-1, keepdims=True)
    n = X.shape[-1]
    return log_shrunk_covariance(X @ X.transpose(0, 2, 1) / n, n)


def log_shrunk_covariance(S: np.ndarray, n_times: int) -> np.ndarray:
    """Return the matrix log of OAS-shrunk window covariances.

    What :func:`log_covariance` does once it has the covariances: the online covariance
    path computes them from running block sums and ends here too.

    Parameters
    ----------
    S : ndarray, shape (n_epochs, n_channels, n_channels)
        Each window's covariance ``X X^T / n_times``, channels centred over the window.
        Overwritten.
    n_times : int
        Samples per window.

    Returns
    -------
    L : ndarray, shape (n_epochs, n_channels, n_channels)
        As :func:`log_covariance`.
    """
    _, p, _ = S.shape
    n = n_times
    mu = np.trace(S, axis1=1, axis2=2) / p
    alpha = np.mean(S**2, axis=(1, 2))
    num = alpha + mu**2
    den = (n + 1.0) * (alpha - mu**2 / p)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(den > 0, np.minimum(num / den, 1.0), 1.0)
    S *= (1.0 - shrink)[:, None, None]
    S[:, np.arange(p), np.arange(p)] += (shrink * mu)[:, None]
    w, Q = np.linalg.eigh(S)
    logw = np.log(np.maximum(w, np.finfo(np.float64).tiny))
    return (Q * logw[:, None, :]) @ Q.transpose(0, 2, 1)


#: The feature paths by their ``features`` name.
FEATURE_PATHS: dict[str, type[FeaturePath]] = {
    WaveformPath.name: WaveformPath,
    BandpowerPath.name: BandpowerPath,
    SpectralPath.name: SpectralPath,
    CovariancePath.name: CovariancePath,
}
#: The feature path names.
FEATURES = tuple(FEATURE_PATHS)


def centres_rows(features: str) -> bool:
    """Return whether the scaling of feature path ``features`` centres each row first.

    The one rule, read by the preprocessor, the pipeline's scaler and the calibration's
    candidates: the non-linear paths (band power, spectral, covariance) centre their rows
    (log powers have arbitrary offsets); the waveform path never does, so it stays linear.

    Examples
    --------
    >>> centres_rows("waveform"), centres_rows("bandpower")
    (False, True)
    """
    if features not in FEATURE_PATHS:
        raise ValueError(f"'features' must be one of {FEATURES}, got {features!r}")
    return bool(FEATURE_PATHS[features].centred)

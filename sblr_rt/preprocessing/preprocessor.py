"""From a raw window at the source rate to the model's input: one object, offline and online.

A :class:`Preprocessor` is configured once (during calibration), fitted once (only the
scaling is learned from data) and saved inside the model file. It implements two feature
paths:

``"waveform"`` (the paper's input, every step linear)
    channel selection and order by label -> optional causal band-pass -> optional
    baseline -> anti-aliased resampling of the window to the model's time grid (100
    points by default, as in the paper) -> scaling per channel (or per channel and time,
    a separable product that keeps the low-rank structure).
``"bandpower"`` (for oscillatory paradigms such as motor imagery)
    channel selection -> causal band-pass into one or more bands -> square -> mean in
    time bins -> log -> centring and scaling per row. The model's spatial axis is
    channels x bands (band-major: all channels of the first band, then the next band).

Causal filtering and exactness
------------------------------
All filters are causal FIR filters applied by one engine (:func:`scipy.signal.lfilter`,
always with an explicit state). :meth:`Preprocessor.filter_continuous` (a whole
recording) and :class:`StreamingFilter` (chunk by chunk, state kept between chunks) give
the same numbers to floating-point rounding (relative 1e-15: for an FIR filter SciPy
convolves each chunk and adds the carried partial sums, so a chunk boundary changes the
order of a few additions). Because the filter has a finite impulse response of
``n_pad = numtaps - 1`` samples, the output no longer depends on the initial state once
``n_pad`` samples have been seen: a stream joined at any time gives the offline numbers
after that warm-up, and :meth:`Preprocessor.filter_epochs` (zero state, padded epoch)
equals windows cut from :meth:`Preprocessor.filter_continuous` bit for bit. No IIR
filter is offered: its state would never be forgotten exactly.

A raw *epoch* handed to :meth:`Preprocessor.transform` (and to
:class:`sblr_rt.bci_model.BCIModel`) therefore carries ``n_pad`` samples of pre-padding
before the window: ``n_times_raw = n_pad + n_window`` samples, the last ``n_window`` of
which span ``[tmin, tmax)`` relative to the cue. Filtering the padded epoch from a zero
state and dropping the pad equals filtering the continuous signal. Without a band-pass,
``n_pad == 0``.

Sample conventions: for a cue at sample ``onset`` (``round(t_cue * sfreq)``), the window
holds samples ``onset + round(tmin * sfreq) + arange(n_window)`` with ``n_window =
round((tmax - tmin) * sfreq)``; the raw epoch starts ``n_pad`` samples earlier.

Examples
--------
>>> import numpy as np
>>> pre = Preprocessor(ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0,
...                    n_times=50)
>>> rng = np.random.default_rng(0)
>>> pre.fit(rng.standard_normal((10, 3, pre.n_times_raw))).transform(
...     rng.standard_normal((4, 3, pre.n_times_raw))).shape
(4, 3, 50)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from scipy import signal

__all__ = ["FEATURES", "SCALINGS", "Preprocessor", "StreamingFilter", "resampling_matrix"]

#: The two feature paths.
FEATURES = ("waveform", "bandpower")
#: Scaling modes: none, per channel (row), per channel and time (separable).
SCALINGS = (None, "channel", "channel_time")

_DEFAULT_BANDS = ((8.0, 13.0), (13.0, 30.0))
_DEFAULT_BANDPOWER_BINS = 8
_DEFAULT_WAVEFORM_TIMES = 100


# --------------------------------------------------------------------------- filters


def _auto_transition(l_freq: float | None, h_freq: float | None, nyq: float) -> float:
    """Transition band width in Hz, MNE's rule (25 % of the edge, 2 Hz at least)."""
    widths = []
    if l_freq is not None:
        widths.append(min(max(0.25 * l_freq, 2.0), l_freq))
    if h_freq is not None:
        widths.append(min(max(0.25 * h_freq, 2.0), nyq - h_freq))
    return min(widths)


def design_fir(
    sfreq: float,
    l_freq: float | None,
    h_freq: float | None,
    numtaps: int | None = None,
) -> np.ndarray:
    """Design a linear-phase FIR band-pass (or high-/low-pass) with a Hamming window.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    l_freq, h_freq : float | None
        Pass-band edges in Hz; None for no high-pass (resp. low-pass).
    numtaps : int | None
        Filter length in samples (made odd). None chooses ``3.3 / transition * sfreq``,
        the Hamming window's rule, with MNE's automatic transition width.

    Returns
    -------
    b : ndarray, shape (numtaps,)
        The filter coefficients.
    """
    nyq = sfreq / 2.0
    if l_freq is None and h_freq is None:
        raise ValueError("'l_freq' and 'h_freq' cannot both be None to design a filter")
    if l_freq is not None and not 0.0 < l_freq < nyq:
        raise ValueError(f"'l_freq' must be in (0, {nyq}) Hz (Nyquist), got {l_freq}")
    if h_freq is not None and not 0.0 < h_freq < nyq:
        raise ValueError(f"'h_freq' must be in (0, {nyq}) Hz (Nyquist), got {h_freq}")
    if l_freq is not None and h_freq is not None and not l_freq < h_freq:
        raise ValueError(f"'l_freq' must be below 'h_freq', got {l_freq} >= {h_freq}")
    trans = _auto_transition(l_freq, h_freq, nyq)
    if numtaps is None:
        numtaps = int(np.ceil(3.3 / trans * sfreq))
    numtaps = int(numtaps) | 1  # odd: a type I filter may be a high-pass
    cut = []
    if l_freq is not None:
        cut.append(max(l_freq - trans / 2.0, 1e-3 * nyq))
    if h_freq is not None:
        cut.append(min(h_freq + trans / 2.0, nyq * (1 - 1e-3)))
    pass_zero = "lowpass" if l_freq is None else ("highpass" if h_freq is None else "bandpass")
    return signal.firwin(numtaps, cut, pass_zero=pass_zero, fs=sfreq, window="hamming")


class StreamingFilter:
    """Causal FIR filtering chunk by chunk, keeping the filter state between chunks.

    Picks the model's channels (by index) and applies each FIR filter of the
    preprocessor to them; filtering a signal in pieces gives the numbers of filtering it
    at once, to rounding (:meth:`Preprocessor.filter_continuous` uses this very object).

    Parameters
    ----------
    filters : list of ndarray
        FIR coefficient vectors, all of the same length; an empty list means no filter
        (the picked channels pass unchanged).
    picks : ndarray of int, shape (n_picked,)
        Indices of the input channels to keep, in the model's order.
    n_channels : int
        Number of input channels expected in each chunk.

    Attributes
    ----------
    n_processed : int
        Samples processed since creation or :meth:`reset`.
    n_outputs : int
        Output rows: ``n_picked * max(1, len(filters))`` (band-major).
    """

    def __init__(self, filters: Sequence[np.ndarray], picks: np.ndarray, n_channels: int):
        self._filters = [np.asarray(b, dtype=np.float64) for b in filters]
        self._picks = np.asarray(picks, dtype=np.intp)
        self._n_channels = int(n_channels)
        self.n_outputs = len(self._picks) * max(1, len(self._filters))
        self.reset()

    def reset(self) -> None:
        """Forget the past: zero state, as if every earlier sample were zero."""
        self.n_processed = 0
        self._zi = [np.zeros((len(self._picks), len(b) - 1)) for b in self._filters]

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Filter the next chunk.

        Parameters
        ----------
        chunk : array, shape (n_channels, n_samples)
            The next samples of every input channel (the recording's channel order).

        Returns
        -------
        out : ndarray, shape (n_outputs, n_samples)
            Filtered picked channels, band-major when there are several filters.
        """
        chunk = np.asarray(chunk)
        if chunk.ndim != 2 or chunk.shape[0] != self._n_channels:
            raise ValueError(
                f"'chunk' must have shape (n_channels={self._n_channels}, n_samples), "
                f"got {chunk.shape}"
            )
        picked = np.ascontiguousarray(chunk[self._picks], dtype=np.float64)
        self.n_processed += picked.shape[1]
        if not self._filters:
            return picked
        out = np.empty((self.n_outputs, picked.shape[1]))
        n = len(self._picks)
        for k, b in enumerate(self._filters):
            out[k * n : (k + 1) * n], self._zi[k] = signal.lfilter(
                b, [1.0], picked, axis=1, zi=self._zi[k]
            )
        return out


# ----------------------------------------------------------------- temporal operators


def resampling_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Anti-aliased resampling of ``n_in`` samples to ``n_out`` points, as a matrix.

    Output point ``j`` sits at the centre of the ``j``-th of ``n_out`` equal bins of the
    input (input index ``(j + 0.5) * n_in / n_out - 0.5``) and is a Hann-windowed sinc
    low-pass at the new Nyquist frequency (half-width 4 output samples). Each column is
    normalised to sum to one, so constants are preserved, also at the edges where the
    kernel is truncated.

    Parameters
    ----------
    n_in : int
        Input length in samples.
    n_out : int
        Output length, ``1 <= n_out <= n_in``.

    Returns
    -------
    R : ndarray, shape (n_in, n_out)
        ``window @ R`` is the resampled window (identity when ``n_out == n_in``).
    """
    if not 1 <= n_out <= n_in:
        raise ValueError(f"'n_out' must be in [1, n_in={n_in}], got {n_out}")
    if n_out == n_in:
        return np.eye(n_in)
    ratio = n_in / n_out
    centres = (np.arange(n_out) + 0.5) * ratio - 0.5
    d = np.arange(n_in)[:, None] - centres[None, :]
    half = 4.0 * ratio
    fc = 0.5 / ratio
    kernel = 2 * fc * np.sinc(2 * fc * d) * (0.5 + 0.5 * np.cos(np.pi * np.clip(d / half, -1, 1)))
    kernel[np.abs(d) >= half] = 0.0
    return kernel / kernel.sum(axis=0, keepdims=True)


def _baseline_matrix(n: int, start: int, stop: int) -> np.ndarray:
    """``window @ B`` subtracts from each channel its mean over samples [start, stop)."""
    B = np.eye(n)
    B[start:stop, :] -= 1.0 / (stop - start)
    return B


def _bin_edges(n_in: int, n_bins: int) -> np.ndarray:
    if not 1 <= n_bins <= n_in:
        raise ValueError(f"'n_times' (time bins) must be in [1, {n_in}], got {n_bins}")
    return np.round(np.linspace(0, n_in, n_bins + 1)).astype(int)


# ----------------------------------------------------------------------- preprocessor


def _as_float_or_none(name, value):
    if value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"'{name}' must be a number or None, got {type(value).__name__}")
    return float(value)


class Preprocessor:
    """Turn raw windows ``(n_channels, n_times_raw)`` into model input, offline and online.

    Parameters
    ----------
    ch_names : list of str
        Channel names of the raw data in its own order (the recording's or stream's).
    sfreq : float
        Sampling rate of the raw data in Hz.
    tmin, tmax : float
        Epoch window relative to the cue in seconds, ``[tmin, tmax)``.
    picks : list of str | None
        Model channels by label, in the model's order; None keeps every channel.
    features : {"waveform", "bandpower"}
        The feature path.
    l_freq, h_freq : float | None
        Waveform path: optional causal band-pass edges in Hz (None: no filter on that
        side; both None: no filter).
    bands : sequence of (float, float)
        Bandpower path: the frequency bands in Hz.
    n_times : int | None
        Points of the model's time grid: waveform, resampled points (default
        ``min(100, n_window)``); bandpower, time bins (default 8).
    baseline : (float, float) | None
        Waveform path: subtract each channel's mean over this interval (seconds, same
        reference as ``tmin``; it must lie in the window) before resampling.
    scaling : {"channel", "channel_time", None}
        Divide each row (channel, or channel x band) by its RMS over the training epochs
        and time points; ``"channel_time"`` then also divides each time point by its RMS
        (a separable product, which keeps the bilinear structure, unlike per-entry
        z-scoring). The bandpower path also centres each row (log powers have arbitrary
        offsets). The waveform path never centres, so it stays linear.
    filter_length : float | None
        FIR length in seconds; None chooses it from the transition width
        (:func:`design_fir`).

    Attributes
    ----------
    row_offset_, row_scale_ : ndarray, shape (n_rows,)
        Fitted centring (bandpower only; zeros otherwise) and scale of each row.
    col_scale_ : ndarray, shape (n_times_model,)
        Fitted scale of each time point (ones unless ``scaling="channel_time"``).
    """

    def __init__(
        self,
        *,
        ch_names: Sequence[str],
        sfreq: float,
        tmin: float,
        tmax: float,
        picks: Sequence[str] | None = None,
        features: str = "waveform",
        l_freq: float | None = None,
        h_freq: float | None = None,
        bands: Sequence[Sequence[float]] = _DEFAULT_BANDS,
        n_times: int | None = None,
        baseline: Sequence[float] | None = None,
        scaling: str | None = "channel",
        filter_length: float | None = None,
    ):
        if isinstance(ch_names, str) or not all(isinstance(c, str) for c in ch_names):
            raise TypeError("'ch_names' must be a list of str")
        self.ch_names = list(ch_names)
        if len(set(self.ch_names)) != len(self.ch_names):
            raise ValueError(f"'ch_names' must be unique, got duplicates in {self.ch_names}")
        self.sfreq = _as_float_or_none("sfreq", sfreq)
        if self.sfreq is None or self.sfreq <= 0:
            raise ValueError(f"'sfreq' must be a positive number, got {sfreq}")
        self.tmin = _as_float_or_none("tmin", tmin)
        self.tmax = _as_float_or_none("tmax", tmax)
        if self.tmin is None or self.tmax is None:
            raise ValueError("'tmin' and 'tmax' are required")
        self.n_window = round((self.tmax - self.tmin) * self.sfreq)
        if self.n_window < 1:
            raise ValueError(
                f"'tmax' - 'tmin' must span at least one sample at {self.sfreq} Hz, "
                f"got tmin={tmin}, tmax={tmax}"
            )
        if features not in FEATURES:
            raise ValueError(f"'features' must be one of {FEATURES}, got {features!r}")
        self.features = features
        if picks is None:
            self.picks = list(self.ch_names)
        else:
            if isinstance(picks, str):
                raise TypeError("'picks' must be a list of channel names, got a str")
            self.picks = [str(p) for p in picks]
        missing = [p for p in self.picks if p not in self.ch_names]
        if missing:
            raise ValueError(
                f"'picks' names channels missing from the data: {missing}; "
                f"available: {self.ch_names}"
            )
        if len(set(self.picks)) != len(self.picks) or not self.picks:
            raise ValueError(f"'picks' must be unique and non-empty, got {self.picks}")
        self.pick_indices = np.array([self.ch_names.index(p) for p in self.picks], dtype=np.intp)
        self.l_freq = _as_float_or_none("l_freq", l_freq)
        self.h_freq = _as_float_or_none("h_freq", h_freq)
        self.bands = [tuple(float(f) for f in band) for band in bands]
        if features == "bandpower":
            if not self.bands or any(len(b) != 2 for b in self.bands):
                raise ValueError(f"'bands' must be a list of (low, high) pairs, got {bands}")
        if scaling not in SCALINGS:
            raise ValueError(f"'scaling' must be one of {SCALINGS}, got {scaling!r}")
        self.scaling = scaling
        self.filter_length = _as_float_or_none("filter_length", filter_length)
        numtaps = None if self.filter_length is None else round(self.filter_length * self.sfreq)
        if features == "waveform":
            self.filters = (
                []
                if self.l_freq is None and self.h_freq is None
                else [design_fir(self.sfreq, self.l_freq, self.h_freq, numtaps)]
            )
        else:
            if numtaps is None:
                nyq = self.sfreq / 2
                trans = min(_auto_transition(lo, hi, nyq) for lo, hi in self.bands)
                numtaps = int(np.ceil(3.3 / trans * self.sfreq))
            self.filters = [design_fir(self.sfreq, lo, hi, numtaps) for lo, hi in self.bands]
        self.n_pad = len(self.filters[0]) - 1 if self.filters else 0
        default_times = (
            min(_DEFAULT_WAVEFORM_TIMES, self.n_window)
            if features == "waveform"
            else min(_DEFAULT_BANDPOWER_BINS, self.n_window)
        )
        self.n_times = default_times if n_times is None else int(n_times)
        if not 1 <= self.n_times <= self.n_window:
            raise ValueError(
                f"'n_times' must be in [1, n_window={self.n_window}] (the model's grid "
                f"cannot be finer than the raw window), got {n_times}"
            )
        self.baseline = None if baseline is None else tuple(float(b) for b in baseline)
        if self.baseline is not None:
            if features != "waveform":
                raise ValueError("'baseline' applies to the waveform path only")
            start = round((self.baseline[0] - self.tmin) * self.sfreq)
            stop = round((self.baseline[1] - self.tmin) * self.sfreq)
            if not 0 <= start < stop <= self.n_window:
                raise ValueError(
                    f"'baseline' must lie within [tmin, tmax) = [{self.tmin}, {self.tmax}) "
                    f"and span a sample, got {baseline}"
                )
            self._baseline_samples = (start, stop)
        if features == "waveform":
            T = resampling_matrix(self.n_window, self.n_times)
            if self.baseline is not None:
                T = _baseline_matrix(self.n_window, *self._baseline_samples) @ T
            self._temporal = T
        else:
            self._edges = _bin_edges(self.n_window, self.n_times)
        self.row_offset_: np.ndarray | None = None
        self.row_scale_: np.ndarray | None = None
        self.col_scale_: np.ndarray | None = None

    # ---------------------------------------------------------------- description

    def __repr__(self) -> str:
        fitted = "fitted" if self.is_fitted else "not fitted"
        return (
            f"<Preprocessor | {self.features}, {len(self.picks)}/{len(self.ch_names)} "
            f"channels at {self.sfreq:g} Hz, window [{self.tmin:g}, {self.tmax:g}) s -> "
            f"({self.n_rows}, {self.n_times}), {fitted}>"
        )

    @property
    def is_fitted(self) -> bool:
        """Whether the scaling has been fitted."""
        return self.row_scale_ is not None

    @property
    def is_linear(self) -> bool:
        """True for the waveform path (foldable into native-rate factors)."""
        return self.features == "waveform"

    @property
    def n_times_raw(self) -> int:
        """Samples of a raw epoch: ``n_pad`` of filter warm-up, then the window."""
        return self.n_pad + self.n_window

    @property
    def n_rows(self) -> int:
        """Rows of the model input (channels, or channels x bands)."""
        return len(self.picks) * (len(self.bands) if self.features == "bandpower" else 1)

    @property
    def row_names(self) -> list[str]:
        """Names of the model input's rows (``"C3"`` or ``"C3 8-13Hz"``)."""
        if self.features == "waveform":
            return list(self.picks)
        return [f"{ch} {lo:g}-{hi:g}Hz" for lo, hi in self.bands for ch in self.picks]

    @property
    def times(self) -> np.ndarray:
        """Time of each model grid point relative to the cue, in seconds."""
        if self.features == "waveform":
            ratio = self.n_window / self.n_times
            idx = (np.arange(self.n_times) + 0.5) * ratio - 0.5
        else:
            idx = (self._edges[:-1] + self._edges[1:] - 1) / 2.0
        return self.tmin + idx / self.sfreq

    @property
    def bin_edges(self) -> np.ndarray:
        """Bandpower path: sample edges of the time bins in the window, (n_times + 1,)."""
        if self.features != "bandpower":
            raise ValueError(
                f"'bin_edges' exists for the bandpower path only, got {self.features!r}"
            )
        return self._edges.copy()

    @property
    def window_times(self) -> np.ndarray:
        """Time of each raw window sample relative to the cue, shape (n_window,)."""
        return self.tmin + np.arange(self.n_window) / self.sfreq

    # ------------------------------------------------------------------- filtering

    def make_streaming_filter(self) -> StreamingFilter:
        """Return a fresh :class:`StreamingFilter` for raw chunks in ``ch_names`` order.

        Returns
        -------
        filt : StreamingFilter
            ``filt.process(chunk (n_channels, n_samples)) -> (n_filtered, n_samples)``
            with the picked channels filtered (band-major for the bandpower path).
        """
        return StreamingFilter(self.filters, self.pick_indices, len(self.ch_names))

    def filter_continuous(self, data: np.ndarray) -> np.ndarray:
        """Pick and filter a continuous recording from a zero initial state.

        Parameters
        ----------
        data : array, shape (n_channels, n_samples)
            Raw data in ``ch_names`` order.

        Returns
        -------
        filtered : ndarray, shape (n_filtered, n_samples)
            Equal (to rounding) to feeding the same samples to
            :meth:`make_streaming_filter`'s filter in chunks of any size.
        """
        return self.make_streaming_filter().process(data)

    def filter_epochs(self, epochs: np.ndarray) -> np.ndarray:
        """Filter padded raw epochs and drop the pad.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order with ``n_pad`` samples of pre-padding.

        Returns
        -------
        windows : ndarray, shape (n_epochs, n_filtered, n_window)
            Equal to the same window cut from :meth:`filter_continuous`'s output.
        """
        epochs = self._check_epochs(epochs)
        if not self.filters:
            return np.ascontiguousarray(epochs[:, self.pick_indices], dtype=np.float64)
        n_ep = epochs.shape[0]
        n = len(self.picks)
        out = np.empty((n_ep, self.n_rows, self.n_window))
        picked = np.ascontiguousarray(epochs[:, self.pick_indices], dtype=np.float64)
        for k, b in enumerate(self.filters):
            zi = np.zeros((n_ep, n, len(b) - 1))
            y, _ = signal.lfilter(b, [1.0], picked, axis=2, zi=zi)
            out[:, k * n : (k + 1) * n] = y[:, :, self.n_pad :]
        return out

    def _check_epochs(self, epochs) -> np.ndarray:
        epochs = np.asarray(epochs)
        if epochs.ndim != 3:
            raise ValueError(
                "'epochs' must have shape (n_epochs, n_channels, n_times_raw), "
                f"got {epochs.ndim} dimensions {epochs.shape}"
            )
        expected = (len(self.ch_names), self.n_times_raw)
        if epochs.shape[1:] != expected:
            pad = (
                f" ({self.n_pad} samples of filter warm-up before the {self.n_window}-sample"
                " window)"
                if self.n_pad
                else ""
            )
            raise ValueError(
                f"'epochs' must have shape (n_epochs, {expected[0]}, {expected[1]}){pad}, "
                f"got {epochs.shape}"
            )
        if not np.issubdtype(epochs.dtype, np.number):
            raise TypeError(f"'epochs' must be numeric, got dtype {epochs.dtype}")
        return epochs

    # ------------------------------------------------------------------- features

    def features_from_filtered(self, windows: np.ndarray) -> np.ndarray:
        """Unscaled features from filtered windows.

        Parameters
        ----------
        windows : array, shape (n_epochs, n_filtered, n_window)
            Filtered windows (:meth:`filter_epochs`, or cut from
            :meth:`filter_continuous`).

        Returns
        -------
        Z : ndarray, shape (n_epochs, n_rows, n_times)
            Resampled (waveform) or binned log power (bandpower), before scaling.
        """
        windows = np.asarray(windows, dtype=np.float64)
        if windows.ndim != 3 or windows.shape[1:] != (self.n_rows, self.n_window):
            raise ValueError(
                f"'windows' must have shape (n_epochs, {self.n_rows}, {self.n_window}), "
                f"got {windows.shape}"
            )
        if self.features == "waveform":
            return windows @ self._temporal
        power = np.square(windows)
        sums = np.add.reduceat(power, self._edges[:-1], axis=2)
        mean = sums / np.diff(self._edges)
        return np.log(np.maximum(mean, np.finfo(np.float64).tiny))

    def fit_scaling(self, Z: np.ndarray) -> Preprocessor:
        """Fit the scaling on unscaled training features.

        Parameters
        ----------
        Z : array, shape (n_epochs, n_rows, n_times)
            Output of :meth:`features_from_filtered` on training epochs.

        Returns
        -------
        self : Preprocessor
            Fitted.
        """
        self.row_offset_, self.row_scale_, self.col_scale_ = fit_scaling(
            Z, self.scaling, center=self.features == "bandpower"
        )
        return self

    def scale(self, Z: np.ndarray) -> np.ndarray:
        """Apply the fitted scaling to unscaled features.

        Parameters
        ----------
        Z : array, shape (n_epochs, n_rows, n_times)
            Unscaled features.

        Returns
        -------
        X : ndarray, shape (n_epochs, n_rows, n_times)
            Model input.
        """
        self._check_fitted("scale")
        return apply_scaling(Z, self.row_offset_, self.row_scale_, self.col_scale_)

    def fit(self, epochs: np.ndarray, y=None) -> Preprocessor:
        """Fit the scaling on padded raw training epochs.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order, with ``n_pad`` samples of pre-padding.
        y : None
            Ignored.

        Returns
        -------
        self : Preprocessor
            Fitted.
        """
        return self.fit_scaling(self.features_from_filtered(self.filter_epochs(epochs)))

    def transform(self, epochs: np.ndarray) -> np.ndarray:
        """Model input from padded raw epochs.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order, with ``n_pad`` samples of pre-padding.

        Returns
        -------
        X : ndarray, shape (n_epochs, n_rows, n_times)
            Model input.
        """
        self._check_fitted("transform")
        return self.scale(self.features_from_filtered(self.filter_epochs(epochs)))

    def transform_filtered(self, windows: np.ndarray) -> np.ndarray:
        """Model input from already filtered windows (the online path).

        Parameters
        ----------
        windows : array, shape (n_epochs, n_filtered, n_window)
            Filtered windows, e.g. the last ``n_window`` samples of a
            :class:`StreamingFilter`'s output.

        Returns
        -------
        X : ndarray, shape (n_epochs, n_rows, n_times)
            Model input.
        """
        self._check_fitted("transform_filtered")
        return self.scale(self.features_from_filtered(windows))

    def _check_fitted(self, what: str) -> None:
        if not self.is_fitted:
            raise RuntimeError(f"Preprocessor is not fitted: call fit() before {what}()")

    # ----------------------------------------------------------- linear operators

    def linear_operators(self, *, include_filter: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Spatial and temporal matrices of the (linear) waveform path.

        Parameters
        ----------
        include_filter : bool
            False (default): ``X = S @ filtered_window @ T`` where ``filtered_window``
            ``(n_channels, n_window)`` is the band-passed raw window in ``ch_names``
            order (every channel filtered alike; filtering commutes with ``S``). True:
            the FIR filter is folded into ``T`` too, ``X = S @ raw_epoch @ T`` on the
            padded raw epoch ``(n_channels, n_times_raw)``, equal to floating-point
            tolerance.

        Returns
        -------
        S : ndarray, shape (n_rows, n_channels)
            Channel pick and order with the row scaling.
        T : ndarray, shape (n_window, n_times) or (n_times_raw, n_times)
            Baseline, resampling and time scaling (and the filter if requested).
        """
        if not self.is_linear:
            raise ValueError(
                "'linear_operators' exists for the waveform path only (band power squares "
                f"the signal), got features={self.features!r}"
            )
        self._check_fitted("linear_operators")
        S = np.zeros((self.n_rows, len(self.ch_names)))
        S[np.arange(self.n_rows), self.pick_indices] = 1.0 / self.row_scale_
        T = self._temporal / self.col_scale_[None, :]
        if include_filter and self.filters:
            b = self.filters[0]
            # Row j of F: output sample n_pad + j = sum_k b[k] raw[n_pad + j - k].
            F = np.zeros((self.n_window, self.n_times_raw))
            for k, bk in enumerate(b):
                F[np.arange(self.n_window), self.n_pad + np.arange(self.n_window) - k] = bk
            T = F.T @ T
        elif include_filter:
            T = T.copy()
        return S, T

    # ------------------------------------------------------------- (de)serialising

    def get_config(self) -> dict:
        """Return the constructor parameters as a JSON-serialisable dict."""
        return {
            "ch_names": list(self.ch_names),
            "sfreq": self.sfreq,
            "tmin": self.tmin,
            "tmax": self.tmax,
            "picks": list(self.picks),
            "features": self.features,
            "l_freq": self.l_freq,
            "h_freq": self.h_freq,
            "bands": [list(b) for b in self.bands],
            "n_times": self.n_times,
            "baseline": None if self.baseline is None else list(self.baseline),
            "scaling": self.scaling,
            "filter_length": self.filter_length,
        }

    def get_arrays(self) -> dict[str, np.ndarray]:
        """Return the fitted arrays and the filter coefficients (for the model file)."""
        self._check_fitted("get_arrays")
        arrays = {
            "row_offset": self.row_offset_,
            "row_scale": self.row_scale_,
            "col_scale": self.col_scale_,
        }
        for k, b in enumerate(self.filters):
            arrays[f"filter_{k}"] = b
        return arrays

    @classmethod
    def from_config(cls, config: dict, arrays: dict[str, np.ndarray] | None = None):
        """Rebuild a preprocessor from :meth:`get_config` and :meth:`get_arrays` output.

        Parameters
        ----------
        config : dict
            Constructor parameters.
        arrays : dict | None
            Fitted arrays; the stored filter coefficients replace the re-designed ones so
            a loaded model computes exactly what was saved.

        Returns
        -------
        pre : Preprocessor
            Fitted when ``arrays`` is given.
        """
        pre = cls(**config)
        if arrays is not None:
            n_rows, n_times = pre.n_rows, pre.n_times
            expect = {"row_offset": (n_rows,), "row_scale": (n_rows,), "col_scale": (n_times,)}
            for k, b in enumerate(pre.filters):
                expect[f"filter_{k}"] = b.shape
            for name, shape in expect.items():
                if name not in arrays or arrays[name].shape != shape:
                    got = None if name not in arrays else arrays[name].shape
                    raise ValueError(
                        f"preprocessing array {name!r} must have shape {shape}, got {got}"
                    )
            pre.filters = [np.asarray(arrays[f"filter_{k}"]) for k in range(len(pre.filters))]
            pre.row_offset_ = np.asarray(arrays["row_offset"], dtype=np.float64)
            pre.row_scale_ = np.asarray(arrays["row_scale"], dtype=np.float64)
            pre.col_scale_ = np.asarray(arrays["col_scale"], dtype=np.float64)
        return pre

    def for_channels(self, ch_names: Sequence[str]) -> Preprocessor:
        """Return a copy reading raw data with another channel order (or a superset).

        Parameters
        ----------
        ch_names : list of str
            The new raw data's channel names; every model channel must be present.

        Returns
        -------
        pre : Preprocessor
            Same picks, filters and fitted scaling, new ``ch_names``.
        """
        config = self.get_config()
        config["ch_names"] = list(ch_names)
        return Preprocessor.from_config(config, self.get_arrays() if self.is_fitted else None)


# ------------------------------------------------------------------------ scaling


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
        row = _safe_scale(np.sqrt(np.mean(Zc**2, axis=(0, 2))), "row")
        if scaling == "channel_time":
            col = _safe_scale(
                np.sqrt(np.mean((Zc / row[None, :, None]) ** 2, axis=(0, 1))), "time"
            )
    return offset, row, col


def _safe_scale(s: np.ndarray, what: str) -> np.ndarray:
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

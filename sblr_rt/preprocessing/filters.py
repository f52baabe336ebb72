"""Causal FIR filters: their design and the one streaming engine that applies them.

All filters are causal linear-phase FIR filters with the coefficients MNE designs
(:func:`design_fir`). A stream is filtered by
:func:`scipy.signal.lfilter` with an explicit state, so that filtering a signal in pieces
(:class:`StreamingFilter`) equals filtering it at once to rounding. Padded epochs are
filtered from a zero state as a "valid" FFT convolution (:func:`filter_padded_epochs`,
several times faster for the long filters of narrow bands), which equals cutting the
window from the continuously filtered signal to rounding (relative 1e-15). No IIR filter
is offered: its state would never be forgotten exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import fft as sp_fft
from scipy import signal

__all__ = [
    "MAX_NUMTAPS",
    "StreamingFilter",
    "auto_numtaps",
    "auto_transition",
    "design_fir",
    "filter_padded_epochs",
    "transitions",
]

#: The longest FIR filter designed (2**20 taps: minutes of warm-up at EEG rates).
MAX_NUMTAPS = 1 << 20


#: Hamming window: filter length times transition width, in samples times Hz (MNE's factor).
HAMMING_FACTOR = 3.3


def auto_numtaps(sfreq: float, trans: float) -> int:
    """Return the Hamming window's filter length for a transition width, in samples.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    trans : float
        Transition band width in Hz.

    Returns
    -------
    numtaps : int
        ``ceil(3.3 / trans * sfreq)``, MNE's ``filter_length="auto"`` before it is made
        odd (more than :data:`MAX_NUMTAPS` is refused by :func:`design_fir`).
    """
    taps = np.ceil(HAMMING_FACTOR / trans * sfreq)
    if not np.isfinite(taps):
        raise ValueError(f"the transition width must be positive, got {trans} Hz")
    return int(taps)


def transitions(
    l_freq: float | None, h_freq: float | None, nyq: float
) -> tuple[float | None, float | None]:
    """Return the transition widths of each edge in Hz, MNE's ``"auto"`` rule.

    Parameters
    ----------
    l_freq, h_freq : float | None
        Pass-band edges in Hz (None: no edge on that side).
    nyq : float
        Nyquist frequency in Hz.

    Returns
    -------
    l_trans, h_trans : float | None
        ``min(max(0.25 * l_freq, 2), l_freq)`` and ``min(max(0.25 * h_freq, 2),
        nyq - h_freq)`` (None where there is no edge).
    """
    l_trans = None if l_freq is None else min(max(0.25 * l_freq, 2.0), l_freq)
    h_trans = None if h_freq is None else min(max(0.25 * h_freq, 2.0), nyq - h_freq)
    return l_trans, h_trans


def auto_transition(l_freq: float | None, h_freq: float | None, nyq: float) -> float:
    """Return the narrowest transition width of the given edges in Hz (:func:`transitions`).

    Parameters
    ----------
    l_freq, h_freq : float | None
        Pass-band edges in Hz (None: no edge on that side).
    nyq : float
        Nyquist frequency in Hz.

    Returns
    -------
    width : float
        The narrowest transition of the given edges; it sets the filter length.
    """
    return min(w for w in transitions(l_freq, h_freq, nyq) if w is not None)


def _edge_length(stop: float, edge: float, nyq: float) -> int:
    """Return the taps of one edge's low-pass: the Hamming rule for its own transition, odd.

    ``stop`` and ``edge`` are the two ends of the transition band in Hz, normalised as MNE
    normalises them (1 = Nyquist).
    """
    lo, hi = sorted((stop / nyq, edge / nyq))
    n = round(HAMMING_FACTOR / ((hi - lo) / 2.0))
    return n + 1 - n % 2


def _edge_lowpass(numtaps: int, stop: float, edge: float, nyq: float) -> np.ndarray:
    """Return the low-pass of one edge, centred in ``numtaps`` taps (MNE's construction).

    Its length is :func:`_edge_length`, at most ``numtaps``; the cut-off is the middle of
    the transition band.
    """
    n = min(_edge_length(stop, edge, nyq), numtaps)
    h = np.zeros(numtaps)
    off = (numtaps - n) // 2
    h[off : numtaps - off] = signal.firwin(n, (stop + edge) / 2.0 / nyq, window="hamming", fs=2.0)
    return h


def design_fir(
    sfreq: float,
    l_freq: float | None,
    h_freq: float | None,
    numtaps: int | None = None,
) -> np.ndarray:
    """Design MNE's linear-phase FIR band-pass (or high-/low-pass), to be applied causally.

    The coefficients are :func:`mne.filter.create_filter`'s with ``method="fir"``,
    ``phase="zero"``, ``fir_window="hamming"``, ``fir_design="firwin"`` and automatic
    transition widths (:func:`transitions`): each edge is a Hamming-windowed low-pass whose
    length follows that edge's own transition and whose cut-off is the middle of it (the
    8-13 Hz band at 160 Hz passes half its amplitude at 7 and 14.625 Hz), centred in the
    filter. MNE applies them forwards without delay; here they are applied causally, so
    the output is delayed by ``(numtaps - 1) / 2`` samples and the warm-up is ``numtaps -
    1`` samples.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    l_freq, h_freq : float | None
        Pass-band edges in Hz; None for no high-pass (resp. low-pass).
    numtaps : int | None
        Filter length in samples (made odd). None chooses MNE's ``filter_length="auto"``:
        :func:`auto_numtaps` of the narrowest transition. MNE refuses a length shorter than
        an edge needs; such an edge is built here by MNE's construction, truncated to
        ``numtaps``.

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
    l_trans, h_trans = transitions(l_freq, h_freq, nyq)
    trans = auto_transition(l_freq, h_freq, nyq)
    numtaps = (auto_numtaps(sfreq, trans) if numtaps is None else int(numtaps)) | 1
    # odd (above): a type I filter may be a high-pass
    if not 1 <= numtaps <= MAX_NUMTAPS:
        raise ValueError(
            f"the FIR filter must have 1 to {MAX_NUMTAPS} taps (a shorter 'filter_length' "
            f"or wider pass-band edges), got {numtaps}"
        )
    edges = [(h_freq + h_trans, h_freq)] if h_freq is not None else []
    edges += [(l_freq - l_trans, l_freq)] if l_freq is not None else []
    if all(_edge_length(stop, edge, nyq) <= numtaps for stop, edge in edges):
        import mne

        return mne.filter.create_filter(
            None,
            sfreq,
            l_freq,
            h_freq,
            filter_length=numtaps,
            method="fir",
            phase="zero",
            fir_window="hamming",
            fir_design="firwin",
            verbose=False,
        )
    b = np.zeros(numtaps)
    if h_freq is None:
        b[numtaps // 2] = 1.0  # all-pass, from which the high-pass edge subtracts
    else:
        b += _edge_lowpass(numtaps, h_freq + h_trans, h_freq, nyq)
    if l_freq is not None:
        b -= _edge_lowpass(numtaps, l_freq - l_trans, l_freq, nyq)
    return b


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
    spatial : ndarray, shape (n_picked, n_picked) | None
        The spatial stage, applied to the picked channels of every sample before the
        filters (None: none).

    Attributes
    ----------
    n_processed : int
        Samples processed since creation or :meth:`reset`.
    n_outputs : int
        Output rows: ``n_picked * max(1, len(filters))`` (band-major).
    """

    def __init__(
        self,
        filters: Sequence[np.ndarray],
        picks: np.ndarray,
        n_channels: int,
        *,
        spatial: np.ndarray | None = None,
    ):
        self._spatial = None if spatial is None else np.asarray(spatial, dtype=np.float64)
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
        if self._spatial is not None:
            picked = self._spatial @ picked
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


def filter_padded_epochs(
    filters: Sequence[np.ndarray], picked: np.ndarray, n_pad: int
) -> np.ndarray:
    """Filter padded epochs from a zero state with each filter and drop the pad.

    Parameters
    ----------
    filters : list of ndarray
        FIR coefficient vectors (at least one), each of length ``n_pad + 1``.
    picked : ndarray, shape (n_epochs, n_picked, n_pad + n_window)
        Padded raw epochs of the picked channels, float64.
    n_pad : int
        Samples of filter warm-up before the window.

    Returns
    -------
    windows : ndarray, shape (n_epochs, n_picked * len(filters), n_window)
        Filtered windows, band-major.
    """
    n_ep, n, n_raw = picked.shape
    for b in filters:
        if len(b) != n_pad + 1:
            raise ValueError(f"every filter must have n_pad + 1 = {n_pad + 1} taps, got {len(b)}")
    out = np.empty((n_ep, n * len(filters), n_raw - n_pad))
    # The "valid" part of the convolution of a padded epoch is the zero-state causal
    # filter's output after the warm-up: by FFT (equal to lfilter to rounding, several
    # times faster for the long filters of narrow bands), with the epochs' spectrum
    # computed once for every band. A circular convolution of length >= n_raw leaves
    # samples n_pad .. n_raw - 1 free of wrap-around.
    size = sp_fft.next_fast_len(n_raw, real=True)
    spectrum = sp_fft.rfft(picked, size, axis=2)
    for k, b in enumerate(filters):
        response = sp_fft.rfft(np.asarray(b, dtype=np.float64), size)
        out[:, k * n : (k + 1) * n] = sp_fft.irfft(spectrum * response, size, axis=2)[
            :, :, n_pad:n_raw
        ]
    return out

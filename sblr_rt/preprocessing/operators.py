"""The linear operators of the waveform path, as matrices acting on a window's time axis.

``window @ M`` applies ``M`` to each channel of a window ``(n_channels, n_window)``:
anti-aliased resampling to the model's grid, baseline subtraction, the FIR filter folded
into a matrix on the padded epoch; and the bandpower path's time-bin edges.
"""

from __future__ import annotations

import numpy as np

__all__ = ["baseline_matrix", "bin_edges", "fir_matrix", "resampling_matrix"]


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


def baseline_matrix(n: int, start: int, stop: int) -> np.ndarray:
    """Return ``B`` such that ``window @ B`` subtracts each channel's mean over a range.

    Parameters
    ----------
    n : int
        Window length in samples.
    start, stop : int
        The baseline samples ``[start, stop)``, ``0 <= start < stop <= n``.

    Returns
    -------
    B : ndarray, shape (n, n)
    """
    B = np.eye(n)
    B[start:stop, :] -= 1.0 / (stop - start)
    return B


def bin_edges(n_in: int, n_bins: int) -> np.ndarray:
    """Return the sample edges of ``n_bins`` near-equal time bins of ``n_in`` samples.

    Parameters
    ----------
    n_in : int
        Window length in samples.
    n_bins : int
        Number of bins, ``1 <= n_bins <= n_in``.

    Returns
    -------
    edges : ndarray of int, shape (n_bins + 1,)
        ``edges[0] == 0`` and ``edges[-1] == n_in``.
    """
    if not 1 <= n_bins <= n_in:
        raise ValueError(f"'n_times' (time bins) must be in [1, {n_in}], got {n_bins}")
    return np.round(np.linspace(0, n_in, n_bins + 1)).astype(int)


def fir_matrix(b: np.ndarray, n_window: int, n_pad: int) -> np.ndarray:
    """Return the causal FIR filter as a matrix on a padded epoch.

    Parameters
    ----------
    b : ndarray, shape (n_pad + 1,)
        FIR coefficients.
    n_window : int
        Output samples (the window).
    n_pad : int
        Samples of warm-up before the window.

    Returns
    -------
    F : ndarray, shape (n_window, n_pad + n_window)
        ``F @ raw_epoch_row`` is the filtered window, from a zero state.
    """
    # Row j of F: output sample n_pad + j = sum_k b[k] raw[n_pad + j - k].
    F = np.zeros((n_window, n_pad + n_window))
    for k, bk in enumerate(b):
        F[np.arange(n_window), n_pad + np.arange(n_window) - k] = bk
    return F

"""What the timestamps of a regularly sampled stream say: gaps and the effective rate.

The gap rule is the one of :mod:`sblr_rt.io.gaps`, which the live streams use too.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.io.gaps import find_gaps, gap_threshold

__all__ = ["RATE_TOLERANCE", "effective_rate", "stamp_gaps"]

#: Largest relative difference between the effective and the declared rate of a file.
RATE_TOLERANCE = 0.05


def stamp_gaps(stamps: np.ndarray, sfreq: float) -> list[tuple[int, float]]:
    """Return where samples are missing, from the timestamps.

    Parameters
    ----------
    stamps : ndarray, shape (n_samples,)
        Sample timestamps in seconds, in order.
    sfreq : float
        Declared rate in Hz.

    Returns
    -------
    gaps : list of (int, float)
        ``(i, seconds)``: ``seconds`` of samples missing between samples ``i - 1`` and
        ``i`` (the jump less one sample period).
    """
    stamps = np.asarray(stamps, dtype=np.float64)
    found = find_gaps(stamps, last=None, threshold=gap_threshold(sfreq))
    return [(int(i), float(stamps[i] - stamps[i - 1] - 1.0 / sfreq)) for i in found]


def effective_rate(stamps: np.ndarray, gaps) -> float | None:
    """Return the rate the timestamps run at, gaps left out.

    Parameters
    ----------
    stamps : ndarray, shape (n_samples,)
        Sample timestamps in seconds, in order.
    gaps : list of (int, float)
        From :func:`stamp_gaps`.

    Returns
    -------
    rate : float | None
        Sample intervals per second of the stretches between gaps (all intervals when
        every one is a gap); None with fewer than two samples or no elapsed time.
    """
    diffs = np.diff(np.asarray(stamps, dtype=np.float64))
    keep = np.ones(diffs.size, dtype=bool)
    keep[[i - 1 for i, _ in gaps]] = False
    if not keep.any():
        keep[:] = True
    elapsed = float(diffs[keep].sum())
    if diffs.size == 0 or elapsed <= 0:
        return None
    return int(keep.sum()) / elapsed

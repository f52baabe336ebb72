"""What the timestamps of a regularly sampled stream say: gaps and the effective rate.

The gap rule is the one of :mod:`sblr_rt.stream.gaps` (a jump of more than
``max(GAP_SECONDS, GAP_PERIODS / sfreq)``), restated here because ``io`` ranks below
``stream`` and may not import it; ``tests/io/readers/test_stamps.py`` holds the two equal.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GAP_PERIODS", "GAP_SECONDS", "RATE_TOLERANCE", "effective_rate", "stamp_gaps"]

#: A gap is a jump of more than this many sample periods ...
GAP_PERIODS = 10.0
#: ... and of more than this many seconds (as :mod:`sblr_rt.stream.gaps`).
GAP_SECONDS = 0.1
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
    diffs = np.diff(np.asarray(stamps, dtype=np.float64))
    threshold = max(GAP_SECONDS, GAP_PERIODS / sfreq)
    return [(int(i) + 1, float(diffs[i] - 1.0 / sfreq)) for i in np.flatnonzero(diffs > threshold)]


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

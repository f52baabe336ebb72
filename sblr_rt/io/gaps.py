"""When consecutive timestamps of a stream mean lost samples: the one rule.

A gap is a jump between consecutive sample timestamps larger than
:func:`gap_threshold`, forward or back (a device's clock that steps back starts a new
timeline), or a reconnection of the stream. The same rule reads the
timestamps of a recorded file (:mod:`sblr_rt.io.readers`) and of a live stream: the LSL
source detects gaps as samples arrive and counts them, and everything downstream (the
online loop, the dashboard, the recorder's status) reads that count instead of detecting
gaps again.

Examples
--------
>>> import numpy as np
>>> ts = np.r_[np.arange(5), np.arange(20, 22)] / 100.0
>>> find_gaps(ts, last=None, threshold=gap_threshold(100.0))
array([5])
"""

from __future__ import annotations

import numpy as np

__all__ = ["GAP_PERIODS", "GAP_SECONDS", "find_gaps", "gap_threshold"]

#: A gap is a jump of more than this many sample periods ...
GAP_PERIODS = 10.0
#: ... and of more than this many seconds (timestamps of chunked senders jitter).
GAP_SECONDS = 0.1


def gap_threshold(sfreq: float) -> float:
    """Return the smallest timestamp jump, in seconds, that counts as a gap.

    Parameters
    ----------
    sfreq : float
        Nominal sampling rate in Hz.

    Returns
    -------
    threshold : float
        ``max(GAP_SECONDS, GAP_PERIODS / sfreq)``.
    """
    if not sfreq > 0:
        raise ValueError(f"'sfreq' must be a positive rate in Hz, got {sfreq!r}")
    return max(GAP_SECONDS, GAP_PERIODS / float(sfreq))


def find_gaps(timestamps: np.ndarray, *, last: float | None, threshold: float) -> np.ndarray:
    """Return the indices of the samples that follow a gap.

    Parameters
    ----------
    timestamps : ndarray, shape (n_samples,)
        Timestamps of a new chunk, in order.
    last : float | None
        Timestamp of the sample before the chunk (None: the first chunk).
    threshold : float
        From :func:`gap_threshold`.

    Returns
    -------
    indices : ndarray of int
        ``i`` such that ``|timestamps[i] - timestamps[i - 1]| > threshold`` (with
        ``timestamps[-1]`` read as ``last`` for ``i = 0``).
    """
    ts = np.asarray(timestamps, dtype=float)
    if ts.size == 0:
        return np.zeros(0, dtype=int)
    prev = np.empty_like(ts)
    prev[1:] = ts[:-1]
    prev[0] = ts[0] if last is None else last
    return np.flatnonzero(np.abs(ts - prev) > threshold)

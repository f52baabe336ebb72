"""The timeline of an EEG stream: which samples to keep, and where its gaps are.

:class:`StreamTimeline` is the part of :class:`~sblr_rt.stream.LSLSource` that reads the
timestamps of each chunk the reader thread pulls, with no LSL and no lock of its own:

- **clock jumps.** A sender whose clock steps forward shows a step beyond the gap
  threshold; one whose clock steps back shows, after liblsl's monotonic post-processing,
  samples whose time does not advance until the new timeline passes the old one. Either
  way liblsl's dejitter would then spread the step over minutes of timestamps, so the
  samples from the jump on are dropped and the source reopens its inlet, whose first chunk
  restarts the timeline exactly (one gap, logged once).
- **samples held back.** Samples at the end of a chunk whose time does not advance may be
  the start of a jump back that the next chunk completes: they are held back and read
  again with the next chunk, so that a jump found across two chunks is handled as one
  found inside a chunk (no sample keeps the stalled time).
- **gaps.** Between the samples it lets through, THE rule
  (:func:`sblr_rt.io.gaps.find_gaps`) finds the gaps, and a reconnection or a jump puts one
  before the first sample after it.
"""

from __future__ import annotations

import logging

import numpy as np

from sblr_rt.io.gaps import GAP_PERIODS, find_gaps

__all__ = ["StreamTimeline"]

logger = logging.getLogger("sblr_rt.stream")


class StreamTimeline:
    """Clock jumps, held-back samples and gaps of one stream, chunk by chunk.

    Parameters
    ----------
    sfreq : float
        The stream's nominal rate times its declared replay speed (samples per second of
        timestamps).
    gap_threshold : float
        A step between consecutive timestamps larger than this (seconds) is a gap.
    name : str
        The stream's name, for the log.

    Attributes
    ----------
    gaps : list of (float, float)
        ``(t_before, t_after)`` of each gap, in order.
    gap_indices : list of int
        The absolute buffer index of the sample after each gap.
    last_timestamp : float | None
        The time of the last sample let through.

    Examples
    --------
    >>> import numpy as np
    >>> timeline = StreamTimeline(100.0, 0.1)
    >>> timeline.new_inlet()
    >>> _, t, _ = timeline.admit(np.zeros((5, 1)), 10 + np.arange(5) / 100)
    >>> timeline.record(t, first_index=0).tolist(), timeline.last_timestamp
    ([], 10.04)
    >>> _, t, jumped = timeline.admit(np.zeros((12, 1)), np.full(12, 10.04))  # a step back
    >>> len(t), jumped
    (0, True)
    """

    def __init__(self, sfreq: float, gap_threshold: float, name: str = "") -> None:
        self.sfreq, self.gap_threshold, self.name = float(sfreq), float(gap_threshold), name
        self.gaps: list[tuple[float, float]] = []
        self.gap_indices: list[int] = []
        self.last_timestamp: float | None = None
        self._fresh = True  # the next chunk is a fresh inlet's first
        self._gap_next: bool | str = False  # True: lost and back; "jumped": a clock jump
        self._jumped = False  # the clock jumped: a gap before the next inlet's first sample
        self._held = None  # (chunk, timestamps) held back from the last chunk

    def new_inlet(self) -> None:
        """Start reading a fresh inlet: its first chunk restarts the timeline exactly.

        Samples held back from the previous inlet are dropped: their time did not advance,
        which only a jump back causes. After a clock jump, a gap is put before its first
        sample.
        """
        self._fresh, self._held = True, None
        if self._jumped:
            self._gap_next, self._jumped = self._gap_next or "jumped", False

    def reconnected(self) -> None:
        """Put a gap before the next sample let through (the stream was lost and is back)."""
        self._gap_next = True

    def admit(self, chunk, timestamps):
        """Return the samples to keep now, and whether the stream's clock jumped.

        Parameters
        ----------
        chunk : ndarray, shape (n_samples, n_channels)
        timestamps : ndarray of float, shape (n_samples,)

        Returns
        -------
        chunk, timestamps : ndarray
            The samples held back from the last chunk and this chunk's, up to a jump and
            without those held back now.
        jumped : bool
            The clock jumped: the samples from the jump on were dropped, and the caller
            reopens its inlet (then calls :meth:`new_inlet`).
        """
        if self._held is not None:
            held_chunk, held_times = self._held
            chunk = np.concatenate([held_chunk, chunk])
            timestamps = np.concatenate([held_times, timestamps])
            self._held = None
        if self._fresh:  # a fresh inlet's timestamps restart exactly: a step is a gap
            self._fresh = False
            return chunk, timestamps, False
        cut, still_at_end = self._first_jump(timestamps)
        if cut is not None:
            self._jumped = True
            return chunk[:cut], timestamps[:cut], True
        if still_at_end:
            keep = len(timestamps) - still_at_end
            self._held = (chunk[keep:].copy(), timestamps[keep:].copy())
            chunk, timestamps = chunk[:keep], timestamps[:keep]
        return chunk, timestamps, False

    def record(self, timestamps, first_index: int) -> np.ndarray:
        """Find and record the gaps before the samples let through; return their positions.

        Parameters
        ----------
        timestamps : ndarray of float, shape (n_samples,)
            The samples let through (at least one), about to be pushed at
            ``first_index`` of the buffer.
        first_index : int
            The buffer index of the first of them.

        Returns
        -------
        gap_before : ndarray of int
            Positions ``i`` in ``timestamps`` such that a gap lies before sample ``i``.
        """
        last = self.last_timestamp
        gap_before = find_gaps(timestamps, last=last, threshold=self.gap_threshold)
        after, self._gap_next = self._gap_next, False
        if after and last is not None and not (gap_before.size and gap_before[0] == 0):
            gap_before = np.r_[0, gap_before]
        for i in gap_before:
            t_before = float(timestamps[i - 1] if i > 0 else last)
            self.gaps.append((t_before, float(timestamps[i])))
            self.gap_indices.append(first_index + int(i))
            logger.warning(
                "Gap of %.3f s in LSL stream %r (%s).",
                timestamps[i] - t_before,
                self.name,
                "stream was lost" if after is True and i == 0 else "timestamps jumped",
            )
        self.last_timestamp = float(timestamps[-1])
        return gap_before

    def _first_jump(self, timestamps) -> tuple[int | None, int]:
        """Return where the clock jumped in a chunk (or None), and its still samples at the end.

        A jump forward is a step beyond the gap threshold; a jump back shows as
        ``GAP_PERIODS`` samples in a row whose time does not advance. Such a run that
        ends the chunk, shorter than that, is counted in the second value.
        """
        last = self.last_timestamp
        if last is None or not len(timestamps):
            return None, 0
        steps = np.diff(timestamps, prepend=last)
        forward = np.flatnonzero(steps > self.gap_threshold)
        still = steps <= 0.0
        cut = int(forward[0]) if forward.size else None
        start, run = None, 0
        for i in np.flatnonzero(still):
            if cut is not None and i >= cut:
                break
            run = run + 1 if i > 0 and still[i - 1] else 1
            if run >= GAP_PERIODS:
                start = int(i) - run + 1
                break
        if start is not None:
            # the step back may bend the first timestamps after it before they hold still
            period = 1.0 / self.sfreq
            while start > 0 and steps[start - 1] < 0.5 * period:
                start -= 1
            cut = start if cut is None else min(cut, start)
        if cut is not None:
            return cut, 0
        flowing = np.flatnonzero(~still)
        return None, len(still) - 1 - int(flowing[-1]) if flowing.size else len(still)

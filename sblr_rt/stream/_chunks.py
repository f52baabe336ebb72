"""What the EEG source does with each chunk it pulls: the pull itself, gaps, NaN, rate.

:func:`pull_into` wraps the version-dependent ``pylsl.StreamInlet.pull_chunk`` call;
:class:`ChunkBookkeeping` is the part of :class:`~sblr_rt.stream.LSLSource` that runs on
the reader thread for each chunk received: it records the gaps (THE rule,
:func:`sblr_rt.io.gaps.find_gaps`), counts the samples holding NaN, pushes the chunk into
the ring buffer, updates the rate monitor and calls the listeners. The module notes of
:mod:`sblr_rt.stream.eeg_source` describe what these counts mean.
"""

from __future__ import annotations

import inspect
import logging
import math

import numpy as np

from sblr_rt.io.gaps import GAP_PERIODS, find_gaps
from sblr_rt.stream._base import close_inlet
from sblr_rt.stream._liblsl import pylsl
from sblr_rt.stream.clock import local_clock

__all__ = ["ChunkBookkeeping", "declared_speed", "pull_into"]

logger = logging.getLogger("sblr_rt.stream")

# pylsl >= 1.18 can wait for the first sample and then drain (``min_samples``) and return
# numpy arrays (``as_numpy``); older versions fall back to polling.
_PULL_PARAMETERS = set(inspect.signature(pylsl.StreamInlet.pull_chunk).parameters)
_HAS_MIN_SAMPLES = "min_samples" in _PULL_PARAMETERS
_HAS_AS_NUMPY = "as_numpy" in _PULL_PARAMETERS


def pull_into(inlet, scratch, max_samples, timeout, stop_event):
    """Pull one chunk from ``inlet`` into ``scratch``; return its timestamps.

    Parameters
    ----------
    inlet : pylsl.StreamInlet
        The open inlet.
    scratch : ndarray, shape (max_samples, n_channels)
        Destination, in the stream's own dtype.
    max_samples : int
        Most samples to pull.
    timeout : float
        Seconds to wait for the first sample (pylsl >= 1.18).
    stop_event : threading.Event
        Waited on briefly between polls with an older pylsl.

    Returns
    -------
    timestamps : sequence of float, shape (n_samples,)
        One per sample written to ``scratch[:n_samples]``; empty when none arrived.
    """
    if _HAS_MIN_SAMPLES:
        kwargs = {"as_numpy": True} if _HAS_AS_NUMPY else {}
        _, timestamps = inlet.pull_chunk(
            timeout=timeout,
            max_samples=max_samples,
            dest_obj=scratch,
            min_samples=1,
            **kwargs,
        )
    else:  # pragma: no cover - pylsl < 1.18
        _, timestamps = inlet.pull_chunk(timeout=0.0, max_samples=max_samples, dest_obj=scratch)
        if not len(timestamps):
            stop_event.wait(0.001)
    return timestamps


class ChunkBookkeeping:
    """Reader-thread handling of a received chunk, mixed into :class:`LSLSource`.

    Uses the source's ``_state_lock``, ``buffer``, ``_rate``, ``_gap_threshold``,
    ``_name``, ``_sfreq``, ``_dtype``, ``_listeners`` and ``_gap_listeners``, and keeps
    ``_gaps``, ``_gap_indices``, ``_n_nan_samples``, ``_n_chunks``, ``_last_timestamp``,
    ``_last_arrival``, ``_pending_gap``, ``_stall_reopened`` and ``_nan_logged_at``.
    """

    def _handle_chunk(self, chunk, timestamps):
        if getattr(self, "_chunk_inlet", None) is not self._inlet:
            # The first chunk of a fresh inlet: its timestamps restart exactly (a gap in
            # them is a gap, read by the rule below); later ones pass through dejitter.
            self._chunk_inlet = self._inlet
            self._flat_run = 0
        else:
            cut = self._first_jump(timestamps)
            if cut is not None:
                self._restart_after_jump()
                chunk, timestamps = chunk[:cut], timestamps[:cut]
                if not cut:
                    with self._state_lock:  # data came: the stream is not stalled
                        self._last_arrival = local_clock()
                        self._stall_reopened = False
                    return
        now = local_clock()
        n_nan = 0
        if self._dtype.kind == "f":
            n_nan = int(np.count_nonzero(np.isnan(chunk).any(axis=1)))
        first_index = self.buffer.n_pushed  # only this thread pushes
        with self._state_lock:
            gap_before = self._record_gaps(timestamps, first_index)
            self._stall_reopened = False
            self._n_nan_samples += n_nan
            self._n_chunks += 1
            self._last_timestamp = float(timestamps[-1])
            self._last_arrival = now
        self.buffer.push(chunk, timestamps)
        with self._state_lock:
            self._rate.update(first_index + len(timestamps), timestamps[-1])
            self._warn_rate()
        if n_nan and now - self._nan_logged_at > 10.0:
            self._nan_logged_at = now
            logger.warning(
                "LSL stream %r sent samples with NaN (%d so far); they are buffered as is.",
                self._name,
                self._n_nan_samples,
            )
        gap_listeners = self._gap_listeners
        for callback in self._listeners:
            if callback in gap_listeners:
                callback(chunk, timestamps, gap_before)
            else:
                callback(chunk, timestamps)

    def _first_jump(self, timestamps) -> int | None:
        """Return where the stream's clock jumped in a chunk of a running inlet, or None.

        A jump forward is a step beyond the gap threshold; a jump back shows as
        ``GAP_PERIODS`` samples in a row whose time does not advance (liblsl's monotonic
        timestamps hold still until the new timeline passes the old one). Either way,
        liblsl's dejitter would then spread the step over the next minutes of timestamps
        (each chunk a new gap, the measured rate far off).
        """
        last = self._last_timestamp
        if last is None:
            return None
        steps = np.diff(timestamps, prepend=last)
        forward = np.flatnonzero(steps > self._gap_threshold)
        still = steps <= 0.0
        cut = int(forward[0]) if forward.size else None
        run, start = self._flat_run, None
        for i in np.flatnonzero(still) if still.any() else ():
            if cut is not None and i >= cut:
                break
            run = run + 1 if i == 0 or still[i - 1] else 1
            if run >= GAP_PERIODS:
                start = max(0, int(i) - run + 1)
                break
        if start is not None:
            # the step back may bend the first timestamps after it before they hold still
            period = 1.0 / (self._sfreq * getattr(self, "_speed", 1.0))
            while start > 0 and steps[start - 1] < 0.5 * period:
                start -= 1
            cut = start if cut is None else min(cut, start)
        self._flat_run = 0 if cut is not None else _trailing_run(still, self._flat_run)
        return cut

    def _restart_after_jump(self):
        """Reopen the inlet, so that timestamps restart exactly on the new timeline.

        The samples from the jump on are dropped (they carry the dejitter's smeared
        times); the fresh inlet's first chunk is one gap, logged once.
        """
        old, self._inlet = self._inlet, None
        close_inlet(old)
        del old
        with self._state_lock:
            self._pending_gap = "jumped"
        try:
            self._inlet, _ = self._open_inlet(self._resolved_info, timeout=1.0)
        except RuntimeError:  # pylsl's LostError, TimeoutError: the outlet is gone
            self._on_lost()

    def _record_gaps(self, timestamps, first_index) -> np.ndarray:
        """Find the gaps before the samples of a chunk and record them (under the lock)."""
        last = self._last_timestamp
        gap_before = find_gaps(timestamps, last=last, threshold=self._gap_threshold)
        reconnected, self._pending_gap = self._pending_gap, False
        if reconnected and last is not None and not (gap_before.size and gap_before[0] == 0):
            gap_before = np.r_[0, gap_before]
        for i in gap_before:
            t_before = float(timestamps[i - 1] if i > 0 else last)
            self._gaps.append((t_before, float(timestamps[i])))
            self._gap_indices.append(first_index + int(i))
            self._rate.reset()
            lost = reconnected is True and i == 0
            logger.warning(
                "Gap of %.3f s in LSL stream %r (%s).",
                timestamps[i] - t_before,
                self._name,
                "stream was lost" if lost else "timestamps jumped",
            )
        return gap_before

    def _warn_rate(self):
        """Log once when the effective rate leaves the tolerance (under the lock)."""
        rate = self._rate
        level = rate.news()
        if level is None:
            return
        # Against the declared rate times the declared replay speed (rate.sfreq).
        speed = rate.sfreq / self._sfreq
        logger.warning(
            "LSL stream %r runs at %.4g Hz instead of its declared %g Hz%s (%+.1f %%)%s.",
            self._name,
            rate.effective_sfreq,
            self._sfreq,
            f" x {speed:g} (replay speed)" if speed != 1 else "",
            100 * (rate.effective_sfreq / rate.sfreq - 1),
            ": too far off for decisions" if level == "far_off" else "",
        )


def declared_speed(full_info) -> float:
    """Return the playback speed a replay declares in ``desc/acquisition/speed`` (or 1)."""
    text = full_info.desc().child("acquisition").child_value("speed")
    try:
        speed = float(text)
    except ValueError:
        return 1.0
    return speed if math.isfinite(speed) and speed > 0 else 1.0


def _trailing_run(flags, before: int) -> int:
    """Return the length of the run of True at the end of ``flags`` (``before`` carried in)."""
    false = np.flatnonzero(~flags)
    return before + len(flags) if not false.size else len(flags) - 1 - int(false[-1])

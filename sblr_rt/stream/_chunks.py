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
import pylsl

from sblr_rt.io.gaps import find_gaps

from .clock import local_clock

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
            logger.warning(
                "Gap of %.3f s in LSL stream %r (%s).",
                timestamps[i] - t_before,
                self._name,
                "stream was lost" if reconnected and i == 0 else "timestamps jumped",
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

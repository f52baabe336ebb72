"""The display decimation of the online loop: every k-th raw sample, for drawing traces.

Not a general ring buffer (that is :class:`sblr_rt.stream.ring_buffer.RingBuffer`): it keeps
one sample in ``step`` by absolute index, float32, for the dashboard's traces only.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.io.declared_limits import check_allocation
from sblr_rt.online.telemetry import RawTraces


class DecimatedRing:
    """A ring of decimated multichannel samples for display.

    Keeps every ``step``-th sample by absolute sample index (no anti-alias filter: this
    is for drawing traces, not for analysis).

    Parameters
    ----------
    n_channels : int
        Number of channels stored.
    step : int
        Keep one sample in ``step``.
    capacity : int
        Number of decimated samples kept.
    """

    def __init__(self, n_channels: int, step: int, capacity: int) -> None:
        self.step = max(int(step), 1)
        self.capacity = max(int(capacity), 1)
        self._data = np.zeros((self.capacity, n_channels), dtype=np.float32)
        self._times = np.zeros(self.capacity)
        self._count = 0  # decimated samples ever stored

    def push(self, first_index: int, chunk: np.ndarray, timestamps: np.ndarray) -> None:
        """Store the samples of ``chunk`` whose absolute index is a multiple of ``step``.

        Parameters
        ----------
        first_index : int
            Absolute index of ``chunk[0]``.
        chunk : ndarray, shape (n_samples, n_channels)
            The samples.
        timestamps : ndarray, shape (n_samples,)
            Their timestamps.
        """
        offset = (-first_index) % self.step
        kept = chunk[offset :: self.step]
        ts = timestamps[offset :: self.step]
        n = len(kept)
        if n == 0:
            return
        if n > self.capacity:
            kept, ts, n = kept[-self.capacity :], ts[-self.capacity :], self.capacity
        pos = self._count % self.capacity
        first = min(n, self.capacity - pos)
        with np.errstate(over="ignore"):  # a huge sample is drawn as inf in float32
            self._data[pos : pos + first] = kept[:first]
            if first < n:
                self._data[: n - first] = kept[first:]
        self._times[pos : pos + first] = ts[:first]
        if first < n:
            self._times[: n - first] = ts[first:]
        self._count += n

    def latest(self, channels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return the stored samples, oldest first.

        Parameters
        ----------
        channels : ndarray of int | None
            Indices of the channels to return; all when None.

        Returns
        -------
        data : ndarray, shape (n_selected, n_kept)
            The decimated samples (float32).
        times : ndarray, shape (n_kept,)
            Their timestamps.
        """
        n = min(self._count, self.capacity)
        start = (self._count - n) % self.capacity
        order = (start + np.arange(n)) % self.capacity
        data = self._data[order] if channels is None else self._data[np.ix_(order, channels)]
        return np.ascontiguousarray(data.T), self._times[order]


def display_channels(channels, ch_names):
    """Return (indices or None, names) of the ``channels`` (names or indices) to display."""
    if channels is None:
        return None, ch_names
    idx = []
    for ch in channels:
        if isinstance(ch, str):
            if ch not in ch_names:
                raise ValueError(
                    f"'channels' must name channels of the stream, got unknown {ch!r}."
                )
            idx.append(ch_names.index(ch))
        else:
            idx.append(int(ch))
    return np.asarray(idx, dtype=int), [ch_names[i] for i in idx]


class RawDisplay:
    """The online loop's decimated copy of the raw samples, read by its snapshots.

    Parameters
    ----------
    n_channels : int
        Channels of the stream.
    sfreq : float
        Rate of the stream in Hz.
    display_sfreq, display_seconds : float
        Approximate rate and length of the samples kept (one in
        ``round(sfreq / display_sfreq)``).
    lock : threading.Lock
        The lock :meth:`push` takes; a reader holds it around :meth:`traces`.

    Raises
    ------
    ValueError
        If the samples kept would take more than
        :data:`~sblr_rt.io.declared_limits.MAX_DATA_BYTES`, before allocating them.
    """

    def __init__(self, n_channels, sfreq, display_sfreq, display_seconds, lock) -> None:
        step = max(1, round(sfreq / display_sfreq))
        n_keep = max(1, round(display_seconds * sfreq / step))
        check_allocation(
            n_keep * (4 * n_channels + 8),
            what=f"the display's {display_seconds:g} s ('display_seconds') of {n_channels} "
            f"channels at {sfreq / step:g} Hz",
        )
        self._ring = DecimatedRing(n_channels, step, n_keep)
        self.sfreq = sfreq / step
        self._lock = lock

    def push(self, first_index: int, data: np.ndarray, ts: np.ndarray) -> None:
        """Keep the samples of a chunk (as :meth:`DecimatedRing.push`) under the lock."""
        with self._lock:  # snapshot() reads the ring
            self._ring.push(first_index, data, ts)

    def traces(self, channels, ch_names) -> RawTraces:
        """Return the kept samples of ``channels`` (see :func:`display_channels`).

        The caller holds the lock.
        """
        idx, names = display_channels(channels, ch_names)
        data, times = self._ring.latest(idx)
        return RawTraces(data, times, tuple(names), self.sfreq)

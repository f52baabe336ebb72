"""A preallocated, thread-safe ring buffer of multichannel samples and their timestamps.

This module imports numpy only (no LSL, no Qt): the online loop and the tests use it on
plain arrays.

Samples are addressed by their *absolute index*: the first sample ever pushed has index 0
and :attr:`RingBuffer.n_pushed` is the index the next sample will get. The buffer keeps the
last ``capacity`` samples; older ones are overwritten and reading them raises a
:class:`ValueError` rather than returning stale data.

Examples
--------
>>> import numpy as np
>>> buffer = RingBuffer(2, 4)
>>> buffer.push(np.arange(10.0).reshape(5, 2), np.arange(5.0))
>>> buffer.n_pushed
5
>>> window, timestamps = buffer.latest(3)
>>> window
array([[4., 6., 8.],
       [5., 7., 9.]])
>>> timestamps
array([2., 3., 4.])
>>> buffer.index_at_time(3.5)
3
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["RingBuffer"]


class RingBuffer:
    """Fixed-capacity circular buffer of ``(n_samples, n_channels)`` chunks.

    Storage is allocated once, as ``(capacity, n_channels)`` so that a pushed chunk is
    written with at most two contiguous copies, whatever the capacity: nothing is rolled
    or reallocated per chunk. Reads return copies shaped ``(n_channels, n_times)`` (MNE's
    layout), so a caller may keep them while the buffer moves on.

    All methods are thread-safe: one writer (e.g. an LSL reader thread) and any number of
    readers may use the buffer at once. Readers waiting for data can block in
    :meth:`wait_for` instead of polling.

    Parameters
    ----------
    n_channels : int
        Number of channels, ``>= 1``.
    capacity : int
        Number of samples kept, ``>= 1``.
    dtype : numpy dtype
        Data type of the stored samples (e.g. the LSL stream's own type). Timestamps are
        always float64.

    Attributes
    ----------
    n_channels : int
        Number of channels.
    capacity : int
        Number of samples kept.
    dtype : numpy.dtype
        Data type of the stored samples.
    mirrored : bool
        Keep every sample twice, ``capacity`` rows apart, so that any held range is one
        contiguous block: :meth:`rows` then returns a view instead of a copy (the online
        paths read their filter history this way every few samples). Writes cost twice.

    Notes
    -----
    Timestamps are expected to be non-decreasing (LSL's ``monotonize`` post-processing
    guarantees it); :meth:`index_at_time` relies on that.
    """

    def __init__(self, n_channels, capacity, *, dtype=np.float64, mirrored=False):
        self.n_channels = _check_positive_int(n_channels, "n_channels")
        self.capacity = _check_positive_int(capacity, "capacity")
        try:
            self.dtype = np.dtype(dtype)
        except TypeError as err:
            raise TypeError(f"'dtype' must be a numpy dtype, got {dtype!r}.") from err
        if self.dtype.kind not in "fiuc":
            raise TypeError(f"'dtype' must be a numeric numpy dtype, got {self.dtype}.")
        self.mirrored = bool(mirrored)
        rows = 2 * self.capacity if self.mirrored else self.capacity
        self._data = np.zeros((rows, self.n_channels), dtype=self.dtype)
        self._timestamps = np.zeros(self.capacity, dtype=np.float64)
        self._n_pushed = 0
        self._lock = threading.Lock()
        self._new_data = threading.Condition(self._lock)

    def __repr__(self) -> str:
        return (
            f"<RingBuffer | {self.n_channels} channels, {self.n_available}/{self.capacity} "
            f"samples, {self.n_pushed} pushed, {self.dtype}>"
        )

    # ------------------------------------------------------------------------------------
    @property
    def n_pushed(self) -> int:
        """Total number of samples ever pushed (monotonic); the next sample's index."""
        return self._n_pushed

    @property
    def n_available(self) -> int:
        """Number of samples currently readable, ``min(n_pushed, capacity)``."""
        return min(self._n_pushed, self.capacity)

    @property
    def first_index(self) -> int:
        """Absolute index of the oldest sample still held."""
        return max(0, self._n_pushed - self.capacity)

    # ------------------------------------------------------------------------------------
    def push(self, data, timestamps) -> None:
        """Append a chunk of samples.

        Parameters
        ----------
        data : array-like, shape (n_samples, n_channels)
            The samples, one row per sample (LSL's layout). Cast to :attr:`dtype`. An empty
            chunk (``n_samples == 0``) is accepted and does nothing.
        timestamps : array-like, shape (n_samples,) | None
            One timestamp per sample, in seconds; None for a buffer whose timestamps are
            not read (the incremental forms' derived signals): they are left as they were.

        Notes
        -----
        A chunk longer than :attr:`capacity` keeps only its last ``capacity`` samples, but
        :attr:`n_pushed` counts all of them.
        """
        data = np.asarray(data)
        if data.ndim != 2 or data.shape[1] != self.n_channels:
            raise ValueError(
                f"'data' must have shape (n_samples, {self.n_channels}), got shape {data.shape}."
            )
        if timestamps is not None:
            timestamps = np.asarray(timestamps, dtype=np.float64)
        if timestamps is not None and timestamps.shape != (data.shape[0],):
            raise ValueError(
                f"'timestamps' must have shape ({data.shape[0]},) to match 'data', got "
                f"shape {timestamps.shape}."
            )
        n_samples = data.shape[0]
        if n_samples == 0:
            return
        if n_samples > self.capacity:
            data = data[-self.capacity :]
            timestamps = None if timestamps is None else timestamps[-self.capacity :]
        n_write = data.shape[0]
        with self._lock:
            start = (self._n_pushed + n_samples - n_write) % self.capacity
            first = min(n_write, self.capacity - start)
            self._data[start : start + first] = data[:first]
            if self.mirrored:
                self._data[start + self.capacity : start + self.capacity + first] = data[:first]
            if timestamps is not None:
                self._timestamps[start : start + first] = timestamps[:first]
            if first < n_write:
                self._data[: n_write - first] = data[first:]
                if self.mirrored:
                    self._data[self.capacity : self.capacity + n_write - first] = data[first:]
                if timestamps is not None:
                    self._timestamps[: n_write - first] = timestamps[first:]
            self._n_pushed += n_samples
            self._new_data.notify_all()

    def get(self, start, stop):
        """Return the samples with absolute indices ``start <= index < stop``.

        Parameters
        ----------
        start, stop : int
            Absolute sample indices (see :attr:`n_pushed`), ``start <= stop``.

        Returns
        -------
        window : ndarray, shape (n_channels, stop - start)
            A copy of the samples, channels first.
        timestamps : ndarray, shape (stop - start,)
            Their timestamps.

        Raises
        ------
        ValueError
            If part of the range was already overwritten or is not yet pushed.
        """
        start = _check_int(start, "start")
        stop = _check_int(stop, "stop")
        if stop < start:
            raise ValueError(f"'stop' must be >= 'start' ({start}), got {stop}.")
        with self._lock:
            return self._read(start, stop)

    def rows(self, start, stop) -> np.ndarray:
        """Return a read-only view of the samples ``start <= index < stop`` (mirrored only).

        Parameters
        ----------
        start, stop : int
            Absolute sample indices, ``start <= stop``, held in the buffer.

        Returns
        -------
        rows : ndarray, shape (stop - start, n_channels)
            A view, one row per sample; valid until the next push overwrites it.
        """
        if not self.mirrored:
            raise RuntimeError("RingBuffer.rows() needs a buffer made with mirrored=True")
        with self._lock:
            self._check_range(start, stop)
            pos = start % self.capacity
            view = self._data[pos : pos + (stop - start)]
        view.flags.writeable = False
        return view

    def take(self, indices) -> np.ndarray:
        """Return the samples at some absolute indices (a few rows, not a window).

        Parameters
        ----------
        indices : array-like of int, shape (n,)
            Absolute sample indices, each held in the buffer.

        Returns
        -------
        samples : ndarray, shape (n, n_channels)
            A copy of those samples, one row each, in the order given.

        Raises
        ------
        ValueError
            If an index was already overwritten or is not yet pushed.
        """
        indices = np.asarray(indices, dtype=np.int64)
        if indices.ndim != 1:
            raise ValueError(f"'indices' must be 1-D, got shape {indices.shape}.")
        with self._lock:
            if indices.size:
                self._check_range(int(indices.min()), int(indices.max()) + 1)
            return self._data[indices % self.capacity]

    def latest(self, n_times):
        """Return the last ``n_times`` samples.

        Parameters
        ----------
        n_times : int
            Number of samples, ``0 <= n_times <= n_available``.

        Returns
        -------
        window : ndarray, shape (n_channels, n_times)
            A copy of the samples, channels first, oldest first.
        timestamps : ndarray, shape (n_times,)
            Their timestamps.

        Raises
        ------
        ValueError
            If fewer than ``n_times`` samples are held (call with
            ``min(n_times, buffer.n_available)`` to accept a shorter window).
        """
        n_times = _check_int(n_times, "n_times")
        if n_times < 0:
            raise ValueError(f"'n_times' must be >= 0, got {n_times}.")
        with self._lock:
            available = min(self._n_pushed, self.capacity)
            if n_times > available:
                raise ValueError(
                    f"'n_times' must be at most the {available} samples held (capacity "
                    f"{self.capacity}, {self._n_pushed} pushed so far), got {n_times}."
                )
            return self._read(self._n_pushed - n_times, self._n_pushed)

    def index_at_time(self, t) -> int:
        """Return the absolute index of the last sample with timestamp ``<= t``.

        Parameters
        ----------
        t : float
            A time in the timestamps' clock (seconds).

        Returns
        -------
        index : int
            Absolute index (see :attr:`n_pushed`). If ``t`` is at or after the newest
            timestamp this is ``n_pushed - 1``; a sample pushed later may still have a
            timestamp ``<= t``.

        Raises
        ------
        ValueError
            If nothing was pushed yet, or ``t`` precedes the oldest sample held (its
            sample was overwritten, or precedes the first sample ever pushed).
        """
        t = float(t)
        with self._lock:
            n_pushed = self._n_pushed
            if n_pushed == 0:
                raise ValueError(
                    f"No sample pushed yet, cannot find the sample at time {t!r}; wait for "
                    "data (RingBuffer.wait_for) first."
                )
            first = max(0, n_pushed - self.capacity)
            pos = first % self.capacity
            n_held = n_pushed - first
            # Two sorted runs in storage order: [pos, end) then [0, pos) when wrapped.
            older = self._timestamps[pos : pos + n_held]
            newer = self._timestamps[: n_held - older.size]
            if t < older[0]:
                what = (
                    "the oldest sample held (older samples were overwritten)"
                    if first > 0
                    else "the first sample pushed"
                )
                raise ValueError(
                    f"'t' must not precede {what} at {older[0]!r} (index {first}), got {t!r}."
                )
            if newer.size and t >= newer[0]:
                k = older.size + int(np.searchsorted(newer, t, side="right"))
            else:
                k = int(np.searchsorted(older, t, side="right"))
            return first + k - 1

    def timestamp_at(self, index) -> float:
        """Return the timestamp of the sample at absolute ``index``.

        Parameters
        ----------
        index : int
            Absolute sample index, held in the buffer.

        Returns
        -------
        timestamp : float
            The sample's timestamp.
        """
        index = _check_int(index, "index")
        with self._lock:
            self._check_range(index, index + 1)
            return float(self._timestamps[index % self.capacity])

    def wait_for(self, n_pushed, timeout=None) -> bool:
        """Block until at least ``n_pushed`` samples were pushed in total.

        Parameters
        ----------
        n_pushed : int
            Target value of :attr:`n_pushed`.
        timeout : float | None
            Maximum wait in seconds; ``None`` waits forever.

        Returns
        -------
        reached : bool
            Whether the target was reached before the timeout.
        """
        n_pushed = _check_int(n_pushed, "n_pushed")
        with self._new_data:
            return self._new_data.wait_for(lambda: self._n_pushed >= n_pushed, timeout)

    # ------------------------------------------------------------------------------------
    def _check_range(self, start, stop):
        first = max(0, self._n_pushed - self.capacity)
        if start < first:
            raise ValueError(
                f"Samples {start}..{stop - 1} requested, but samples before index {first} "
                f"were overwritten (capacity {self.capacity}); got 'start'={start}."
            )
        if stop > self._n_pushed:
            raise ValueError(
                f"Samples {start}..{stop - 1} requested, but only {self._n_pushed} samples "
                f"were pushed so far; got 'stop'={stop}."
            )

    def _read(self, start, stop):
        """Copy ``[start, stop)`` out; the caller holds the lock."""
        self._check_range(start, stop)
        n_times = stop - start
        window = np.empty((self.n_channels, n_times), dtype=self.dtype)
        timestamps = np.empty(n_times, dtype=np.float64)
        if n_times == 0:
            return window, timestamps
        pos = start % self.capacity
        first = min(n_times, self.capacity - pos)
        window[:, :first] = self._data[pos : pos + first].T
        timestamps[:first] = self._timestamps[pos : pos + first]
        if first < n_times:
            window[:, first:] = self._data[: n_times - first].T
            timestamps[first:] = self._timestamps[: n_times - first]
        return window, timestamps


def _check_int(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"'{name}' must be an int, got {type(value).__name__} {value!r}.")
    return int(value)


def _check_positive_int(value, name) -> int:
    value = _check_int(value, name)
    if value < 1:
        raise ValueError(f"'{name}' must be >= 1, got {value}.")
    return value

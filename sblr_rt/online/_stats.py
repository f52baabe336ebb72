"""Small bounded statistics used by the online loop (numpy only, not thread-safe)."""

from __future__ import annotations

from collections import deque

import numpy as np


class RecentValues:
    """Values with their times, keeping only the last ``horizon`` seconds.

    Parameters
    ----------
    horizon : float
        Seconds of history kept.
    maxlen : int
        Hard bound on the number of values kept, whatever their times.
    """

    def __init__(self, horizon: float = 60.0, maxlen: int = 100_000) -> None:
        self.horizon = float(horizon)
        self._times: deque[float] = deque(maxlen=maxlen)
        self._values: deque[float] = deque(maxlen=maxlen)

    def add(self, t: float, value: float) -> None:
        """Record ``value`` observed at time ``t`` (seconds) and drop what is too old."""
        self._times.append(t)
        self._values.append(value)
        self._prune(t)

    def _prune(self, now: float) -> None:
        limit = now - self.horizon
        while self._times and self._times[0] < limit:
            self._times.popleft()
            self._values.popleft()

    def summary(self, now: float) -> dict:
        """Summarize the values of the last ``horizon`` seconds.

        Parameters
        ----------
        now : float
            The current time, in the clock of :meth:`add`.

        Returns
        -------
        summary : dict
            ``n``, ``p50``, ``p99``, ``max`` and ``mean`` (NaN when there is no value).
        """
        self._prune(now)
        n = len(self._values)
        if n == 0:
            nan = float("nan")
            return {"n": 0, "p50": nan, "p99": nan, "max": nan, "mean": nan}
        values = np.fromiter(self._values, dtype=float, count=n)
        p50, p99 = np.percentile(values, [50.0, 99.0])
        return {
            "n": n,
            "p50": float(p50),
            "p99": float(p99),
            "max": float(values.max()),
            "mean": float(values.mean()),
        }

    def rate(self, now: float) -> float:
        """Return the number of values per second over the last ``horizon`` seconds."""
        self._prune(now)
        n = len(self._times)
        if n < 2:
            return 0.0
        span = max(now - self._times[0], 1e-9)
        return n / span if span < self.horizon else n / self.horizon


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
        self._data[pos : pos + first] = kept[:first]
        self._times[pos : pos + first] = ts[:first]
        if first < n:
            self._data[: n - first] = kept[first:]
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

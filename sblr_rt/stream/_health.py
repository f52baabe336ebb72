"""A stream's health: its effective rate against the declared one, and its state.

Pure Python (no LSL). :class:`RateMonitor` is fed one point per chunk, the number of
samples received so far and the timestamp of the chunk's last sample, and measures the rate
over a sliding window of timestamps. The verdict waits until the window spans
``min_span`` seconds, so that start-up and chunking do not trigger it.
:func:`stream_state` says whether an open stream is connecting, streaming or stalled.

Examples
--------
>>> monitor = RateMonitor(500.0)
>>> for k in range(1, 101):  # 10 s of a device that sends 350 Hz while claiming 500
...     monitor.update(35 * k, (35 * k - 1) / 350.0)
>>> round(monitor.effective_sfreq), monitor.rate_ok, monitor.rate_far_off
(350, False, True)
"""

from __future__ import annotations

import collections
import math

__all__ = ["RateMonitor", "stall_threshold", "stream_state"]


class RateMonitor:
    """Sliding-window estimate of a stream's effective rate against its nominal rate.

    Parameters
    ----------
    sfreq : float
        Nominal (declared) rate in Hz.
    tolerance : tuple of float | None
        ``(warn, far)``: relative deviations from ``sfreq`` beyond which the rate is not
        ok (``rate_ok`` False) and far off (``rate_far_off`` True). ``None`` gives no
        verdict (for streams played faster than their nominal rate on purpose).
    window : float
        Seconds of timestamps the estimate spans at most.
    min_span : float
        Seconds of timestamps needed before a verdict is given.
    """

    def __init__(self, sfreq, *, tolerance=(0.05, 0.2), window=10.0, min_span=4.0):
        self.sfreq = float(sfreq)
        self.tolerance = tolerance
        self.window = float(window)
        self.min_span = float(min_span)
        self._points = collections.deque()  # (n received, timestamp of the last one)
        self._reported = set()

    def update(self, n_received: int, last_timestamp: float) -> None:
        """Add the point of one chunk.

        Parameters
        ----------
        n_received : int
            Samples received so far, this chunk included.
        last_timestamp : float
            Timestamp of the chunk's last sample.
        """
        points = self._points
        points.append((int(n_received), float(last_timestamp)))
        while len(points) > 2 and points[-1][1] - points[1][1] > self.window:
            points.popleft()

    def reset(self) -> None:
        """Forget the points (after a gap, the rate across it means nothing)."""
        self._points.clear()

    @property
    def span(self) -> float:
        """Seconds of timestamps the current estimate spans."""
        if len(self._points) < 2:
            return 0.0
        return self._points[-1][1] - self._points[0][1]

    @property
    def effective_sfreq(self) -> float | None:
        """Samples per second of timestamps over the window; None until 0.2 s are seen."""
        points = self._points
        if len(points) < 2:
            return None
        (n0, t0), (n1, t1) = points[0], points[-1]
        if t1 - t0 < 0.2 or n1 == n0:
            return None
        return (n1 - n0) / (t1 - t0)

    @property
    def deviation(self) -> float | None:
        """Relative deviation ``|effective - nominal| / nominal`` once a verdict is due."""
        rate = self.effective_sfreq
        if rate is None or self.span < self.min_span:
            return None
        return abs(rate - self.sfreq) / self.sfreq

    @property
    def rate_ok(self) -> bool | None:
        """Whether the rate is within ``tolerance[0]``; None while unknown or unchecked."""
        deviation = self.deviation
        if deviation is None or self.tolerance is None:
            return None
        return deviation <= self.tolerance[0]

    @property
    def rate_far_off(self) -> bool:
        """Whether the rate is beyond ``tolerance[1]`` (False while unknown or unchecked)."""
        deviation = self.deviation
        if deviation is None or self.tolerance is None:
            return False
        return deviation > self.tolerance[1]

    def news(self) -> str | None:
        """Return the verdict the first time it is reached, for a log line; else None.

        Returns
        -------
        news : {"drift", "far_off"} | None
            ``"drift"`` the first time ``rate_ok`` is False, ``"far_off"`` the first time
            ``rate_far_off`` is True; None otherwise (each is reported once).
        """
        level = "far_off" if self.rate_far_off else ("drift" if self.rate_ok is False else None)
        if level is None or level in self._reported:
            return None
        self._reported.add(level)
        return level


def stall_threshold(sfreq: float) -> float:
    """Return the silence, in seconds, after which an open stream counts as stalled.

    Parameters
    ----------
    sfreq : float
        Nominal sampling rate in Hz.

    Returns
    -------
    seconds : float
        ``max(1.0, 20 / sfreq)``.
    """
    return max(1.0, 20.0 / float(sfreq))


def stream_state(*, connected, connected_at, last_arrival, now, sfreq) -> str:
    """Classify a source as connecting, streaming, stalled or lost.

    Parameters
    ----------
    connected : bool
        Whether an inlet is open.
    connected_at, last_arrival : float | None
        Clock time of the last (re)connection and of the last chunk received.
    now : float
        Clock time now (same clock).
    sfreq : float
        Nominal rate in Hz (see :func:`stall_threshold`).

    Returns
    -------
    state : {"connecting", "streaming", "stalled", "lost"}
        ``"lost"`` without an inlet; ``"stalled"`` when nothing arrived for more than
        :func:`stall_threshold` since the last chunk (or the connection, if no chunk came
        since); else ``"streaming"`` once a chunk arrived since the connection,
        ``"connecting"`` before.
    """
    if not connected:
        return "lost"
    receiving = last_arrival is not None and last_arrival >= connected_at
    since = last_arrival if receiving else connected_at
    if now - since > stall_threshold(sfreq):
        return "stalled"
    return "streaming" if receiving else "connecting"


def check_tolerance(tolerance):
    """Check ``rate_tolerance``: None or ``(warn, far)`` with ``0 < warn <= far``.

    Parameters
    ----------
    tolerance : tuple of float | None
        The parameter.

    Returns
    -------
    tolerance : tuple of float | None
        As floats.
    """
    if tolerance is None:
        return None
    try:
        warn, far = (float(v) for v in tolerance)
    except (TypeError, ValueError):
        raise TypeError(
            f"'rate_tolerance' must be None or a pair of numbers (warn, far), got {tolerance!r}."
        ) from None
    if not (0 < warn <= far and math.isfinite(far)):
        raise ValueError(
            f"'rate_tolerance' must be (warn, far) with 0 < warn <= far, got {tolerance!r}."
        )
    return warn, far

"""The EEG source's status as the online loop reads it: polled, logged, kept for snapshots.

:class:`StatusWatch` reads ``source.status()`` at most every ``every`` seconds of the
stream's clock, says in the log when the stream vanishes and when it streams again, hands
the status to the scheduler (which stops deciding while the rate is far off) and keeps the
last one for :meth:`~sblr_rt.online.loop.OnlineLoop.snapshot`.
"""

from __future__ import annotations

import logging
import math

logger = logging.getLogger("sblr_rt.online")

__all__ = ["StatusWatch"]


class StatusWatch:
    """The last status of the EEG source, read on the worker, shown by the snapshots.

    Parameters
    ----------
    every : float
        Seconds of clock between two reads of the source's status.

    Attributes
    ----------
    status : dict
        The last ``source.status()`` read (empty before the first).
    connected : bool
        Its ``"connected"`` (True when the source does not say).
    """

    def __init__(self, every: float) -> None:
        self.every = float(every)
        self.status: dict = {}
        self.connected = False
        self._last = -math.inf

    def reset(self) -> None:
        """Read the status at the next :meth:`check`, whatever the time."""
        self._last = -math.inf

    def check(self, source, now, scheduler, lock, label) -> None:
        """Read the status if due; log a change of connection; pass it to ``scheduler``.

        Parameters
        ----------
        source : object
            The EEG source (``status() -> dict``).
        now : float
            The clock's time.
        scheduler : Scheduler
            Told the status (``watch(status)``).
        lock : threading.Lock
            Held while the status kept for the snapshots is replaced.
        label : str
            The stream's name in the log.
        """
        if now - self._last < self.every:
            return
        self._last = now
        status = source.status()
        connected = bool(status.get("connected", True))
        if connected != self.connected:
            if connected:
                logger.info("%s is streaming.", label)
            else:
                logger.warning(
                    "%s vanished; no decisions until it returns (the loop keeps running).",
                    label,
                )
        scheduler.watch(status)
        with lock:
            self.status, self.connected = status, connected

"""A tiny terminal progress bar (no dependency): ``progress(done, total, stage)``."""

from __future__ import annotations

import sys
import time

__all__ = ["TerminalProgress"]


class TerminalProgress:
    """Draw ``stage [#####.....] done/total elapsed`` on one terminal line.

    Parameters
    ----------
    stream : file-like | None
        Where to draw (default ``sys.stderr``). On a non-terminal stream one line is
        written per stage when it finishes.
    width : int
        Bar width in characters.
    min_interval : float
        Minimum seconds between redraws.
    """

    def __init__(self, stream=None, *, width: int = 30, min_interval: float = 0.1):
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.min_interval = min_interval
        self._last = 0.0
        self._t0: dict[str, float] = {}
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int, stage: str = "") -> None:
        """Report that ``done`` of ``total`` tasks of ``stage`` are finished."""
        now = time.monotonic()
        t0 = self._t0.setdefault(stage, now)
        finished = done >= total
        if not finished and now - self._last < self.min_interval:
            return
        self._last = now
        frac = done / total if total else 1.0
        fill = round(frac * self.width)
        line = (
            f"{stage:>5} [{'#' * fill}{'.' * (self.width - fill)}] {done}/{total} "
            f"{now - t0:6.1f} s"
        )
        if self._tty:
            self.stream.write("\r" + line + ("\n" if finished else ""))
            self.stream.flush()
        elif finished:
            self.stream.write(line + "\n")
            self.stream.flush()

"""Record an EEG stream and its markers into a :class:`~sblr_rt.io.recordings.Recording`.

Used by the Calibrate tab to calibrate on a live stream: start, let the cue paradigm (or
an external program) run, stop, and hand the recording to :func:`sblr_rt.calibration.calibrate`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter

import numpy as np

logger = logging.getLogger("sblr_rt.gui")


class StreamRecorder:
    """Keep every sample of an EEG stream and every marker of a marker stream.

    Parameters
    ----------
    name, source_id : str | None
        The EEG stream.
    marker_name, marker_source_id : str | None
        The marker stream (its markers become the recording's markers).
    max_seconds : float
        Longest recording kept (the ring buffer's length).
    timeout : float
        Seconds :meth:`start` waits for each stream.
    """

    def __init__(
        self,
        *,
        name=None,
        source_id=None,
        marker_name=None,
        marker_source_id=None,
        max_seconds: float = 3600.0,
        timeout: float = 5.0,
    ):
        from sblr_rt.stream import LSLSource, MarkerSource

        self.source = LSLSource(
            name=name, source_id=source_id, timeout=timeout, buffer_seconds=max_seconds
        )
        self.markers = MarkerSource(name=marker_name, source_id=marker_source_id, timeout=timeout)
        self._marker_log: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._first = None

    def start(self) -> StreamRecorder:
        """Open both streams (blocks up to ``timeout`` each: call from a worker)."""
        self.source.start()
        self.markers.start()
        self._first = self.source.buffer.n_pushed
        return self

    def poll(self) -> dict:
        """Collect new markers and return progress (cheap; call from a GUI timer).

        Returns
        -------
        progress : dict
            ``seconds`` recorded, ``n_markers`` and ``counts`` per marker value,
            ``connected``.
        """
        new = self.markers.pop()
        buffer = self.source.buffer
        first = self._first or 0
        n = buffer.n_pushed - first
        # a marker inlet may deliver markers sent before the recording: skip those
        t_first = buffer.get(first, first + 1)[1][0] if n > 0 else float("inf")
        half = 0.5 / float(self.source.sfreq)
        with self._lock:
            self._marker_log.extend((float(t), str(v)) for t, v in new)
            counts = Counter(v for t, v in self._marker_log if t >= t_first - half)
        return {
            "seconds": n / float(self.source.sfreq),
            "n_markers": sum(counts.values()),
            "counts": dict(counts),
            "connected": bool(self.source.status().get("connected")),
        }

    def stop(self):
        """Stop both streams and return what was recorded.

        Returns
        -------
        recording : Recording
            Samples since :meth:`start` and the markers placed on their time axis.
        """
        from sblr_rt.io.recordings import Recording

        self.poll()
        buffer = self.source.buffer
        stop = buffer.n_pushed
        start = max(self._first or 0, stop - buffer.capacity)
        self.source.stop()
        self.markers.stop()
        if stop - start < 2:
            raise RuntimeError(
                "no samples were recorded: start the EEG stream, then StreamRecorder.start()"
            )
        data, timestamps = buffer.get(start, stop)
        with self._lock:
            markers = sorted(self._marker_log)
        times = np.array([t for t, _ in markers], float) - timestamps[0]
        keep = (times >= 0) & (times <= timestamps[-1] - timestamps[0])
        values = [v for (_, v), k in zip(markers, keep, strict=True) if k]
        return Recording(
            data=np.asarray(data, np.float64),
            sfreq=float(self.source.sfreq),
            ch_names=list(self.source.ch_names),
            marker_times=times[keep],
            marker_values=values,
            source=f"LSL stream {self.source.name!r}",
            unit="unknown",
        )

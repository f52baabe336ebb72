"""The dashboard's view of :class:`sblr_rt.recorder.Recorder` (no second writer).

The Calibrate tab records a live stream with the project's one crash-safe recorder (a
sidecar folder written as data arrive, a FIF file at the end) and reads the result back
for :func:`sblr_rt.calibration.calibrate`. This adapter only turns the recorder's status
into what the tab shows and the FIF file into a :class:`~sblr_rt.io.reading.Recording`
in the stream's own units, the units the Live tab will classify.
"""

from __future__ import annotations

import datetime as _dt
import logging
from pathlib import Path

logger = logging.getLogger("sblr_rt.gui")


def default_recording_path(folder) -> Path:
    """Return a new, time-stamped FIF name in ``folder`` for a dashboard recording.

    Parameters
    ----------
    folder : str | Path
        Where to record.

    Returns
    -------
    path : Path
        ``folder/calibration-YYYYmmdd-HHMMSS_raw.fif``.
    """
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(folder) / f"calibration-{stamp}_raw.fif"


class StreamRecorder:
    """Record an EEG stream and a marker stream to ``out`` for the Calibrate tab.

    Parameters
    ----------
    out : str | Path
        The FIF file (its sidecar ``out.rec`` holds the data while recording).
    name, source_id : str | None
        The EEG stream.
    marker_name, marker_source_id : str | None
        The marker stream (its markers become the recording's markers).
    timeout : float
        Seconds :meth:`start` waits for each stream.
    """

    def __init__(
        self,
        out,
        *,
        name=None,
        source_id=None,
        marker_name=None,
        marker_source_id=None,
        timeout: float = 5.0,
    ):
        from sblr_rt.recorder import Recorder

        self.recorder = Recorder(
            out,
            name=name,
            source_id=source_id,
            marker_name=marker_name,
            marker_source_id=marker_source_id,
            timeout=timeout,
        )

    @property
    def out(self) -> Path:
        """The FIF file written by :meth:`stop`."""
        return self.recorder.out

    @property
    def last_timestamp(self) -> float | None:
        """LSL timestamp of the newest sample recorded (None before the first)."""
        return self.recorder.last_timestamp

    @property
    def last_marker_timestamp(self) -> float | None:
        """LSL timestamp of the newest marker recorded (None before the first)."""
        return self.recorder.last_marker_timestamp

    def start(self) -> StreamRecorder:
        """Open both streams (blocks up to ``timeout`` each: call from a worker)."""
        self.recorder.start()
        return self

    def poll(self) -> dict:
        """Return progress (cheap; call from a GUI timer).

        Returns
        -------
        progress : dict
            ``seconds`` recorded, ``n_markers`` and ``counts`` per marker value,
            ``connected``.
        """
        status = self.recorder.status()
        counts = status["marker_counts"]
        eeg = status["eeg"] or {}
        return {
            "seconds": status["n_samples"] / (self.recorder.sfreq or 1.0),
            "n_markers": sum(counts.values()),
            "counts": counts,
            "connected": bool(eeg.get("connected")),
        }

    def stop(self):
        """Stop recording, write the FIF file and return what it holds.

        Returns
        -------
        recording : Recording
            The recording, in the stream's units (the FIF file holds volts).
        """
        import dataclasses

        import numpy as np

        from sblr_rt.io.reading import read_recording
        from sblr_rt.recorder import volts_per_unit

        path = self.recorder.stop()
        recording = read_recording(path)
        scale = np.array([volts_per_unit(u) for u in self.recorder.units])
        units = set(self.recorder.units)
        logger.info("recorded %s", path)
        return dataclasses.replace(
            recording,
            data=recording.data / scale[:, None],
            unit=units.pop() if len(units) == 1 else "mixed",
        )

"""Calibration from a live stream: record EEG and markers to disk, then calibrate.

:func:`record_session` runs :class:`sblr_rt.recorder.recorder.Recorder` (the ``record`` command's
crash-safe recorder: everything received goes to a sidecar folder as it arrives, and
becomes a FIF file at the end), stops after ``duration`` seconds or ``tail`` seconds
after the ``n_trials``-th class cue, and returns the recording read back from that FIF
file, so calibration sees exactly what ``sblr-rt replay`` would play later.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["record_session"]


def _fif_name(path) -> Path:
    path = Path(path)
    name = path.name.lower()
    if name.endswith(".fif") or name.endswith(".fif.gz"):
        return path
    return path.with_name(path.name + "_raw.fif")


def _count_cues(marker_counts: dict, counted) -> int:
    """Class cues recorded so far, from the recorder's counts per marker value."""
    return sum(n for value, n in marker_counts.items() if counted is None or value in counted)


def record_session(
    stream: str | None,
    *,
    path,
    stype: str | None = None,
    source_id: str | None = None,
    marker_stream: str | None = None,
    marker_source_id: str | None = None,
    marker_stype: str | None = None,
    duration: float = 300.0,
    n_trials: int | None = None,
    classes=None,
    tail: float = 5.0,
    timeout: float = 10.0,
    progress=None,
):
    """Record a labelled session from LSL to a FIF file and return it.

    Parameters
    ----------
    stream : str | None
        Name of the EEG stream (taken whatever its type); None: the only stream of type
        ``stype``.
    path : str | Path
        Output FIF file (``<path>_raw.fif`` when ``path`` does not end in ``.fif``).
    stype : str | None
        Type of the EEG stream, any case (None: ``EEG`` unless ``stream`` names it).
    source_id : str | None
        ``source_id`` of the EEG stream (to choose one of several of the same name).
    marker_stream : str | None
        Name of the marker stream (None: ``<stream>-Markers`` or the only marker stream,
        as :class:`sblr_rt.recorder.recorder.Recorder` chooses).
    marker_source_id : str | None
        ``source_id`` of the marker stream.
    marker_stype : str | None
        Type of the marker stream, any case (None: ``Markers`` unless named).
    duration : float
        Maximum seconds to record.
    n_trials : int | None
        Stop ``tail`` seconds after this many class cues (None: record ``duration``).
    classes : list | dict | None
        Marker values counted as class cues for ``n_trials`` (None: every marker).
    tail : float
        Seconds recorded after the last counted cue (at least the window's ``tmax``).
    timeout : float
        Seconds to wait for the streams.
    progress : file-like | None
        Where to draw a status line (the CLI passes stderr).

    Returns
    -------
    recording : Recording
        The recording, read back from the FIF file (volts).
    """
    from sblr_rt.io.reading import read_recording
    from sblr_rt.recorder import Recorder

    out = _fif_name(path)
    counted = None if classes is None else set(classes)
    recorder = Recorder(
        out,
        name=stream,
        stype=stype,
        source_id=source_id,
        marker_name=marker_stream,
        marker_source_id=marker_source_id,
        marker_stype=marker_stype,
        timeout=timeout,
        overwrite=True,
    ).start()
    t0 = time.monotonic()
    stop_at = t0 + duration
    n_cues = 0
    try:
        while time.monotonic() < stop_at:
            time.sleep(0.2)
            status = recorder.status()
            if n_trials is not None and stop_at > time.monotonic() + tail:
                n_cues = _count_cues(status["marker_counts"], counted)
                if n_cues >= n_trials:
                    stop_at = time.monotonic() + tail
            if progress is not None:
                progress.write(
                    f"\rrecording {time.monotonic() - t0:6.1f} s: {status['n_samples']} "
                    f"samples, {status['n_markers']} markers"
                    + (f", {n_cues}/{n_trials} cues" if n_trials else "")
                )
                progress.flush()
    finally:
        written = recorder.stop()
        if progress is not None:
            progress.write("\n")
    logger.info("recorded %s", written)
    return read_recording(written)

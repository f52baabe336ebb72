"""Calibration from a live stream: record EEG and markers to disk, then calibrate.

:func:`record_session` subscribes to an LSL EEG stream and a marker stream, appends every
chunk to ``<path>.eeg.f32`` (raw float32, sample-major) and every marker to
``<path>.markers.tsv`` *while it runs* (so a crash loses nothing already received),
stops after ``duration`` seconds or after ``n_trials`` class cues plus a few seconds
for the last window, then writes ``<path>_raw.fif`` (MNE, readable by
:func:`sblr_rt.io.read_recording` and by ``sblr-rt replay``) and returns the
:class:`~sblr_rt.io.recordings.Recording`. Markers are placed on the nearest EEG sample
by their LSL timestamps (both clock-corrected by the sources).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import numpy as np

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["record_session"]


def record_session(
    stream: str,
    *,
    path,
    marker_stream: str | None = None,
    duration: float = 300.0,
    n_trials: int | None = None,
    classes=None,
    tail: float = 5.0,
    timeout: float = 10.0,
    progress=None,
):
    """Record a labelled session from LSL to disk and return it.

    Parameters
    ----------
    stream : str
        Name of the EEG stream.
    path : str | Path
        Output prefix (``<path>.eeg.f32``, ``<path>.markers.tsv``, ``<path>_raw.fif``).
    marker_stream : str | None
        Name of the marker stream (None: any stream of type ``Markers``).
    duration : float
        Maximum seconds to record.
    n_trials : int | None
        Stop ``tail`` seconds after this many class cues (None: record ``duration``).
    classes : list | dict | None
        Marker values counted as class cues for ``n_trials`` (None: every marker).
    tail : float
        Seconds recorded after the last counted cue.
    timeout : float
        Seconds to wait for the streams.
    progress : file-like | None
        Where to print a status line (the CLI passes stderr).

    Returns
    -------
    recording : Recording
        EEG (stream units, float64) and markers in seconds from the first sample.
    """
    from sblr_rt.io.recordings import Recording
    from sblr_rt.stream import LSLSource, MarkerSource

    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"folder of the recording does not exist: {path.parent}")
    counted = None if classes is None else set(classes)
    eeg = LSLSource(name=stream, timeout=timeout, buffer_seconds=10.0)
    markers = MarkerSource(name=marker_stream, timeout=timeout)
    eeg.start()
    try:
        markers.start()
    except BaseException:
        eeg.stop()
        raise
    raw_path = path.with_name(path.name + ".eeg.f32")
    tsv_path = path.with_name(path.name + ".markers.tsv")
    lock = threading.Lock()
    stamps: list[np.ndarray] = []
    n_ch = eeg.n_channels
    ch_names = list(eeg.ch_names)
    sfreq = float(eeg.sfreq)
    received: list[tuple[float, str]] = []
    with raw_path.open("wb") as fh, tsv_path.open("w") as tsv:
        tsv.write("lsl_timestamp\tvalue\n")

        def on_chunk(chunk, timestamps):
            with lock:
                np.asarray(chunk, dtype=np.float32).tofile(fh)
                stamps.append(np.asarray(timestamps, dtype=np.float64).copy())

        eeg.add_listener(on_chunk)
        t0 = time.monotonic()
        stop_at = t0 + duration
        n_cues = 0
        try:
            while time.monotonic() < stop_at:
                time.sleep(0.05)
                for ts, value in markers.pop():
                    value = str(value)
                    received.append((float(ts), value))
                    tsv.write(f"{ts!r}\t{value}\n")
                    tsv.flush()
                    if counted is None or value in counted:
                        n_cues += 1
                        if n_trials is not None and n_cues >= n_trials:
                            stop_at = min(stop_at, time.monotonic() + tail)
                if progress is not None:
                    progress.write(
                        f"\rrecording {time.monotonic() - t0:6.1f} s, {n_cues} cues"
                        + (f"/{n_trials}" if n_trials else "")
                    )
                    progress.flush()
        finally:
            eeg.remove_listener(on_chunk)
            eeg.stop()
            markers.stop()
            with lock:
                fh.flush()
            if progress is not None:
                progress.write("\n")
    with lock:
        ts = np.concatenate(stamps) if stamps else np.zeros(0)
    data = np.fromfile(raw_path, dtype=np.float32)
    n = min(data.size // n_ch, ts.size)
    if n == 0:
        raise RuntimeError(f"no EEG sample received from stream {stream!r} in {duration} s")
    data = data[: n * n_ch].reshape(n, n_ch).T.astype(np.float64)
    ts = ts[:n]
    times, values = [], []
    for t_m, value in received:
        i = int(np.clip(np.searchsorted(ts, t_m), 1, n - 1))
        i = i - 1 if abs(ts[i - 1] - t_m) <= abs(ts[i] - t_m) else i
        if t_m < ts[0] - 1.0 / sfreq or t_m > ts[-1] + 1.0 / sfreq:
            logger.warning("marker %r at %.3f lies outside the recorded EEG; dropped", value, t_m)
            continue
        times.append(i / sfreq)
        values.append(value)
    rec = Recording(
        data=data,
        sfreq=sfreq,
        ch_names=ch_names,
        marker_times=np.asarray(times),
        marker_values=values,
        source=str(path.with_name(path.name + "_raw.fif")),
        unit="V",
    )
    _save_fif(rec, Path(rec.source))
    logger.info("recorded %d samples and %d markers to %s", n, len(values), rec.source)
    return rec


def _save_fif(rec, fif_path: Path) -> None:
    import mne

    info = mne.create_info(rec.ch_names, rec.sfreq, ch_types="eeg")
    raw = mne.io.RawArray(rec.data, info, verbose="error")
    if len(rec.marker_values):
        raw.set_annotations(
            mne.Annotations(rec.marker_times, np.zeros(len(rec.marker_times)), rec.marker_values)
        )
    raw.save(fif_path, overwrite=True, verbose="error")

"""Record an LSL EEG stream and its markers to disk, crash-safe, closing as FIF.

While recording, everything goes to a *sidecar* folder next to the output
(``OUT.fif.rec/``), written as it arrives and flushed to disk every ``flush_seconds``
(default 1 s), so a killed process loses at most that much:

- ``header.json``: stream name, source_id, channel labels, units, rate, sample dtype, LSL
  and wall-clock start times;
- ``eeg.bin``: the samples, raw rows of ``n_channels`` values in the stream's dtype;
- ``eeg_ts.bin``: their LSL timestamps, float64;
- ``markers.jsonl``: one ``{"t": timestamp, "value": "..."}`` per line.

:meth:`Recorder.stop` converts the sidecar to FIF (data in volts, each marker an
annotation on the sample nearest to its timestamp, a ``BAD_gap`` annotation wherever
samples were lost) and removes it. After a crash, :func:`recover` (``sblr-rt record
--recover OUT.fif.rec``) does the same conversion. The LSL timestamp of the first sample,
the effective rate and the gaps go into the FIF's ``info["description"]`` as JSON.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import queue
import shutil
import threading
import time
import warnings
from pathlib import Path

import numpy as np

logger = logging.getLogger("sblr_rt.recording.recorder")

SIDECAR_SUFFIX = ".rec"
_SCALE_TO_VOLTS = {
    "v": 1.0,
    "volt": 1.0,
    "volts": 1.0,
    "mv": 1e-3,
    "millivolt": 1e-3,
    "millivolts": 1e-3,
    "uv": 1e-6,
    "µv": 1e-6,
    "μv": 1e-6,
    "microvolt": 1e-6,
    "microvolts": 1e-6,
    "nv": 1e-9,
    "nanovolts": 1e-9,
}


def sidecar_path(out) -> Path:
    """Return the sidecar folder used while recording to ``out``.

    Parameters
    ----------
    out : str | Path
        The FIF file being recorded.

    Returns
    -------
    path : Path
        ``out`` + ``".rec"``.
    """
    out = Path(out)
    return out.with_name(out.name + SIDECAR_SUFFIX)


def _check_out(out) -> Path:
    out = Path(out)
    name = out.name.lower()
    if not (name.endswith(".fif") or name.endswith(".fif.gz")):
        raise ValueError(f"'out' must be a .fif file name, got '{out}'")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"folder '{out.parent}' of 'out' does not exist")
    return out


class Recorder:
    """Record an EEG stream (and a marker stream) from LSL to ``out`` (FIF).

    Parameters
    ----------
    out : str | Path
        Output ``.fif`` file (written by :meth:`stop`).
    name, stype, source_id : str | None
        How to find the EEG stream (as :class:`sblr_rt.stream.LSLSource`).
    marker_name, marker_source_id : str | None
        How to find the marker stream. With neither given, the recorder takes the stream
        named ``<EEG name>-Markers`` if there is one, else the only stream of type
        ``Markers`` other than ``SBLR-Predictions``; with none it records without markers
        (warning), with several it refuses and lists them.
    markers : bool
        Record markers at all.
    timeout : float
        Seconds to wait for the streams.
    flush_seconds : float
        Longest time data stay in memory before reaching the disk.
    overwrite : bool
        Replace an existing ``out``.

    Examples
    --------
    >>> rec = Recorder("session_raw.fif", source_id="sblr-sim").start()  # doctest: +SKIP
    >>> rec.stop()  # writes session_raw.fif  # doctest: +SKIP
    PosixPath('session_raw.fif')
    """

    def __init__(
        self,
        out,
        *,
        name: str | None = None,
        stype: str | None = "EEG",
        source_id: str | None = None,
        marker_name: str | None = None,
        marker_source_id: str | None = None,
        markers: bool = True,
        timeout: float = 10.0,
        flush_seconds: float = 1.0,
        overwrite: bool = False,
    ) -> None:
        self.out = _check_out(out)
        if self.out.exists() and not overwrite:
            raise FileExistsError(f"'{self.out}' exists; pass overwrite=True to replace it")
        self.sidecar = sidecar_path(self.out)
        if self.sidecar.exists():
            raise RuntimeError(
                f"'{self.sidecar}' exists (an interrupted recording?): convert it with "
                f"`sblr-rt record --recover {self.sidecar}` or delete it"
            )
        if not flush_seconds > 0:
            raise ValueError(f"'flush_seconds' must be > 0, got {flush_seconds!r}")
        self._criteria = {"name": name, "stype": stype, "source_id": source_id}
        self._marker_criteria = (marker_name, marker_source_id)
        self.record_markers = bool(markers)
        self.timeout = float(timeout)
        self.flush_seconds = float(flush_seconds)
        self.n_samples = 0
        self.n_markers = 0
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self._writer: threading.Thread | None = None
        self._error: BaseException | None = None
        self._eeg = self._markers = None
        self._files = {}

    # ------------------------------------------------------------------ life cycle
    def start(self) -> Recorder:
        """Find the streams, create the sidecar and start recording.

        Returns
        -------
        self : Recorder
            The recorder.
        """
        from sblr_rt.stream import LSLSource, MarkerSource, local_clock, stream_channel_info

        if self._writer is not None:
            raise RuntimeError("Recorder already started; create a new one to record again")
        eeg = LSLSource(**self._criteria, timeout=self.timeout, buffer_seconds=5.0)
        eeg.start()
        self._eeg = eeg
        try:
            desc = eeg.description
            units = []
            if desc.source_id:
                info = stream_channel_info(source_id=desc.source_id, timeout=self.timeout)
                units = [c.get("unit", "") for c in info]
            if len(units) != eeg.n_channels or not all(units):
                logger.warning("%s declares no unit for every channel; assuming microvolts", desc)
                units = [u or "microvolts" for u in units] or ["microvolts"] * eeg.n_channels
            if self.record_markers:
                self._markers = self._open_markers(MarkerSource, desc.name)
            self.sidecar.mkdir(parents=True)
            header = {
                "format": "sblr-rt sidecar 1",
                "out": str(self.out),
                "name": desc.name,
                "source_id": desc.source_id,
                "stype": desc.stype,
                "hostname": desc.hostname,
                "ch_names": eeg.ch_names,
                "units": units or [""] * eeg.n_channels,
                "sfreq": eeg.sfreq,
                "dtype": np.dtype(eeg.dtype).str,
                "lsl_start": local_clock(),
                "utc_start": datetime.datetime.now(datetime.UTC).isoformat(),
                "markers": (
                    None if self._markers is None else str(self._markers.description.name)
                ),
            }
            _write_json(self.sidecar / "header.json", header)
            self._files = {
                key: open(self.sidecar / fname, "ab")
                for key, fname in (
                    ("eeg", "eeg.bin"),
                    ("ts", "eeg_ts.bin"),
                    ("markers", "markers.jsonl"),
                )
            }
            self._dtype = np.dtype(eeg.dtype)
            eeg.add_listener(self._on_chunk)
            if self._markers is not None:
                self._markers.add_listener(self._on_marker)
            self._writer = threading.Thread(target=self._write_loop, name="sblr-recorder")
            self._writer.daemon = True
            self._writer.start()
        except BaseException:
            self._shutdown_sources()
            self._close_files()
            raise
        logger.info("recording %s to %s", desc, self.sidecar)
        return self

    def _open_markers(self, marker_source_cls, eeg_name: str):
        from sblr_rt.stream import resolve_streams

        name, source_id = self._marker_criteria
        if name is None and source_id is None:
            visible = resolve_streams(stype="Markers", timeout=min(self.timeout, 1.0))
            preferred = [s for s in visible if s.name == f"{eeg_name}-Markers"]
            others = [s for s in visible if s.name != "SBLR-Predictions"]
            candidates = preferred or others
            if not candidates:
                logger.warning("no marker stream found: recording without markers")
                return None
            if len({s.source_id for s in candidates}) > 1:
                found = "; ".join(str(s) for s in candidates)
                raise RuntimeError(
                    "several marker streams are visible; choose one with --markers NAME "
                    f"(or marker_name=/marker_source_id=): {found}"
                )
            source_id = candidates[0].source_id or None
            name = candidates[0].name
        markers = marker_source_cls(name=name, source_id=source_id, timeout=self.timeout)
        markers.start()
        return markers

    def stop(self) -> Path:
        """Stop recording, write the FIF file and delete the sidecar.

        Returns
        -------
        out : Path
            The FIF file written.
        """
        if self._writer is None:
            raise RuntimeError("Recorder not started; call start() first")
        self._shutdown_sources()
        self._stop.set()
        self._writer.join(10.0)
        self._close_files()
        if self._error is not None:
            raise RuntimeError(
                f"recording failed ({self._error}); the sidecar '{self.sidecar}' holds "
                f"what was received: `sblr-rt record --recover {self.sidecar}`"
            ) from self._error
        out = recover(self.sidecar, self.out, overwrite=True)
        shutil.rmtree(self.sidecar)
        return out

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc) -> None:
        if self._writer is not None and not self._stop.is_set():
            self.stop()

    def status(self) -> dict:
        """Return counts and the EEG source's status.

        Returns
        -------
        status : dict
            ``n_samples`` and ``n_markers`` written, ``sidecar``, and the source's
            ``status()`` under ``"eeg"``.
        """
        if self._error is not None:
            raise RuntimeError(f"recording failed: {self._error}") from self._error
        return {
            "n_samples": self.n_samples,
            "n_markers": self.n_markers,
            "sidecar": str(self.sidecar),
            "eeg": self._eeg.status() if self._eeg is not None else None,
        }

    # ------------------------------------------------------------------ internals
    def _on_chunk(self, chunk, timestamps) -> None:
        self._queue.put(("eeg", chunk, np.asarray(timestamps, dtype=np.float64)))

    def _on_marker(self, timestamp, value) -> None:
        self._queue.put(("marker", float(timestamp), value))

    def _write_loop(self) -> None:
        last_flush = time.monotonic()
        try:
            while True:
                try:
                    item = self._queue.get(timeout=0.05)
                except queue.Empty:
                    item = None
                if item is not None:
                    self._write(item)
                stopping = self._stop.is_set()
                if stopping or time.monotonic() - last_flush >= self.flush_seconds:
                    while True:  # drain everything queued so far
                        try:
                            self._write(self._queue.get_nowait())
                        except queue.Empty:
                            break
                    self._flush()
                    last_flush = time.monotonic()
                    if stopping:
                        return
        except BaseException as exc:
            logger.exception("recorder writer stopped on an error")
            self._error = exc

    def _write(self, item) -> None:
        if item[0] == "eeg":
            _, chunk, timestamps = item
            self._files["eeg"].write(np.ascontiguousarray(chunk, dtype=self._dtype).tobytes())
            self._files["ts"].write(timestamps.tobytes())
            self.n_samples += len(timestamps)
        else:
            _, timestamp, value = item
            if isinstance(value, tuple):
                value = value[0] if len(value) == 1 else " ".join(map(str, value))
            line = json.dumps({"t": timestamp, "value": str(value)}) + "\n"
            self._files["markers"].write(line.encode())
            self.n_markers += 1

    def _flush(self) -> None:
        for f in self._files.values():
            f.flush()
            os.fsync(f.fileno())

    def _close_files(self) -> None:
        for f in self._files.values():
            try:
                f.close()
            except OSError:  # pragma: no cover
                pass
        self._files = {}

    def _shutdown_sources(self) -> None:
        for source in (self._markers, self._eeg):
            if source is not None:
                try:
                    source.stop()
                except RuntimeError as exc:
                    logger.error("stopping %r: %s", source, exc)


def _write_json(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_sidecar(sidecar) -> dict:
    """Load a sidecar folder (complete or cut short by a crash).

    Parameters
    ----------
    sidecar : str | Path
        The ``OUT.fif.rec`` folder.

    Returns
    -------
    contents : dict
        ``header`` (dict), ``data`` (n_samples, n_channels) in the stream's dtype,
        ``timestamps`` (n_samples,), ``markers`` list of (timestamp, value). A partly
        written last row or line is dropped.
    """
    sidecar = Path(sidecar)
    header_path = sidecar / "header.json"
    if not header_path.is_file():
        raise ValueError(f"'{sidecar}' is not a recording sidecar: no header.json in it")
    header = json.loads(header_path.read_text())
    n_ch = len(header["ch_names"])
    dtype = np.dtype(header["dtype"])
    raw = np.fromfile(sidecar / "eeg.bin", dtype=np.uint8)
    ts = np.fromfile(sidecar / "eeg_ts.bin", dtype=np.uint8)
    n = min(raw.size // (n_ch * dtype.itemsize), ts.size // 8)
    data = raw[: n * n_ch * dtype.itemsize].view(dtype).reshape(n, n_ch)
    timestamps = ts[: n * 8].view(np.float64)
    markers = []
    marker_file = sidecar / "markers.jsonl"
    if marker_file.is_file():
        for line in marker_file.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                markers.append((float(entry["t"]), str(entry["value"])))
            except (ValueError, KeyError, TypeError):
                logger.warning("%s: skipped a damaged marker line %r", marker_file, line[:80])
    return {"header": header, "data": data, "timestamps": timestamps, "markers": markers}


def _unit_scale(unit: str) -> float:
    key = (unit or "").strip().lower()
    if key in _SCALE_TO_VOLTS:
        return _SCALE_TO_VOLTS[key]
    return 1e-6  # the XDF/LSL convention for EEG is microvolts


def recover(sidecar, out=None, *, overwrite: bool = False) -> Path:
    """Convert a sidecar folder (e.g. of a killed recording) to a FIF file.

    Parameters
    ----------
    sidecar : str | Path
        The ``OUT.fif.rec`` folder.
    out : str | Path | None
        FIF file to write; the name the recording was meant to have when None.
    overwrite : bool
        Replace an existing file.

    Returns
    -------
    out : Path
        The FIF file (readable by :func:`mne.io.read_raw_fif` and
        :func:`sblr_rt.io.read_recording`).
    """
    import mne

    contents = read_sidecar(sidecar)
    header = contents["header"]
    out = _check_out(out if out is not None else header["out"])
    if out.exists() and not overwrite:
        raise FileExistsError(f"'{out}' exists; pass overwrite=True to replace it")
    data, ts = contents["data"], contents["timestamps"]
    if len(ts) == 0:
        raise ValueError(f"'{sidecar}' holds no EEG sample; nothing to write, got 0 samples")
    sfreq = float(header["sfreq"])
    units = header.get("units") or [""] * len(header["ch_names"])
    scale = np.array([_unit_scale(u) for u in units])
    info = mne.create_info(header["ch_names"], sfreq, "eeg")
    info["description"] = json.dumps(
        {
            "recorded_by": "sblr-rt record",
            "stream": header["name"],
            "source_id": header["source_id"],
            "lsl_first_timestamp": float(ts[0]),
            "lsl_last_timestamp": float(ts[-1]),
            "effective_sfreq": (
                float((len(ts) - 1) / (ts[-1] - ts[0])) if ts[-1] > ts[0] else None
            ),
            "units": units[0] if len(set(units)) == 1 else units,
        }
    )
    raw = mne.io.RawArray((data.astype(np.float64) * scale).T, info, verbose="error")
    try:
        start = datetime.datetime.fromisoformat(header["utc_start"])
        raw.set_meas_date(start + datetime.timedelta(seconds=float(ts[0]) - header["lsl_start"]))
    except (KeyError, ValueError, TypeError):  # pragma: no cover - damaged header
        pass
    onsets, descriptions, durations = [], [], []
    # gaps: a step larger than 1.5 nominal periods means lost samples
    steps = np.diff(ts)
    if len(steps) > 10:
        typical = float(np.median(steps))
        for i in np.flatnonzero(steps > 1.5 * typical):
            onsets.append((i + 1) / sfreq)
            descriptions.append("BAD_gap")
            durations.append(1.0 / sfreq)
    dropped = 0
    for t, value in contents["markers"]:
        j = int(np.searchsorted(ts, t))
        candidates = [k for k in (j - 1, j) if 0 <= k < len(ts)]
        k = min(candidates, key=lambda k: abs(ts[k] - t))
        if t < ts[0] - 0.5 / sfreq or t > ts[-1] + 0.5 / sfreq:
            dropped += 1
            continue
        onsets.append(k / sfreq)
        descriptions.append(value)
        durations.append(0.0)
    if dropped:
        logger.warning("%d markers outside the recorded samples were dropped", dropped)
    if onsets:
        raw.set_annotations(
            mne.Annotations(onsets, durations, descriptions, orig_time=raw.info["meas_date"])
        )
    fmt = "double" if np.dtype(header["dtype"]).itemsize >= 8 else "single"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not conform to MNE naming.*")
        raw.save(out, fmt=fmt, overwrite=overwrite, verbose="error")
    logger.info("wrote %s: %d samples, %d annotations", out, len(ts), len(onsets))
    return out

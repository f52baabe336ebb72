"""Record an LSL EEG stream and its markers to disk, crash-safe, closing as FIF.

While recording, everything goes to a *sidecar* folder next to the output
(``OUT.fif.rec/``, see :mod:`sblr_rt.recorder.sidecar`), written every
``flush_seconds`` (default 1 s), markers before the EEG rows, so a killed process loses
at most that much and never keeps EEG rows without the cues received before them.

:meth:`Recorder.stop` converts the sidecar to FIF (:mod:`sblr_rt.recorder.export`,
atomically) and removes it. After a crash, :func:`~sblr_rt.recorder.recovery.recover`
(``sblr-rt record --recover OUT.fif.rec``) does the same conversion.
"""

from __future__ import annotations

import datetime
import logging
import queue
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

from sblr_rt.io.outputs import OutputLock
from sblr_rt.recorder.export import check_out
from sblr_rt.recorder.recovery import recover
from sblr_rt.recorder.sidecar import (
    SidecarWriter,
    clear_leftovers,
    read_sidecar,
    retire_sidecar,
    sidecar_path,
)

__all__ = ["Recorder", "read_sidecar", "recover", "sidecar_path"]

logger = logging.getLogger("sblr_rt.recorder.recorder")


class Recorder:
    """Record an EEG stream (and a marker stream) from LSL to ``out`` (FIF).

    Parameters
    ----------
    out : str | Path
        Output ``.fif`` file (written by :meth:`stop`).
    name, stype, source_id : str | None
        How to find the EEG stream (as :class:`sblr_rt.stream.LSLSource`: a stream named
        by ``name`` whatever its type, else one of type ``stype``, default ``EEG``, any
        case).
    marker_name, marker_source_id, marker_stype : str | None
        How to find the marker stream (named: whatever its type). With neither name nor
        source_id given, the recorder takes the stream named ``<EEG name>-Markers`` or
        (mne-lsl's player) ``<EEG name>-annotations`` if there is one and no
        ``marker_stype`` is given, else the only stream of type ``marker_stype`` (default
        ``Markers``,
        any case) other than sblr-rt's decision outlets
        (:func:`~sblr_rt.stream.is_decision_stream`); with none it records without markers
        (warning), with several it refuses and lists them.
    markers : bool
        Record markers at all.
    timeout : float
        Seconds to wait for the streams.
    flush_seconds : float
        Longest time data stay in memory before reaching the disk.
    overwrite : bool
        Replace an existing ``out``.

    Attributes
    ----------
    n_samples, n_markers : int
        Samples and markers written to the sidecar so far.
    last_timestamp, last_marker_timestamp : float | None
        LSL timestamps of the newest sample and marker written.
    marker_counts : Counter
        Markers written per value (those stamped before the recording started left out).
    units : list of str
        Channel units of the stream (after :meth:`start`).
    sfreq : float | None
        Nominal rate of the stream (after :meth:`start`).
    note : str | None
        What was done with a leftover sidecar of a killed recording, if any.

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
        stype: str | None = None,
        source_id: str | None = None,
        marker_name: str | None = None,
        marker_source_id: str | None = None,
        marker_stype: str | None = None,
        markers: bool = True,
        timeout: float = 10.0,
        flush_seconds: float = 1.0,
        overwrite: bool = False,
    ) -> None:
        self.out = check_out(out)
        if self.out.exists() and not overwrite:
            raise FileExistsError(f"'{self.out}' exists; pass overwrite=True to replace it")
        if not flush_seconds > 0:
            raise ValueError(f"'flush_seconds' must be > 0, got {flush_seconds!r}")
        self.sidecar = sidecar_path(self.out)
        # First: a recorder must not touch the sidecar of another one writing this file
        # (taken for good by start(); the operating system drops it if the process dies).
        self._lock = OutputLock(self.out, what="recording")
        with self._lock:
            self.note = clear_leftovers(self.sidecar)
            if self.sidecar.exists():
                raise RuntimeError(
                    f"'{self.sidecar}' exists (an interrupted recording?): convert it with "
                    f"`sblr-rt record --recover {self.sidecar}` or delete it"
                )
        self._criteria = {"name": name, "stype": stype, "source_id": source_id}
        self._marker_criteria = (marker_name, marker_source_id, marker_stype)
        self.record_markers = bool(markers)
        self.timeout = float(timeout)
        self.flush_seconds = float(flush_seconds)
        self.n_samples = 0
        self.n_markers = 0
        self.last_timestamp: float | None = None
        self.last_marker_timestamp: float | None = None
        self.marker_counts: Counter = Counter()
        self.units: list[str] = []
        self.sfreq: float | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by each marker: the writer drains at once
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._eeg = self._markers = None
        self._sink: SidecarWriter | None = None
        self._lsl_start = 0.0

    # ------------------------------------------------------------------ life cycle
    def start(self) -> Recorder:
        """Find the streams, create the sidecar and start recording.

        Returns
        -------
        self : Recorder
            The recorder.
        """
        from sblr_rt.stream import LSLSource, MarkerSource

        if self._thread is not None:
            raise RuntimeError("Recorder already started; create a new one to record again")
        self._lock.acquire()
        try:
            eeg = LSLSource(**self._criteria, timeout=self.timeout, buffer_seconds=5.0)
            eeg.start()
        except BaseException:
            self._lock.release()
            raise
        self._eeg = eeg
        try:
            self.units = self._stream_units(eeg)
            self.sfreq = float(eeg.sfreq)
            if self.record_markers:
                self._markers = self._open_markers(MarkerSource, eeg.description.name)
                if self._markers is not None:
                    self._markers.add_listener(lambda t, value: self._wake.set())
            self._sink = SidecarWriter(self.sidecar, self._header(eeg))
            eeg.add_listener(self._on_chunk)
            self._thread = threading.Thread(target=self._write_loop, name="sblr-recorder")
            self._thread.daemon = True
            self._thread.start()
        except BaseException:
            self._shutdown_sources()
            if self._sink is not None:
                self._sink.close()
            self._lock.release()
            raise
        logger.info("recording %s to %s", eeg.description, self.sidecar)
        return self

    def _stream_units(self, eeg) -> list[str]:
        # The units of the stream the source opened: resolving again by source_id could
        # find another stream (mne-lsl's player gives its annotations the same one).
        units = list(eeg.ch_units)
        if len(units) != eeg.n_channels:
            units = [""] * eeg.n_channels
        if not all(units):
            logger.warning(
                "%s declares no unit for every channel; assuming microvolts", eeg.description
            )
            units = [u or "microvolts" for u in units]
        return units

    def _header(self, eeg) -> dict:
        from sblr_rt.stream import local_clock

        desc = eeg.description
        self._lsl_start = local_clock()
        return {
            "format": "sblr-rt sidecar 1",
            "out": str(self.out),
            "name": desc.name,
            "source_id": desc.source_id,
            "stype": desc.stype,
            "hostname": desc.hostname,
            "ch_names": eeg.ch_names,
            "units": self.units,
            "sfreq": eeg.sfreq,
            "dtype": np.dtype(eeg.dtype).str,
            "lsl_start": self._lsl_start,
            "utc_start": datetime.datetime.now(datetime.UTC).isoformat(),
            "markers": None if self._markers is None else str(self._markers.description.name),
        }

    def _open_markers(self, marker_source_cls, eeg_name: str):
        from sblr_rt.stream import companion_marker_stream, is_decision_stream, resolve_streams

        name, source_id, stype = self._marker_criteria
        if name is None and source_id is None:
            every = resolve_streams(timeout=min(self.timeout, 1.0))
            companion = companion_marker_stream(eeg_name, every)
            wanted = (stype or "Markers").lower()
            visible = [s for s in every if s.stype.lower() == wanted]
            preferred = []
            if companion is not None and (stype is None or companion.stype.lower() == wanted):
                preferred = [companion]
            others = [s for s in visible if not is_decision_stream(s)]
            candidates = preferred or others
            if not candidates:
                logger.warning("no marker stream found: recording without markers")
                return None
            if len({s.source_id for s in candidates}) > 1:
                found = "; ".join(str(s) for s in candidates)
                raise RuntimeError(
                    "several marker streams are visible; choose one with --marker-stream NAME "
                    f"or --marker-source-id ID (marker_name=/marker_source_id=): {found}"
                )
            source_id = candidates[0].source_id or None
            name = candidates[0].name
        markers = marker_source_cls(
            name=name, stype=stype, source_id=source_id, timeout=self.timeout
        )
        markers.start()
        return markers

    def stop(self) -> Path:
        """Stop recording, write the FIF file and delete the sidecar.

        Returns
        -------
        out : Path
            The FIF file written.
        """
        if self._thread is None:
            raise RuntimeError("Recorder not started; call start() first")
        try:
            self._shutdown_sources()
            self._stop.set()
            self._wake.set()
            self._thread.join(10.0)
            self._sink.close()
            if self._error is not None:
                raise RuntimeError(
                    f"recording failed ({self._error}); the sidecar '{self.sidecar}' holds "
                    f"what was received: `sblr-rt record --recover {self.sidecar}`"
                ) from self._error
            try:
                out = recover(self.sidecar, self.out, overwrite=True)
            except OSError as exc:  # the disk filled, the folder went: the sidecar stays
                raise RuntimeError(
                    f"could not write '{self.out}' ({exc.strerror or exc}); the sidecar "
                    f"'{self.sidecar}' holds the whole recording: `sblr-rt record --recover "
                    f"{self.sidecar} --out OTHER.fif`"
                ) from exc
            retire_sidecar(self.sidecar)
            return out
        finally:
            self._lock.release()

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc) -> None:
        if self._thread is not None and not self._stop.is_set():
            self.stop()

    def status(self) -> dict:
        """Return counts and the sources' status.

        Returns
        -------
        status : dict
            ``n_samples``, ``n_markers``, ``last_timestamp``, ``last_marker_timestamp``,
            ``marker_counts`` (dict), ``sidecar``, and the sources' ``status()`` under
            ``"eeg"`` and ``"markers"`` (None without a source).
        """
        if self._error is not None:
            raise RuntimeError(f"recording failed: {self._error}") from self._error
        running = not self._stop.is_set()
        return {
            "n_samples": self.n_samples,
            "n_markers": self.n_markers,
            "last_timestamp": self.last_timestamp,
            "last_marker_timestamp": self.last_marker_timestamp,
            "marker_counts": dict(self.marker_counts),
            "sidecar": str(self.sidecar),
            "eeg": self._eeg.status() if self._eeg is not None and running else None,
            "markers": (self._markers.status() if self._markers is not None and running else None),
        }

    # ------------------------------------------------------------------ internals
    def _on_chunk(self, chunk, timestamps) -> None:
        self._queue.put((np.array(chunk), np.asarray(timestamps, dtype=np.float64)))

    def _take_pending(self) -> None:
        """Move what the sources delivered into the writer's memory (drains both)."""
        while True:
            try:
                chunk, timestamps = self._queue.get_nowait()
            except queue.Empty:
                break
            self._sink.add_rows(chunk, timestamps)
            self.n_samples += len(timestamps)
            if len(timestamps):
                self.last_timestamp = float(timestamps[-1])
        if self._markers is None:
            return
        for timestamp, value in self._markers.pop():
            self._sink.add_marker(timestamp, value)
            self.n_markers += 1
            self.last_marker_timestamp = float(timestamp)
            if timestamp >= self._lsl_start:
                self.marker_counts[str(value)] += 1

    def _write_loop(self) -> None:
        last_flush = time.monotonic()
        try:
            while True:
                # woken by each marker (or every 50 ms): draining the marker source as
                # markers arrive keeps its queue short under a flood
                self._wake.wait(0.05)
                self._wake.clear()
                stopping = self._stop.is_set()
                self._take_pending()
                if stopping or time.monotonic() - last_flush >= self.flush_seconds:
                    self._sink.flush()
                    last_flush = time.monotonic()
                if stopping:
                    return
        except OSError as exc:  # a full disk, a file-size limit: one line, the cause named
            logger.error(
                "The recorder stopped writing: %s (the sidecar %s holds what came before).",
                exc.strerror or exc,
                self.sidecar,
            )
            self._error = exc
        except BaseException as exc:
            logger.exception("recorder writer stopped on an error")
            self._error = exc

    def _shutdown_sources(self) -> None:
        for source in (self._eeg, self._markers):
            if source is not None:
                try:
                    source.stop()
                except RuntimeError as exc:
                    logger.error("stopping %r: %s", source, exc)

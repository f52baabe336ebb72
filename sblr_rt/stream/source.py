"""LSL inputs: an EEG source filling a :class:`~sblr_rt.stream.RingBuffer`, a marker source.

Both resolve their stream by name, type and/or ``source_id`` and read it from a background
thread, with LSL's clock-offset correction, dejittering and monotonic timestamps on, so
that every timestamp is in this machine's :func:`pylsl.local_clock`.

When a stream vanishes, the source keeps what it received, records the loss and keeps
looking for a stream with the same ``source_id``; once it is back (with the same channel
layout) a fresh inlet is opened and the gap is recorded as ``(t_start, t_stop)``, the
timestamps of the last sample before and the first sample after it. A fresh inlet is used,
rather than liblsl's own recovery (``recover=True``), because the recovered inlet keeps
its dejitter state across the outage and smears the gap over the following timestamps, and
because it would accept a returning stream whose channel layout changed.

Examples
--------
>>> from sblr_rt.stream import LSLSource  # doctest: +SKIP
>>> with LSLSource(stype="EEG", source_id="my-amp") as source:  # doctest: +SKIP
...     source.buffer.wait_for(source.buffer.n_pushed + 500, timeout=2.0)
...     window, timestamps = source.buffer.latest(500)  # (n_channels, 500)
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import dataclasses
import inspect
import logging
import math
import threading
import time
import weakref

import numpy as np
import pylsl
from pylsl.lib import lib as _liblsl
from pylsl.util import LostError

from .ring_buffer import RingBuffer

__all__ = [
    "AlignedMarker",
    "LSLSource",
    "MarkerSource",
    "StreamDescription",
    "align_markers",
    "resolve_streams",
]

logger = logging.getLogger("sblr_rt.stream")

#: Post-processing of every inlet: timestamps in the local clock, smoothed, monotonic.
PROCESSING_FLAGS = pylsl.proc_clocksync | pylsl.proc_dejitter | pylsl.proc_monotonize

_FORMAT_DTYPES = {
    pylsl.cf_float32: np.dtype(np.float32),
    pylsl.cf_double64: np.dtype(np.float64),
    pylsl.cf_int8: np.dtype(np.int8),
    pylsl.cf_int16: np.dtype(np.int16),
    pylsl.cf_int32: np.dtype(np.int32),
    pylsl.cf_int64: np.dtype(np.int64),
}
_FORMAT_NAMES = {
    pylsl.cf_float32: "float32",
    pylsl.cf_double64: "double64",
    pylsl.cf_string: "string",
    pylsl.cf_int8: "int8",
    pylsl.cf_int16: "int16",
    pylsl.cf_int32: "int32",
    pylsl.cf_int64: "int64",
}

# pylsl >= 1.18 can wait for the first sample and then drain (``min_samples``) and return
# numpy arrays (``as_numpy``); older versions fall back to polling.
_PULL_PARAMETERS = set(inspect.signature(pylsl.StreamInlet.pull_chunk).parameters)
_HAS_MIN_SAMPLES = "min_samples" in _PULL_PARAMETERS
_HAS_AS_NUMPY = "as_numpy" in _PULL_PARAMETERS


@dataclasses.dataclass(frozen=True)
class StreamDescription:
    """What LSL announces about a stream (as listed by :func:`resolve_streams`).

    Parameters
    ----------
    name : str
        Stream name.
    stype : str
        Stream type (``"EEG"``, ``"Markers"``, ...).
    source_id : str
        Unique identifier of the source; empty if the outlet set none.
    n_channels : int
        Number of channels.
    sfreq : float
        Nominal sampling rate in Hz; ``0.0`` for irregular streams (markers).
    channel_format : str
        ``"float32"``, ``"double64"``, ``"string"``, ``"int8"``, ``"int16"``, ``"int32"``
        or ``"int64"``.
    hostname : str
        Machine the outlet runs on.
    uid : str
        Identifier of this particular outlet (changes when the outlet is re-created).
    """

    name: str
    stype: str
    source_id: str
    n_channels: int
    sfreq: float
    channel_format: str
    hostname: str
    uid: str

    @classmethod
    def from_info(cls, info) -> StreamDescription:
        """Describe a :class:`pylsl.StreamInfo`."""
        return cls(
            name=info.name(),
            stype=info.type(),
            source_id=info.source_id(),
            n_channels=info.channel_count(),
            sfreq=float(info.nominal_srate()),
            channel_format=_FORMAT_NAMES.get(info.channel_format(), "undefined"),
            hostname=info.hostname(),
            uid=info.uid(),
        )

    def __str__(self) -> str:
        rate = f"{self.sfreq:g} Hz" if self.sfreq > 0 else "irregular"
        return (
            f"{self.name!r} (type {self.stype!r}, source_id {self.source_id!r}, "
            f"{self.n_channels} {self.channel_format} channels, {rate}, on {self.hostname})"
        )


def resolve_streams(*, name=None, stype=None, source_id=None, timeout=1.0):
    """List the LSL streams visible from this machine.

    Parameters
    ----------
    name, stype, source_id : str | None
        Keep only streams with this name / type / source_id; ``None`` keeps all.
    timeout : float
        How long to listen for answers, in seconds (LSL needs about 0.5 s to hear from
        every outlet on a network).

    Returns
    -------
    streams : list of StreamDescription
        Sorted by name, type and source_id.

    Examples
    --------
    >>> for stream in resolve_streams(stype="EEG"):  # doctest: +SKIP
    ...     print(stream)
    """
    name, stype, source_id = _check_identifiers(name, stype, source_id)
    timeout = _check_timeout(timeout)
    infos = pylsl.resolve_streams(wait_time=timeout)
    found = [StreamDescription.from_info(info) for info in infos]
    found = [s for s in found if _matches(s, name, stype, source_id)]
    return sorted(found, key=lambda s: (s.name, s.stype, s.source_id, s.uid))


# Readers still running at interpreter exit are stopped before liblsl is torn down.
_RUNNING = weakref.WeakSet()


@atexit.register
def _stop_running_readers():  # pragma: no cover - exercised at exit
    for reader in list(_RUNNING):
        reader._stop_event.set()
    for reader in list(_RUNNING):
        thread = reader._thread
        if thread is not None:
            thread.join(timeout=1.0)


# ----------------------------------------------------------------------------------------
class _LSLReader:
    """Shared machinery: resolution, inlet life cycle, reader thread, loss and recovery."""

    _kind = "stream"
    _poll_timeout = 0.1  # seconds a blocking pull waits, so stop() is noticed quickly
    _retry_interval = 0.25  # seconds between attempts to open a stream that answered
    # liblsl needs ~0.5 s or more to hear every outlet (shorter resolutions may miss a
    # stream that is there); resolve_bypred returns as soon as the stream answers anyway.
    _resolve_timeout = 1.0

    def __init__(self, *, name, stype, source_id, timeout):
        self._name, self._stype, self._source_id = _check_identifiers(name, stype, source_id)
        self._timeout = _check_timeout(timeout)
        self._state_lock = threading.Lock()
        self._thread = None
        self._stop_event = threading.Event()
        self._inlet = None
        self._resolved_info = None
        self._description = None
        self._started = False
        self._error = None
        self._connected = False
        self._lost_since = None
        self._lost_events = []  # (local_clock at loss, local_clock at return or None)
        self._n_reconnects = 0
        self._refusal = None  # message while a returning stream is refused
        self._listeners = []

    # -- public API --------------------------------------------------------------------
    def start(self):
        """Resolve the stream, open an inlet and start the background reader.

        Returns
        -------
        self : instance of the source
            So that ``source = LSLSource(...).start()`` works.

        Raises
        ------
        TimeoutError
            If no matching stream is found within ``timeout`` (the message lists the
            streams that were visible).
        RuntimeError
            If several streams match and no ``source_id`` was given (the message names
            them), or if ``start()`` was already called.
        """
        if self._started:
            raise RuntimeError(
                f"{type(self).__name__}.start() was already called; a stopped source cannot "
                "be restarted, create a new one."
            )
        info = self._resolve_initial()
        try:
            inlet, full_info = self._open_inlet(info, self._timeout)
        except LostError as err:
            raise RuntimeError(
                f"LSL stream {StreamDescription.from_info(info)} vanished while connecting."
            ) from err
        except RuntimeError as err:  # pylsl's TimeoutError is not the built-in one
            if type(err).__name__ != "TimeoutError":
                raise
            raise TimeoutError(
                f"LSL stream {StreamDescription.from_info(info)} was found but did not "
                f"answer within {self._timeout:g} s (open, metadata, clock offset)."
            ) from err
        try:
            self._configure(full_info)
        except BaseException:
            _destroy(inlet)
            raise
        self._resolved_info = info
        self._description = StreamDescription.from_info(full_info)
        self._name = self._description.name
        self._stype = self._description.stype
        if not self._description.source_id:
            logger.warning(
                "Stream %s has no source_id: if it vanishes, any stream with the same name "
                "and type will be accepted as its return.",
                self._description,
            )
        self._source_id = self._description.source_id
        self._inlet = inlet
        self._connected = True
        self._started = True
        logger.info("Connected to %s %s.", self._kind, self._description)
        self._thread = threading.Thread(
            target=self._run, name=f"sblr-rt {self._kind} reader {self._name}", daemon=True
        )
        _RUNNING.add(self)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the reader thread and close the inlet; the data received is kept.

        Raises
        ------
        RuntimeError
            If the reader thread had failed (the original exception is chained), after
            cleaning up.
        """
        self._stop_event.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10.0)
            if thread.is_alive():  # pragma: no cover - liblsl call stuck
                logger.error("The %s reader thread did not stop within 10 s.", self._kind)
        self._connected = False
        _RUNNING.discard(self)
        self._raise_if_failed(clear=True)

    def __enter__(self):
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def __del__(self):
        try:
            self._stop_event.set()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    @property
    def description(self) -> StreamDescription:
        """The connected stream as announced by LSL (see :class:`StreamDescription`)."""
        self._check_started("description")
        return self._description

    @property
    def name(self) -> str | None:
        """Name of the stream (the resolved one once started)."""
        return self._name

    @property
    def stype(self) -> str | None:
        """Type of the stream (the resolved one once started)."""
        return self._stype

    @property
    def source_id(self) -> str | None:
        """``source_id`` of the stream (the resolved one once started)."""
        return self._source_id

    @property
    def connected(self) -> bool:
        """Whether an inlet is currently receiving from the stream."""
        return self._connected

    def add_listener(self, callback) -> None:
        """Register ``callback``, called from the reader thread for every chunk received.

        Parameters
        ----------
        callback : callable
            See the subclass for its arguments. It must return quickly; an exception in
            it stops the reader (and is re-raised by the next public call).
        """
        self._raise_if_failed()
        if not callable(callback):
            raise TypeError(f"'callback' must be callable, got {type(callback).__name__}.")
        with self._state_lock:
            self._listeners = [*self._listeners, callback]

    def remove_listener(self, callback) -> None:
        """Unregister a callback added with :meth:`add_listener`."""
        with self._state_lock:
            self._listeners = [cb for cb in self._listeners if cb is not callback]

    # -- to specialise -------------------------------------------------------------------
    def _configure(self, full_info) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _layout_change(self, full_info) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _read_once(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _after_reconnect(self) -> None:
        """Prepare for the data of a vanished stream that came back (reader thread)."""

    # -- resolution ----------------------------------------------------------------------
    def _criteria(self) -> str:
        parts = [
            f"{key}={value!r}"
            for key, value in (
                ("name", self._name),
                ("stype", self._stype),
                ("source_id", self._source_id),
            )
            if value is not None
        ]
        return ", ".join(parts) or "any stream"

    def _resolve_initial(self):
        predicate = _predicate(self._name, self._stype, self._source_id)
        deadline = time.monotonic() + self._timeout
        infos = pylsl.resolve_bypred(predicate, 1, self._timeout) if predicate else []
        if not predicate:
            infos = pylsl.resolve_streams(wait_time=self._timeout)
        infos = self._exact(infos)
        if not infos:
            seen = resolve_streams(timeout=min(1.0, self._timeout))
            listing = "\n".join(f"  - {s}" for s in seen) or "  (none: no LSL stream at all)"
            raise TimeoutError(
                f"No LSL {self._kind} with {self._criteria()} found within "
                f"{self._timeout:g} s. Streams visible from this machine:\n{listing}"
            )
        if self._source_id is None and predicate:
            # resolve_bypred returns as soon as one stream answered: listen a little
            # longer for a second match before trusting that the choice is unambiguous.
            wait = max(0.3, min(1.0, deadline - time.monotonic()))
            infos = self._exact(pylsl.resolve_bypred(predicate, 2, wait)) or infos
        unique = {info.uid(): info for info in infos}
        infos = list(unique.values())
        if len(infos) > 1:
            if self._source_id is None:
                listing = "\n".join(f"  - {StreamDescription.from_info(i)}" for i in infos)
                raise RuntimeError(
                    f"{len(infos)} LSL streams match {self._criteria()}; refusing to "
                    f"guess. Pass 'source_id' (or a unique 'name') to choose one of:\n"
                    f"{listing}"
                )
            logger.warning(
                "%d outlets share source_id %r; using the first one (%s).",
                len(infos),
                self._source_id,
                StreamDescription.from_info(infos[0]),
            )
        return infos[0]

    def _exact(self, infos):
        return [
            info
            for info in infos
            if _matches(
                StreamDescription.from_info(info), self._name, self._stype, self._source_id
            )
        ]

    def _open_inlet(self, info, timeout):
        """Open an inlet on ``info``; return it with the full stream info."""
        inlet = pylsl.StreamInlet(
            info,
            max_buflen=self._max_buflen(info),
            recover=False,
            processing_flags=PROCESSING_FLAGS,
        )
        try:
            full_info = inlet.info(timeout=timeout)
            inlet.open_stream(timeout=timeout)
            offset = inlet.time_correction(timeout=timeout)
        except BaseException:
            _destroy(inlet)
            raise
        logger.debug("Clock offset of %s: %.3f ms.", info.name(), 1000 * offset)
        return inlet, full_info

    def _max_buflen(self, info) -> int:
        return 30

    # -- reader thread -------------------------------------------------------------------
    def _run(self):
        try:
            while not self._stop_event.is_set():
                if self._inlet is None:
                    self._try_reconnect()
                    continue
                try:
                    self._read_once()
                except LostError:
                    self._on_lost()
        except BaseException as err:
            logger.exception("The %s reader of %r stopped on an error.", self._kind, self._name)
            self._error = err
        finally:
            self._connected = False
            inlet, self._inlet = self._inlet, None
            if inlet is not None:
                _destroy(inlet)

    def _on_lost(self):
        now = pylsl.local_clock()
        inlet, self._inlet = self._inlet, None
        _destroy(inlet)
        with self._state_lock:
            self._connected = False
            self._lost_since = now
            self._lost_events.append([now, None])
        logger.warning(
            "LSL %s %r (source_id %r) was lost; data received so far is kept, waiting for "
            "it to come back.",
            self._kind,
            self._name,
            self._source_id,
        )

    def _try_reconnect(self):
        predicate = _predicate(
            self._name if not self._source_id else None, self._stype, self._source_id or None
        )
        try:
            infos = pylsl.resolve_bypred(predicate, 1, self._resolve_timeout)
        except Exception as err:  # pragma: no cover - liblsl internal
            logger.debug("Resolution failed while waiting for %r: %r", self._name, err)
            infos = []
        infos = [i for i in infos if self._source_id or i.name() == self._name]
        if not infos:
            return
        try:
            inlet, full_info = self._open_inlet(infos[0], timeout=1.0)
        except RuntimeError as err:  # pylsl's LostError, TimeoutError, ...
            logger.debug("Stream %r answered but could not be opened: %r", self._name, err)
            self._stop_event.wait(self._retry_interval)
            return
        problem = self._layout_change(full_info)
        if problem is not None:
            _destroy(inlet)
            if problem != self._refusal:
                logger.error(
                    "LSL %s %r (source_id %r) came back with a different layout and is "
                    "refused; data received before is kept. %s",
                    self._kind,
                    self._name,
                    self._source_id,
                    problem,
                )
            with self._state_lock:
                self._refusal = problem
            self._stop_event.wait(1.0)
            return
        with self._state_lock:
            self._inlet = inlet
            self._resolved_info = infos[0]
            self._connected = True
            self._n_reconnects += 1
            self._refusal = None
            if self._lost_events and self._lost_events[-1][1] is None:
                self._lost_events[-1][1] = pylsl.local_clock()
            lost_for = pylsl.local_clock() - (self._lost_since or pylsl.local_clock())
            self._lost_since = None
        self._after_reconnect()
        logger.warning(
            "LSL %s %r (source_id %r) is back after %.2f s.",
            self._kind,
            self._name,
            self._source_id,
            lost_for,
        )

    # -- helpers -------------------------------------------------------------------------
    def _check_started(self, what):
        if not self._started:
            raise RuntimeError(
                f"{type(self).__name__}.{what} needs a resolved stream; call "
                f"{type(self).__name__}.start() first."
            )

    def _raise_if_failed(self, clear=False):
        error = self._error
        if error is None:
            return
        if clear:
            self._error = None
        raise RuntimeError(
            f"The background reader of LSL {self._kind} {self._name!r} stopped on "
            f"{type(error).__name__}: {error}"
        ) from error

    def _common_status(self) -> dict:
        return {
            "name": self._name,
            "source_id": self._source_id,
            "connected": self._connected,
            "lost_since": self._lost_since,
            "n_reconnects": self._n_reconnects,
            "outages": [tuple(event) for event in self._lost_events],
            "refused": self._refusal,
            "running": self._thread is not None and self._thread.is_alive(),
        }


# ----------------------------------------------------------------------------------------
class LSLSource(_LSLReader):
    """A numeric LSL stream (EEG) read into a :class:`~sblr_rt.stream.RingBuffer`.

    The stream is resolved by ``name``, ``stype`` and/or ``source_id`` when
    :meth:`start` is called; its channel labels (``desc/channels/channel/label``), rate
    and data type come from its metadata. A background thread pulls chunks into a
    preallocated array of the stream's own dtype (pylsl writes raw bytes into the
    destination, so a dtype mismatch would silently corrupt data), counts samples holding
    NaN (they are kept: consumers decide), pushes them into :attr:`buffer` and calls the
    listeners.

    Parameters
    ----------
    name : str | None
        Stream name to match.
    stype : str | None
        Stream type to match (default ``"EEG"``).
    source_id : str | None
        ``source_id`` to match. Without it, two matching streams are refused.
    timeout : float
        Seconds to wait for the stream in :meth:`start`.
    buffer_seconds : float
        Length of the ring buffer in seconds of nominal rate.
    gap_threshold : float | None
        A jump between consecutive timestamps larger than this (seconds) is recorded as a
        gap even when the stream was not lost. Default ``max(0.1, 10 / sfreq)``.
    stall_timeout : float | "auto" | None
        After this many seconds without data from a stream that is still there, the inlet
        is reopened (``None``: never; ``"auto"``: ``max(1.0, 20 / sfreq)``). liblsl's
        dejitter assumes a regular stream and would otherwise spread a pause over the
        following seconds of timestamps (a 1 s pause at 100 Hz comes out as ~30 ms steps
        for seconds); a fresh inlet restarts them exactly, so the pause shows as one gap.
    min_pull_interval : float
        Minimum seconds between two pulls (default 0: wake for every chunk the sender
        pushes). With a sender pushing every sample, e.g. ``0.004`` trades up to 4 ms of
        latency for a reader CPU share cut by the same factor.

    Attributes
    ----------
    buffer : RingBuffer
        The samples received, in the stream's dtype (available after :meth:`start`).

    Notes
    -----
    A vanished stream is waited for, indefinitely, while the data already received stays
    in :attr:`buffer`. A stream returning with the same ``source_id`` but another
    channel count, labels, rate or format is refused: it is logged as an error and shown in
    :meth:`status` under ``"refused"``; the source keeps waiting for the right one.

    Examples
    --------
    >>> source = LSLSource(stype="EEG", source_id="amp-1", buffer_seconds=10.0)
    >>> source.start()  # doctest: +SKIP
    >>> source.ch_names[:3], source.sfreq  # doctest: +SKIP
    (['Fp1', 'Fp2', 'F3'], 1000.0)
    >>> source.stop()  # doctest: +SKIP
    """

    _kind = "EEG stream"

    def __init__(
        self,
        *,
        name=None,
        stype="EEG",
        source_id=None,
        timeout=5.0,
        buffer_seconds=30.0,
        gap_threshold=None,
        stall_timeout="auto",
        min_pull_interval=0.0,
    ):
        super().__init__(name=name, stype=stype, source_id=source_id, timeout=timeout)
        self._buffer_seconds = _check_positive_float(buffer_seconds, "buffer_seconds")
        if gap_threshold is not None:
            gap_threshold = _check_positive_float(gap_threshold, "gap_threshold")
        self._gap_threshold_arg = gap_threshold
        if stall_timeout is not None and stall_timeout != "auto":
            stall_timeout = _check_positive_float(stall_timeout, "stall_timeout")
        self._stall_timeout = stall_timeout
        self._stall_reopened = False
        self._n_stalls = 0
        if isinstance(min_pull_interval, bool) or not isinstance(min_pull_interval, int | float):
            raise TypeError(
                f"'min_pull_interval' must be a number, got {type(min_pull_interval).__name__}."
            )
        if not 0 <= min_pull_interval < 1:
            raise ValueError(
                f"'min_pull_interval' must be in [0, 1) seconds, got {min_pull_interval!r}."
            )
        self._min_pull_interval = float(min_pull_interval)
        self._last_pull = 0.0
        self.buffer = None
        self._ch_names = None
        self._ch_units = None
        self._ch_types = None
        self._sfreq = None
        self._dtype = None
        self._scratch = None
        self._gaps = []
        self._n_nan_samples = 0
        self._n_chunks = 0
        self._last_timestamp = None
        self._last_arrival = None
        self._rate_points = collections.deque()  # (n_pushed, last timestamp) per chunk
        self._pending_gap = False
        self._nan_logged_at = -math.inf

    def __repr__(self) -> str:
        state = "connected" if self._connected else ("lost" if self._started else "not started")
        return f"<LSLSource | {self._criteria()} | {state}>"

    # -- metadata ------------------------------------------------------------------------
    @property
    def ch_names(self) -> list[str]:
        """Channel labels from the stream's metadata (``"0"``, ``"1"``, ... if absent)."""
        self._check_started("ch_names")
        return list(self._ch_names)

    @property
    def ch_units(self) -> list[str]:
        """Channel units from ``desc/channels/channel/unit`` (``""`` where absent)."""
        self._check_started("ch_units")
        return list(self._ch_units)

    @property
    def ch_types(self) -> list[str]:
        """Channel types from ``desc/channels/channel/type`` (``""`` where absent)."""
        self._check_started("ch_types")
        return list(self._ch_types)

    @property
    def sfreq(self) -> float:
        """Nominal sampling rate in Hz (see ``status()["effective_sfreq"]``)."""
        self._check_started("sfreq")
        return self._sfreq

    @property
    def n_channels(self) -> int:
        """Number of channels."""
        self._check_started("n_channels")
        return len(self._ch_names)

    @property
    def dtype(self) -> np.dtype:
        """Data type of the stream, and of :attr:`buffer`."""
        self._check_started("dtype")
        return self._dtype

    def add_listener(self, callback) -> None:
        """Register ``callback(chunk, timestamps)``, called for every chunk received.

        Parameters
        ----------
        callback : callable
            Called from the reader thread with ``chunk`` of shape
            ``(n_samples, n_channels)`` in the stream's dtype (a fresh array the callback
            may keep) and ``timestamps`` of shape ``(n_samples,)``, after the chunk was
            pushed into :attr:`buffer`. It must return quickly; an exception in it stops
            the reader (and is re-raised by the next public call).
        """
        super().add_listener(callback)

    def status(self) -> dict:
        """Return the state of the source, for logs and the dashboard.

        Returns
        -------
        status : dict
            ``connected`` (bool), ``n_samples`` (samples received), ``n_gaps`` and
            ``gaps`` (list of ``(t_start, t_stop)`` LSL timestamps of the samples around
            each gap), ``n_nan_samples`` (samples with at least one NaN), ``sfreq``
            (nominal), ``effective_sfreq`` (from the timestamps of the last ~10 s;
            ``None`` until known), ``lost_since`` (``pylsl.local_clock()`` when the
            stream was lost, ``None`` while connected), ``n_reconnects``, ``outages``
            (list of ``(lost_at, back_at)`` in ``local_clock()`` time, ``back_at`` ``None``
            while lost), ``refused``
            (why a returning stream was refused, or ``None``), ``last_timestamp``,
            ``stalled_for`` (seconds since the last chunk arrived), ``n_stalls``
            (times the inlet was reopened after ``stall_timeout``), ``buffer_fill``
            (fraction of the ring buffer holding data), ``name``, ``source_id`` and
            ``running`` (whether the reader thread is alive).

        Raises
        ------
        RuntimeError
            If the reader thread failed (the original exception is chained).
        """
        self._raise_if_failed()
        self._check_started("status()")
        with self._state_lock:
            status = self._common_status()
            status.update(
                n_samples=self.buffer.n_pushed,
                n_gaps=len(self._gaps),
                gaps=list(self._gaps),
                n_nan_samples=self._n_nan_samples,
                n_stalls=self._n_stalls,
                sfreq=self._sfreq,
                effective_sfreq=self._effective_sfreq(),
                last_timestamp=self._last_timestamp,
                stalled_for=(
                    None
                    if self._last_arrival is None
                    else pylsl.local_clock() - self._last_arrival
                ),
                buffer_fill=self.buffer.n_available / self.buffer.capacity,
            )
        return status

    # -- setup ---------------------------------------------------------------------------
    def _configure(self, full_info):
        fmt = full_info.channel_format()
        if fmt not in _FORMAT_DTYPES:
            raise TypeError(
                f"LSLSource reads numeric streams; stream {full_info.name()!r} has channel "
                f"format {_FORMAT_NAMES.get(fmt, fmt)!r}. Use MarkerSource for strings."
            )
        sfreq = float(full_info.nominal_srate())
        if sfreq <= 0:
            raise ValueError(
                f"LSLSource needs a stream with a nominal sampling rate; stream "
                f"{full_info.name()!r} has an irregular rate ({sfreq:g})."
            )
        n_channels = full_info.channel_count()
        self._ch_names = _channel_labels(full_info)
        self._ch_units = _channel_field(full_info, "unit")
        self._ch_types = _channel_field(full_info, "type")
        self._sfreq = sfreq
        self._dtype = _FORMAT_DTYPES[fmt]
        capacity = max(1, math.ceil(self._buffer_seconds * sfreq))
        self.buffer = RingBuffer(n_channels, capacity, dtype=self._dtype)
        # Large enough for ~0.5 s so a reader that fell behind catches up in a few pulls.
        self._max_pull = max(64, math.ceil(0.5 * sfreq))
        self._scratch = np.empty((self._max_pull, n_channels), dtype=self._dtype)
        if self._stall_timeout == "auto":
            self._stall_timeout = max(1.0, 20.0 / sfreq)
        self._gap_threshold = (
            self._gap_threshold_arg
            if self._gap_threshold_arg is not None
            else max(0.1, 10.0 / sfreq)
        )

    def _open_inlet(self, info, timeout):
        inlet, full_info = super()._open_inlet(info, timeout)
        np_dtype = getattr(inlet, "np_dtype", None)
        expected = _FORMAT_DTYPES.get(full_info.channel_format())
        if np_dtype is not None and expected is not None and np.dtype(np_dtype) != expected:
            _destroy(inlet)  # pragma: no cover - guards a pylsl change
            raise TypeError(
                f"pylsl pulls {np.dtype(np_dtype)} but the pull buffer would be {expected}."
            )
        return inlet, full_info

    def _max_buflen(self, info) -> int:
        return max(10, math.ceil(self._buffer_seconds))

    def _layout_change(self, full_info) -> str | None:
        changes = []
        if full_info.channel_format() not in _FORMAT_DTYPES or (
            _FORMAT_DTYPES[full_info.channel_format()] != self._dtype
        ):
            changes.append(
                f"channel format {_FORMAT_NAMES.get(full_info.channel_format())!r} instead "
                f"of {self._description.channel_format!r}"
            )
        if full_info.channel_count() != len(self._ch_names):
            changes.append(
                f"{full_info.channel_count()} channels instead of {len(self._ch_names)}"
            )
        else:
            labels = _channel_labels(full_info)
            if labels != self._ch_names:
                diff = [(a, b) for a, b in zip(self._ch_names, labels, strict=True) if a != b]
                changes.append(f"channel labels changed (was -> now: {diff[:5]})")
        if float(full_info.nominal_srate()) != self._sfreq:
            changes.append(f"rate {full_info.nominal_srate():g} Hz instead of {self._sfreq:g}")
        return "; ".join(changes) or None

    def _after_reconnect(self):
        self._pending_gap = True

    # -- reading -------------------------------------------------------------------------
    def _read_once(self):
        scratch = self._scratch
        if self._min_pull_interval:
            wait = self._last_pull + self._min_pull_interval - time.monotonic()
            if wait > 0:
                self._stop_event.wait(wait)
            self._last_pull = time.monotonic()
        if _HAS_MIN_SAMPLES:
            kwargs = {"as_numpy": True} if _HAS_AS_NUMPY else {}
            _, timestamps = self._inlet.pull_chunk(
                timeout=self._poll_timeout,
                max_samples=self._max_pull,
                dest_obj=scratch,
                min_samples=1,
                **kwargs,
            )
        else:  # pragma: no cover - pylsl < 1.18
            _, timestamps = self._inlet.pull_chunk(
                timeout=0.0, max_samples=self._max_pull, dest_obj=scratch
            )
            if not timestamps:
                self._check_stall()
                self._stop_event.wait(0.001)
                return
        n_samples = len(timestamps)
        if n_samples == 0:
            self._check_stall()
            return
        timestamps = np.asarray(timestamps, dtype=np.float64)
        chunk = scratch[:n_samples].copy()
        self._handle_chunk(chunk, timestamps)

    def _check_stall(self):
        if self._stall_timeout is None or self._last_arrival is None or self._stall_reopened:
            return
        silent = pylsl.local_clock() - self._last_arrival
        if silent < self._stall_timeout:
            return
        old, self._inlet = self._inlet, None
        _destroy(old)
        self._stall_reopened = True
        logger.warning(
            "No data from LSL stream %r for %.1f s; reopening the inlet so that timestamps "
            "restart exactly when data resumes.",
            self._name,
            silent,
        )
        try:
            self._inlet, _ = self._open_inlet(self._resolved_info, timeout=1.0)
        except RuntimeError:  # pylsl's LostError, TimeoutError: the outlet is gone
            self._on_lost()
        with self._state_lock:
            self._n_stalls += 1

    def _handle_chunk(self, chunk, timestamps):
        now = pylsl.local_clock()
        n_nan = 0
        if self._dtype.kind == "f":
            n_nan = int(np.count_nonzero(np.isnan(chunk).any(axis=1)))
        with self._state_lock:
            last = self._last_timestamp
            if last is not None:
                jump = timestamps[0] - last
                if self._pending_gap or jump > self._gap_threshold:
                    self._gaps.append((float(last), float(timestamps[0])))
                    self._rate_points.clear()
                    logger.warning(
                        "Gap of %.3f s in LSL stream %r (%s).",
                        jump,
                        self._name,
                        "stream was lost" if self._pending_gap else "timestamps jumped",
                    )
                elif jump < 0:  # pragma: no cover - monotonize prevents it within an inlet
                    logger.warning(
                        "Timestamps of %r went back by %.3f s.", self._name, float(-jump)
                    )
            self._pending_gap = False
            self._stall_reopened = False
            self._n_nan_samples += n_nan
            self._n_chunks += 1
            self._last_timestamp = float(timestamps[-1])
            self._last_arrival = now
        self.buffer.push(chunk, timestamps)
        self._track_rate(timestamps)
        if n_nan and now - self._nan_logged_at > 10.0:
            self._nan_logged_at = now
            logger.warning(
                "LSL stream %r sent samples with NaN (%d so far); they are buffered as is.",
                self._name,
                self._n_nan_samples,
            )
        for callback in self._listeners:
            callback(chunk, timestamps)

    def _track_rate(self, timestamps):
        points = self._rate_points
        with self._state_lock:
            points.append((self.buffer.n_pushed, float(timestamps[-1])))
            while len(points) > 2 and points[-1][1] - points[1][1] > 10.0:
                points.popleft()

    def _effective_sfreq(self):
        points = self._rate_points
        if len(points) < 2:
            return None
        (n0, t0), (n1, t1) = points[0], points[-1]
        if t1 - t0 < 0.2 or n1 == n0:
            return None
        return (n1 - n0) / (t1 - t0)


# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AlignedMarker:
    """A marker placed on the EEG sample grid (see :func:`align_markers`).

    Parameters
    ----------
    index : int
        Absolute index (in the :class:`~sblr_rt.stream.RingBuffer`) of the EEG sample
        nearest in time to the marker.
    timestamp : float
        The marker's LSL timestamp.
    value : str | int | float | tuple
        The marker's value.
    """

    index: int
    timestamp: float
    value: object


class MarkerSource(_LSLReader):
    """An LSL marker stream (string or numeric), read by a background thread.

    Markers are queued with their clock-corrected LSL timestamps until :meth:`pop`.
    One-channel streams give scalar values (``str``, ``int`` or ``float``), wider ones
    tuples. Place them on the EEG sample grid with :func:`align_markers`.

    Parameters
    ----------
    name : str | None
        Stream name to match.
    stype : str | None
        Stream type to match (default ``"Markers"``).
    source_id : str | None
        ``source_id`` to match. Without it, two matching streams are refused.
    timeout : float
        Seconds to wait for the stream in :meth:`start`.

    Examples
    --------
    >>> markers = MarkerSource(source_id="cues-1").start()  # doctest: +SKIP
    >>> markers.pop()  # doctest: +SKIP
    [(5321.204, 'left'), (5325.210, 'right')]
    """

    _kind = "marker stream"

    def __init__(self, *, name=None, stype="Markers", source_id=None, timeout=5.0):
        super().__init__(name=name, stype=stype, source_id=source_id, timeout=timeout)
        self._queue = collections.deque()
        self._n_markers = 0
        self._format = None
        self._n_channels = None

    def __repr__(self) -> str:
        state = "connected" if self._connected else ("lost" if self._started else "not started")
        return f"<MarkerSource | {self._criteria()} | {state}>"

    def pop(self) -> list[tuple[float, object]]:
        """Return the markers received since the last call, oldest first.

        Returns
        -------
        markers : list of (timestamp, value)
            LSL timestamps (local clock) and values.
        """
        self._raise_if_failed()
        out = []
        queue = self._queue
        while queue:
            out.append(queue.popleft())
        return out

    def add_listener(self, callback) -> None:
        """Register ``callback(timestamp, value)``, called from the reader per marker.

        Parameters
        ----------
        callback : callable
            Called with the marker's timestamp and value, before it is queued for
            :meth:`pop`. It must return quickly; an exception in it stops the reader.
        """
        super().add_listener(callback)

    def status(self) -> dict:
        """Return the state of the source.

        Returns
        -------
        status : dict
            ``connected``, ``n_markers`` (received in total), ``n_pending`` (not yet
            popped), ``lost_since``, ``n_reconnects``, ``outages``, ``refused``, ``name``,
            ``source_id``, ``running``.
        """
        self._raise_if_failed()
        self._check_started("status()")
        with self._state_lock:
            status = self._common_status()
            status.update(n_markers=self._n_markers, n_pending=len(self._queue))
        return status

    def _configure(self, full_info):
        self._format = full_info.channel_format()
        self._n_channels = full_info.channel_count()

    def _layout_change(self, full_info) -> str | None:
        if (
            full_info.channel_format() != self._format
            or full_info.channel_count() != self._n_channels
        ):
            return (
                f"{full_info.channel_count()} {_FORMAT_NAMES.get(full_info.channel_format())} "
                f"channels instead of {self._n_channels} "
                f"{_FORMAT_NAMES.get(self._format)}"
            )
        return None

    def _read_once(self):
        # Markers are sparse: block on one, then drain what is already there.
        timeout = self._poll_timeout
        while True:
            sample, timestamp = self._inlet.pull_sample(timeout=timeout)
            if sample is None:
                return
            timeout = 0.0
            value = sample[0] if len(sample) == 1 else tuple(sample)
            if isinstance(value, np.generic):
                value = value.item()
            for callback in self._listeners:
                callback(timestamp, value)
            self._queue.append((timestamp, value))
            with self._state_lock:
                self._n_markers += 1


def align_markers(markers, buffer):
    """Place markers on the sample grid of a :class:`~sblr_rt.stream.RingBuffer`.

    Parameters
    ----------
    markers : iterable of (timestamp, value)
        Markers with LSL timestamps in the buffer's clock (e.g. from
        :meth:`MarkerSource.pop`).
    buffer : RingBuffer
        The EEG buffer (e.g. :attr:`LSLSource.buffer`).

    Returns
    -------
    aligned : list of AlignedMarker
        Markers whose nearest sample is known, with that sample's absolute index.
    pending : list of (timestamp, value)
        Markers newer than the newest sample: pass them again once more data arrived.

    Notes
    -----
    Markers older than the oldest sample held cannot be placed; they are dropped with a
    warning on the ``sblr_rt.stream`` logger.

    Examples
    --------
    >>> import numpy as np
    >>> from sblr_rt.stream import RingBuffer
    >>> buffer = RingBuffer(1, 100)
    >>> buffer.push(np.zeros((10, 1)), 100.0 + np.arange(10) / 100)
    >>> aligned, pending = align_markers([(100.052, "left"), (100.2, "right")], buffer)
    >>> aligned
    [AlignedMarker(index=5, timestamp=100.052, value='left')]
    >>> pending
    [(100.2, 'right')]
    """
    aligned, pending = [], []
    for timestamp, value in markers:
        try:
            index = buffer.index_at_time(timestamp)
        except ValueError:
            if buffer.n_pushed == 0:
                pending.append((timestamp, value))
            else:
                logger.warning(
                    "Marker %r at %.4f precedes the oldest EEG sample held; dropped.",
                    value,
                    timestamp,
                )
            continue
        if index + 1 >= buffer.n_pushed:
            pending.append((timestamp, value))
            continue
        try:
            before = buffer.timestamp_at(index)
            after = buffer.timestamp_at(index + 1)
        except ValueError:  # overwritten in the meantime
            logger.warning("Marker %r at %.4f: its samples were overwritten.", value, timestamp)
            continue
        if after - timestamp < timestamp - before:
            index += 1
        aligned.append(AlignedMarker(index=index, timestamp=float(timestamp), value=value))
    return aligned, pending


# ----------------------------------------------------------------------------------------
def _channel_labels(info) -> list[str]:
    n_channels = info.channel_count()
    labels = []
    channel = info.desc().child("channels").child("channel")
    while not channel.empty() and len(labels) < n_channels:
        labels.append(channel.child_value("label"))
        channel = channel.next_sibling("channel")
    if len(labels) != n_channels or not all(labels):
        if labels:
            logger.warning(
                "Stream %r describes %d channel labels for %d channels; using indices.",
                info.name(),
                sum(bool(label) for label in labels),
                n_channels,
            )
        return [str(k) for k in range(n_channels)]
    return labels


def _channel_field(info, field) -> list[str]:
    values = []
    channel = info.desc().child("channels").child("channel")
    while not channel.empty() and len(values) < info.channel_count():
        values.append(channel.child_value(field))
        channel = channel.next_sibling("channel")
    return values + [""] * (info.channel_count() - len(values))


def _predicate(name, stype, source_id) -> str:
    parts = []
    for key, value in (("name", name), ("type", stype), ("source_id", source_id)):
        if value is None:
            continue
        if "'" not in value:
            parts.append(f"{key}='{value}'")
        elif '"' not in value:
            parts.append(f'{key}="{value}"')
        # a value with both quote kinds is matched in Python only (see _matches)
    return " and ".join(parts)


def _matches(description, name, stype, source_id) -> bool:
    return (
        (name is None or description.name == name)
        and (stype is None or description.stype == stype)
        and (source_id is None or description.source_id == source_id)
    )


def _destroy(inlet) -> None:
    """Close an inlet now rather than whenever the garbage collector runs."""
    if inlet is None:
        return
    try:
        inlet.close_stream()
    except Exception:  # pragma: no cover - already gone
        pass
    try:
        _liblsl.lsl_destroy_inlet(inlet.obj)
        inlet.obj = ctypes.c_void_p()  # pylsl's __del__ then destroys NULL: a no-op
    except Exception:  # pragma: no cover - already gone
        pass


def _check_identifiers(name, stype, source_id):
    for key, value in (("name", name), ("stype", stype), ("source_id", source_id)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"'{key}' must be a str or None, got {type(value).__name__}.")
    return name, stype, source_id


def _check_timeout(timeout) -> float:
    return _check_positive_float(timeout, "timeout")


def _check_positive_float(value, key) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"'{key}' must be a number, got {type(value).__name__} {value!r}.")
    value = float(value)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"'{key}' must be a positive finite number, got {value!r}.")
    return value

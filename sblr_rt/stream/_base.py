"""The inlet life cycle shared by every LSL source: resolve, open, lose, reconnect.

:class:`BaseSource` resolves its stream by name, type and/or ``source_id`` and reads it
from a background thread, with LSL's clock-offset correction, dejittering and monotonic
timestamps on, so that every timestamp is in this machine's
:func:`~sblr_rt.stream.clock.local_clock`. Subclasses say what a stream must look like
(``_configure``), what a returning stream may not change (``_layout_change``) and how to
read (``_read_once``).

When a stream vanishes, the source keeps what it received, records the loss and keeps
looking for a stream with the same ``source_id``; once it is back (with the same channel
layout) a fresh inlet is opened. A stream of the same name that comes back with a new
``source_id`` is taken once its layout is checked, with a WARNING naming both ids, unless
the caller gave the ``source_id`` (then it is refused, and ``status()["refused"]`` says
why) or several such streams are there (refused: no guess). A returning stream whose
header already shows another layout is refused before any inlet is opened.

A fresh inlet is used, rather than liblsl's own recovery
(``recover=True``), because the recovered inlet keeps its dejitter state across the
outage and smears the gap over the following timestamps, and because it would accept a
returning stream whose channel layout changed.

Inlets are closed with pylsl's public API only (:func:`close_inlet`): ``close_stream()``
then dropping the last reference, which lets :class:`pylsl.StreamInlet` destroy the
liblsl object at once (CPython frees on the last reference).
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref

from pylsl.util import LostError

from sblr_rt.stream._info import (
    StreamDescription,
    check_identifiers,
    check_timeout,
    matches,
    resolve_predicate,
    resolve_streams,
)
from sblr_rt.stream._liblsl import pylsl
from sblr_rt.stream.clock import local_clock

__all__ = ["BaseSource", "close_inlet"]

logger = logging.getLogger("sblr_rt.stream")

#: Post-processing of every inlet: timestamps in the local clock, smoothed, monotonic.
PROCESSING_FLAGS = pylsl.proc_clocksync | pylsl.proc_dejitter | pylsl.proc_monotonize
#: ... but of a marker inlet: in the local clock only. Markers are irregular (nothing to
#: smooth), and with monotonic timestamps one marker stamped far in the future would lift
#: every later one to its time; the online loop judges each cue's time itself.
MARKER_PROCESSING_FLAGS = pylsl.proc_clocksync


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
class BaseSource:
    """Shared machinery: resolution, inlet life cycle, reader thread, loss and recovery."""

    _kind = "stream"
    _poll_timeout = 0.1  # seconds a blocking pull waits, so stop() is noticed quickly
    _processing_flags = PROCESSING_FLAGS
    _retry_interval = 0.25  # seconds between attempts to open a stream that answered
    # liblsl needs ~0.5 s or more to hear every outlet (shorter resolutions may miss a
    # stream that is there); resolve_bypred returns as soon as the stream answers anyway.
    _resolve_timeout = 1.0

    #: Type looked for when neither a name nor a type is given.
    _default_type = None

    def __init__(self, *, name, stype, source_id, timeout):
        name, stype, source_id = check_identifiers(name, stype, source_id)
        # A stream chosen by name is taken whatever its type (mne-lsl's player says
        # "eeg"/"annotations", OpenViBE "signal"/"marker"). A source_id alone keeps the
        # default type: mne-lsl's player gives its EEG and annotations the same one.
        if stype is None and name is None:
            stype = self._default_type
        self._name, self._stype, self._source_id = name, stype, source_id
        # a source_id the caller gave is a promise: never follow another one
        self._source_id_given = source_id is not None
        self._timeout = check_timeout(timeout)
        self._state_lock = threading.Lock()
        self._thread = None
        self._stop_event = threading.Event()
        self._inlet = None
        self._resolved_info = None
        self._description = None
        self._started = False
        self._error = None
        self._connected = False
        self._connected_at = None  # local_clock() of the last (re)connection
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
        ValueError
            If the stream declares what the source cannot take (a rate out of
            ``(0, MAX_SFREQ]``, buffers beyond ``MAX_DATA_BYTES``:
            :mod:`sblr_rt.io.declared_limits`); checked before the inlet is opened.
        """
        if self._started:
            raise RuntimeError(
                f"{type(self).__name__}.start() was already called; a stopped source cannot "
                "be restarted, create a new one."
            )
        info = self._resolve_initial()
        self._check_declared(info)
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
            close_inlet(inlet)
            del inlet  # the traceback keeps this frame: drop the inlet now
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
        self._connected_at = local_clock()
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

    def _check_declared(self, info) -> None:
        """Raise if the stream's header (resolved, no inlet yet) is not one to open."""

    def _declared_change(self, info) -> str | None:
        """Say what a returning stream's header changed, before an inlet is opened."""
        return None

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
        predicate = resolve_predicate(self._name, self._stype, self._source_id)
        deadline = local_clock() + self._timeout
        raw = pylsl.resolve_bypred(predicate, 1, self._timeout) if predicate else []
        if not predicate:
            raw = pylsl.resolve_streams(wait_time=self._timeout)
        infos = self._exact(raw)
        while predicate and raw and not infos and local_clock() < deadline:
            # only streams this source leaves out answered (our own decision outlets):
            # wait for one more
            raw = pylsl.resolve_bypred(predicate, len(raw) + 1, deadline - local_clock())
            infos = self._exact(raw)
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
            wait = max(0.3, min(1.0, deadline - local_clock()))
            minimum = len(raw) - len(infos) + 2  # the streams left out do not count
            infos = self._exact(pylsl.resolve_bypred(predicate, minimum, wait)) or infos
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
            if matches(StreamDescription.from_info(info), self._name, self._stype, self._source_id)
        ]

    def _open_inlet(self, info, timeout):
        """Open an inlet on ``info``; return it with the full stream info."""
        inlet = pylsl.StreamInlet(
            info,
            max_buflen=self._max_buflen(info),
            recover=False,
            processing_flags=self._processing_flags,
        )
        try:
            full_info = inlet.info(timeout=timeout)
            inlet.open_stream(timeout=timeout)
            offset = inlet.time_correction(timeout=timeout)
        except BaseException:
            close_inlet(inlet)
            del inlet  # the traceback keeps this frame: drop the inlet now
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
            close_inlet(inlet)
            del inlet

    def _on_lost(self):
        now = local_clock()
        inlet, self._inlet = self._inlet, None
        close_inlet(inlet)
        del inlet
        # Said before the state changes, so whoever sees the source disconnected also
        # finds the message in the log.
        logger.warning(
            "LSL %s %r (source_id %r) was lost; data received so far is kept, waiting for "
            "it to come back.",
            self._kind,
            self._name,
            self._source_id,
        )
        with self._state_lock:
            self._connected = False
            self._lost_since = now
            self._lost_events.append([now, None])

    def _try_reconnect(self):
        infos = self._returning_candidates()
        if not infos:
            return
        info = infos[0]
        new_source = bool(self._source_id) and info.source_id() != self._source_id
        what = (
            f"is back as a stream with a new source_id {info.source_id()!r} and another "
            "layout, which is refused"
            if new_source
            else "came back with a different layout and is refused"
        )
        if new_source:
            problem = self._other_source_problem(infos)
            if problem is not None:
                self._refuse(problem, "is not taken")
                return
        problem = self._declared_change(info)
        if problem is not None:  # refused from its header: no inlet (nor buffer) opened
            self._refuse(problem, what)
            return
        try:
            inlet, full_info = self._open_inlet(info, timeout=1.0)
        except RuntimeError as err:  # pylsl's LostError, TimeoutError, ...
            logger.debug("Stream %r answered but could not be opened: %r", self._name, err)
            self._stop_event.wait(self._retry_interval)
            return
        problem = self._layout_change(full_info)
        if problem is not None:
            close_inlet(inlet)
            del inlet
            self._refuse(problem, what)
            return
        if new_source:
            logger.warning(
                "LSL %s %r did not come back with source_id %r, but a stream of the same "
                "name and layout did, with source_id %r: taking it (pass 'source_id' to "
                "follow one source only).",
                self._kind,
                self._name,
                self._source_id,
                info.source_id(),
            )
        with self._state_lock:
            self._inlet = inlet
            self._resolved_info = info
            if new_source:
                self._source_id = info.source_id()
                self._description = StreamDescription.from_info(full_info)
            self._connected = True
            self._connected_at = local_clock()
            self._n_reconnects += 1
            self._refusal = None
            if self._lost_events and self._lost_events[-1][1] is None:
                self._lost_events[-1][1] = local_clock()
            lost_for = local_clock() - (self._lost_since or local_clock())
            self._lost_since = None
        self._after_reconnect()
        logger.warning(
            "LSL %s %r (source_id %r) is back after %.2f s.",
            self._kind,
            self._name,
            self._source_id,
            lost_for,
        )

    def _returning_candidates(self) -> list:
        """Resolve the streams that may be the lost one; the same source_id first.

        A lost stream with a ``source_id`` is looked for by it and, at once, by its name
        (and type): a stream of the same name that comes back with a new ``source_id``
        is then seen, to be taken or refused with a reason (:meth:`_try_reconnect`).
        """
        same = resolve_predicate(
            self._name if not self._source_id else None, self._stype, self._source_id or None
        )
        predicate = same
        by_name = resolve_predicate(self._name, self._stype, None) if self._name else ""
        if self._source_id and same and by_name:
            predicate = f"({same}) or ({by_name})"
        try:
            infos = pylsl.resolve_bypred(predicate, 1, self._resolve_timeout)
        except Exception as err:  # pragma: no cover - liblsl internal
            logger.debug("Resolution failed while waiting for %r: %r", self._name, err)
            infos = []
        ours = [i for i in infos if self._source_id and i.source_id() == self._source_id]
        if ours:
            return ours
        if not self._source_id:
            return [i for i in infos if i.name() == self._name]
        others = [i for i in infos if self._same_name(i)]
        if others:  # listen a little longer: the stream itself may answer too
            try:
                more = pylsl.resolve_bypred(predicate, len(infos) + 1, 0.3)
            except Exception:  # pragma: no cover - liblsl internal
                more = []
            ours = [i for i in more if i.source_id() == self._source_id]
            if ours:
                return ours
            others = [i for i in more if self._same_name(i)] or others
        return list({i.uid(): i for i in others}.values())

    def _same_name(self, info) -> bool:
        """Whether ``info`` has the lost stream's name and type (any source_id)."""
        return matches(StreamDescription.from_info(info), self._name, self._stype, None)

    def _other_source_problem(self, infos) -> str | None:
        """Say why streams of the lost one's name but another source_id are not taken."""
        ids = sorted({i.source_id() for i in infos})
        if self._source_id_given:
            return (
                f"a stream named {self._name!r} is there with source_id "
                f"{', '.join(map(repr, ids))}, but this source follows source_id "
                f"{self._source_id!r} only (it was given); to take the new stream, restart "
                f"with source_id {ids[0]!r} (--source-id)"
            )
        if len(infos) > 1:
            return (
                f"{len(infos)} streams named {self._name!r} are there with new source_ids "
                f"{ids}; refusing to guess which one is the lost stream (restart with "
                "'source_id' to choose)"
            )
        return None

    def _refuse(self, problem: str, what: str) -> None:
        """Record why a returning stream is refused (logged once per reason); wait 1 s."""
        if problem != self._refusal:
            logger.error(
                "LSL %s %r (source_id %r) %s; data received before is kept. %s",
                self._kind,
                self._name,
                self._source_id,
                what,
                problem,
            )
        with self._state_lock:
            self._refusal = problem
        self._stop_event.wait(1.0)

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


def close_inlet(inlet) -> None:
    """Stop an inlet's transmission now; the caller then drops its last reference.

    Parameters
    ----------
    inlet : pylsl.StreamInlet | None
        The inlet. :meth:`pylsl.StreamInlet.close_stream` stops the data at once; liblsl's
        inlet object is destroyed by pylsl's ``__del__`` when the last reference goes,
        so callers hand over their reference (``inlet, self._inlet = self._inlet, None``)
        and keep no other.
    """
    if inlet is None:
        return
    try:
        inlet.close_stream()
    except Exception:  # pragma: no cover - already gone
        pass

"""The EEG source: a numeric LSL stream read into a :class:`~sblr_rt.stream.RingBuffer`.

:class:`LSLSource` adds to the inlet life cycle of :class:`~sblr_rt.stream._base.BaseSource`
the stream's metadata (labels, units, types, rate, dtype), the ring buffer, and what the
rest of the project reads instead of measuring again:

Gaps
    Detected as samples arrive with THE rule, :func:`sblr_rt.io.gaps.find_gaps` at
    :func:`sblr_rt.io.gaps.gap_threshold` (or the ``gap_threshold`` keyword), plus one
    gap before the first sample after a reconnection or a clock jump (the sender's clock
    stepped: the samples from the step on are dropped and the inlet reopened, so that
    timestamps restart exactly; :class:`~sblr_rt.stream.timeline.StreamTimeline`).
    ``status()["n_gaps"]`` is the one gap
    count of the project; ``status()["gaps"]`` lists ``(t_start, t_stop)``, the timestamps
    of the samples around each gap. Which samples follow a gap is available two ways,
    so that no consumer detects gaps again:

    - :meth:`LSLSource.gap_indices` ``(start, stop)``: the absolute
      :class:`~sblr_rt.stream.RingBuffer` indices (as in ``buffer.get(start, stop)``) of
      the samples that follow a gap, for a consumer that reads the buffer by index. Gaps
      are recorded before their samples are pushed, so ``gap_indices(start, n)`` called
      after reading ``n = buffer.n_pushed`` is complete;
    - ``add_listener(callback, with_gaps=True)``: the callback is called as
      ``callback(chunk, timestamps, gap_before)`` where ``gap_before`` (int array) holds
      the positions ``i`` in the chunk of the samples that follow a gap (between sample
      ``i - 1``, or the previous chunk's last sample for ``i = 0``, and sample ``i``).
      Each gap is reported exactly once, in the chunk of the sample after it.

Rate
    ``status()["effective_sfreq"]`` is measured from the timestamps over a sliding window
    (10 s; reset at each gap). ``status()["rate_ok"]`` is None until the window spans 4 s,
    then whether the effective rate is within ``rate_tolerance[0]`` (5 %) of the declared
    one (a warning is logged the first time it is not); ``status()["rate_far_off"]`` is
    True when it is beyond ``rate_tolerance[1]`` (20 %): decisions should stop.
    ``rate_tolerance=None`` gives no verdict (streams played faster on purpose).

State
    ``status()["state"]``: ``"connecting"`` (inlet open, no sample since it opened),
    ``"streaming"``, ``"stalled"`` (inlet open but no sample for more than
    ``max(1 s, 20 sample periods)``) or ``"lost"`` (no inlet: the stream vanished, or the
    source was stopped).

Examples
--------
>>> from sblr_rt.stream import LSLSource  # doctest: +SKIP
>>> with LSLSource(stype="EEG", source_id="my-amp") as source:  # doctest: +SKIP
...     source.buffer.wait_for(source.buffer.n_pushed + 500, timeout=2.0)
...     window, timestamps = source.buffer.latest(500)  # (n_channels, 500)
"""

from __future__ import annotations

import logging
import math

import numpy as np

from sblr_rt.io.declared_limits import check_allocation, check_sfreq
from sblr_rt.io.gaps import gap_threshold
from sblr_rt.stream._base import BaseSource, close_inlet
from sblr_rt.stream._health import RateMonitor, check_tolerance, stall_threshold, stream_state
from sblr_rt.stream._info import (
    FORMAT_DTYPES,
    FORMAT_NAMES,
    StreamDescription,
    channel_field,
    channel_labels,
    check_positive_float,
    check_pull_interval,
)
from sblr_rt.stream._pull import declared_speed, pull_into
from sblr_rt.stream.clock import local_clock
from sblr_rt.stream.ring_buffer import RingBuffer
from sblr_rt.stream.timeline import StreamTimeline

__all__ = ["LSLSource"]


def _unit_keys(units) -> list[str]:
    """Units as compared on a returning stream: blanks and case do not count."""
    return [unit.strip().lower() for unit in units]


logger = logging.getLogger("sblr_rt.stream")


class LSLSource(BaseSource):
    """A numeric LSL stream (EEG) read into a :class:`~sblr_rt.stream.RingBuffer`.

    The stream is resolved by ``name``, ``stype`` and/or ``source_id`` when
    :meth:`start` is called; its channel labels (``desc/channels/channel/label``), rate
    and data type come from its metadata. A background thread pulls chunks into a
    preallocated array of the stream's own dtype (pylsl writes raw bytes into the
    destination, so a dtype mismatch would silently corrupt data), counts samples holding
    NaN (they are kept: consumers decide), detects gaps, pushes the samples into
    :attr:`buffer` and calls the listeners. See the module notes on gaps, rate and state.

    Parameters
    ----------
    name : str | None
        Stream name to match.
    stype : str | None
        Stream type to match, in any case (``"eeg"`` finds ``EEG``). None: ``"EEG"``
        unless ``name`` is given, then any type (a stream named by the user is taken
        whatever its type).
    source_id : str | None
        ``source_id`` to match. Without it, two matching streams are refused.
    timeout : float
        Seconds to wait for the stream in :meth:`start`.
    buffer_seconds : float
        Length of the ring buffer in seconds of nominal rate.
    gap_threshold : float | None
        A jump between consecutive timestamps larger than this (seconds) is recorded as a
        gap even when the stream was not lost. Default
        :func:`sblr_rt.io.gaps.gap_threshold` of the nominal rate.
    stall_timeout : float | "auto" | None
        After this many seconds without data from a stream that is still there, the inlet
        is reopened (``None``: never; ``"auto"``: :func:`stall_threshold`). liblsl's
        dejitter assumes a regular stream and would otherwise spread a pause over the
        following seconds of timestamps (a 1 s pause at 100 Hz comes out as ~30 ms steps
        for seconds); a fresh inlet restarts them exactly, so the pause shows as one gap.
    min_pull_interval : float
        Minimum seconds between two pulls (default 0: wake for every chunk the sender
        pushes). With a sender pushing every sample, e.g. ``0.004`` trades up to 4 ms of
        latency for a reader CPU share cut by the same factor.
    rate_tolerance : tuple of float | None
        ``(warn, far)`` relative deviations of the effective from the nominal rate for
        ``rate_ok`` and ``rate_far_off`` in :meth:`status`; None: no verdict.

    Attributes
    ----------
    buffer : RingBuffer
        The samples received, in the stream's dtype (available after :meth:`start`).

    Notes
    -----
    A vanished stream is waited for, indefinitely, while the data already received stays
    in :attr:`buffer`. A stream returning with the same ``source_id`` but another
    channel count, labels, rate, format or channel units is refused: it is logged as an
    error and shown in :meth:`status` under ``"refused"``; the source keeps waiting for the
    right one. A stream of the same name with a new ``source_id`` is taken if its layout
    is the same and no ``source_id`` was given (see :mod:`sblr_rt.stream._base`).

    A stream declaring a rate out of ``(0, MAX_SFREQ]``, or whose buffers would take more
    than ``MAX_DATA_BYTES`` (:mod:`sblr_rt.io.declared_limits`), is refused by :meth:`start` before
    an inlet is opened or a buffer allocated.

    Examples
    --------
    >>> source = LSLSource(stype="EEG", source_id="amp-1", buffer_seconds=10.0)
    >>> source.start()  # doctest: +SKIP
    >>> source.ch_names[:3], source.sfreq  # doctest: +SKIP
    (['Fp1', 'Fp2', 'F3'], 1000.0)
    >>> source.stop()  # doctest: +SKIP
    """

    _kind = "EEG stream"
    _default_type = "EEG"

    def __init__(
        self,
        *,
        name=None,
        stype=None,
        source_id=None,
        timeout=5.0,
        buffer_seconds=30.0,
        gap_threshold=None,
        stall_timeout="auto",
        min_pull_interval=0.0,
        rate_tolerance=(0.05, 0.2),
    ):
        super().__init__(name=name, stype=stype, source_id=source_id, timeout=timeout)
        self._buffer_seconds = check_positive_float(buffer_seconds, "buffer_seconds")
        if gap_threshold is not None:
            gap_threshold = check_positive_float(gap_threshold, "gap_threshold")
        self._gap_threshold_arg = gap_threshold
        if stall_timeout is not None and stall_timeout != "auto":
            stall_timeout = check_positive_float(stall_timeout, "stall_timeout")
        self._stall_timeout = stall_timeout
        self._min_pull_interval = check_pull_interval(min_pull_interval)
        self._rate_tolerance = check_tolerance(rate_tolerance)
        self._stall_reopened = False
        self._n_stalls = 0
        self._last_pull = 0.0
        self.buffer = None
        self._ch_names = self._ch_units = self._ch_types = None
        self._sfreq = self._dtype = self._scratch = self._rate = None
        self._timeline = None  # StreamTimeline: clock jumps, gaps (set when connected)
        self._chunk_inlet = None  # the inlet the timeline last read
        self._gap_listeners = []  # listeners called with the gap positions
        self._n_nan_samples = 0
        self._n_chunks = 0
        self._last_arrival = None
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

    # -- consumers -----------------------------------------------------------------------
    def add_listener(self, callback, *, with_gaps=False) -> None:
        """Register a callback, called for every chunk received.

        Parameters
        ----------
        callback : callable
            Called from the reader thread as ``callback(chunk, timestamps)``, or
            ``callback(chunk, timestamps, gap_before)`` with ``with_gaps``: ``chunk`` of
            shape ``(n_samples, n_channels)`` in the stream's dtype (a fresh array the
            callback may keep), ``timestamps`` of shape ``(n_samples,)``, ``gap_before``
            an int array of the positions in the chunk of the samples that follow a gap.
            Called after the chunk was pushed into :attr:`buffer`. It must return
            quickly; an exception in it stops the reader (and is re-raised by the next
            public call).
        with_gaps : bool
            Pass ``gap_before`` as the third argument.
        """
        super().add_listener(callback)
        if with_gaps:
            with self._state_lock:
                self._gap_listeners = [*self._gap_listeners, callback]

    def remove_listener(self, callback) -> None:
        """Unregister a callback added with :meth:`add_listener`."""
        super().remove_listener(callback)
        with self._state_lock:
            self._gap_listeners = [cb for cb in self._gap_listeners if cb is not callback]

    def gap_indices(self, start=0, stop=None) -> np.ndarray:
        """Return the buffer indices of the samples that follow a gap.

        Parameters
        ----------
        start, stop : int | None
            Absolute :class:`~sblr_rt.stream.RingBuffer` indices (as in
            ``buffer.get(start, stop)``); ``stop=None``: up to the newest sample.

        Returns
        -------
        indices : ndarray of int, shape (n_gaps_in_range,)
            Increasing absolute indices ``k`` in ``[start, stop)`` such that sample ``k``
            follows a gap (samples ``k - 1`` and ``k`` are not contiguous).
        """
        with self._state_lock:
            found = [] if self._timeline is None else self._timeline.gap_indices
            indices = np.asarray(found, dtype=np.int64)
        keep = indices >= start
        if stop is not None:
            keep &= indices < stop
        return indices[keep]

    def status(self) -> dict:
        """Return the state of the source, for the online loop, logs and the dashboard.

        Returns
        -------
        status : dict
            ``state``, ``n_gaps``, ``gaps``, ``effective_sfreq``, ``rate_ok`` and
            ``rate_far_off`` as in the module notes; ``connected`` (an inlet is open),
            ``n_samples`` (received), ``n_nan_samples`` (samples with a NaN), ``sfreq``
            (nominal), ``lost_since`` (:func:`~sblr_rt.stream.clock.local_clock` at the
            loss, ``None`` while connected), ``n_reconnects``, ``outages`` (``(lost_at,
            back_at)``, ``back_at`` ``None`` while lost), ``refused`` (why a returning
            stream was refused, or ``None``), ``last_timestamp``, ``stalled_for``
            (seconds since the last chunk), ``n_stalls`` (inlet reopened after
            ``stall_timeout``), ``buffer_fill`` (fraction of the buffer holding data),
            ``name``, ``source_id``, ``running`` (the reader thread is alive).

        Raises
        ------
        RuntimeError
            If the reader thread failed (the original exception is chained).
        """
        self._raise_if_failed()
        self._check_started("status()")
        now = local_clock()
        with self._state_lock:
            status = self._common_status()
            status.update(
                state=self._state(now),
                n_samples=self.buffer.n_pushed,
                n_gaps=len(self._timeline.gaps),
                gaps=list(self._timeline.gaps),
                n_nan_samples=self._n_nan_samples,
                n_stalls=self._n_stalls,
                sfreq=self._sfreq,
                effective_sfreq=self._rate.effective_sfreq,
                rate_ok=self._rate.rate_ok,
                rate_far_off=self._rate.rate_far_off,
                last_timestamp=self._timeline.last_timestamp,
                stalled_for=None if self._last_arrival is None else now - self._last_arrival,
                buffer_fill=self.buffer.n_available / self.buffer.capacity,
            )
        return status

    def _state(self, now) -> str:
        return stream_state(
            connected=self._connected,
            connected_at=self._connected_at,
            last_arrival=self._last_arrival,
            now=now,
            sfreq=self._sfreq,
        )

    # -- setup ---------------------------------------------------------------------------
    def _configure(self, full_info):
        fmt = full_info.channel_format()
        if fmt not in FORMAT_DTYPES:
            raise TypeError(
                f"LSLSource reads numeric streams; stream {full_info.name()!r} has channel "
                f"format {FORMAT_NAMES.get(fmt, fmt)!r}. Use MarkerSource for strings."
            )
        sfreq = float(full_info.nominal_srate())
        if sfreq <= 0:
            raise ValueError(
                f"LSLSource needs a stream with a nominal sampling rate; stream "
                f"{full_info.name()!r} has an irregular rate ({sfreq:g})."
            )
        n_channels = full_info.channel_count()
        self._ch_names = channel_labels(full_info)
        self._ch_units = channel_field(full_info, "unit")
        self._ch_types = channel_field(full_info, "type")
        self._sfreq = sfreq
        self._dtype = FORMAT_DTYPES[fmt]
        capacity = max(1, math.ceil(self._buffer_seconds * sfreq))
        self.buffer = RingBuffer(n_channels, capacity, dtype=self._dtype)
        # Large enough for ~0.5 s so a reader that fell behind catches up in a few pulls.
        self._max_pull = max(64, math.ceil(0.5 * sfreq))
        self._scratch = np.empty((self._max_pull, n_channels), dtype=self._dtype)
        if self._stall_timeout == "auto":
            self._stall_timeout = stall_threshold(sfreq)
        self._gap_threshold = (
            self._gap_threshold_arg
            if self._gap_threshold_arg is not None
            else gap_threshold(sfreq)
        )
        speed = declared_speed(full_info)
        self._rate = RateMonitor(sfreq * speed, tolerance=self._rate_tolerance)
        self._timeline = StreamTimeline(sfreq * speed, self._gap_threshold, full_info.name())

    def _open_inlet(self, info, timeout):
        inlet, full_info = super()._open_inlet(info, timeout)
        np_dtype = getattr(inlet, "np_dtype", None)
        expected = FORMAT_DTYPES.get(full_info.channel_format())
        if np_dtype is not None and expected is not None and np.dtype(np_dtype) != expected:
            close_inlet(inlet)  # pragma: no cover - guards a pylsl change
            del inlet
            raise TypeError(
                f"pylsl pulls {np.dtype(np_dtype)} but the pull buffer would be {expected}."
            )
        return inlet, full_info

    def _max_buflen(self, info) -> int:
        return max(10, math.ceil(self._buffer_seconds))

    def _check_declared(self, info) -> None:
        """Refuse, before an inlet exists, a rate no amplifier gives or buffers too large.

        The memory this source would allocate for the stream (its :attr:`buffer`, the pull
        array and liblsl's queue of :meth:`_max_buflen` seconds) is estimated from the
        header and checked against :data:`~sblr_rt.io.declared_limits.MAX_DATA_BYTES`.
        """
        description = StreamDescription.from_info(info)
        sfreq = float(info.nominal_srate())
        if sfreq <= 0 or info.channel_format() not in FORMAT_DTYPES:
            return  # irregular or string: refused with its own message once opened
        check_sfreq(sfreq, what=f"LSL stream {description}")
        n_channels = info.channel_count()
        itemsize = FORMAT_DTYPES[info.channel_format()].itemsize
        ring = math.ceil(self._buffer_seconds * sfreq)
        pull = max(64, math.ceil(0.5 * sfreq))
        # liblsl allocates its queue at once: one slot of about 16 bytes per sample of
        # max_buflen seconds (at 1e9 Hz, 160 GB: the inlet then never opened)
        queued = self._max_buflen(info) * sfreq * 16
        check_allocation(
            (ring + pull) * n_channels * itemsize + queued,
            what=(
                f"LSL stream {description}: {self._buffer_seconds:g} s of buffer "
                f"('buffer_seconds') at {sfreq:g} Hz x {n_channels} channels"
            ),
        )

    def _declared_change(self, info) -> str | None:
        changes = []
        if info.channel_count() != len(self._ch_names):
            changes.append(f"{info.channel_count()} channels instead of {len(self._ch_names)}")
        if float(info.nominal_srate()) != self._sfreq:
            changes.append(f"rate {info.nominal_srate():g} Hz instead of {self._sfreq:g}")
        fmt = info.channel_format()
        if fmt not in FORMAT_DTYPES or FORMAT_DTYPES[fmt] != self._dtype:
            changes.append(
                f"channel format {FORMAT_NAMES.get(fmt)!r} instead "
                f"of {self._description.channel_format!r}"
            )
        return "; ".join(changes) or None

    def _layout_change(self, full_info) -> str | None:
        changes = []
        fmt = full_info.channel_format()
        if fmt not in FORMAT_DTYPES or FORMAT_DTYPES[fmt] != self._dtype:
            changes.append(
                f"channel format {FORMAT_NAMES.get(fmt)!r} instead "
                f"of {self._description.channel_format!r}"
            )
        if full_info.channel_count() != len(self._ch_names):
            changes.append(
                f"{full_info.channel_count()} channels instead of {len(self._ch_names)}"
            )
        else:
            labels = channel_labels(full_info)
            if labels != self._ch_names:
                diff = [(a, b) for a, b in zip(self._ch_names, labels, strict=True) if a != b]
                changes.append(f"channel labels changed (was -> now: {diff[:5]})")
        if float(full_info.nominal_srate()) != self._sfreq:
            changes.append(f"rate {full_info.nominal_srate():g} Hz instead of {self._sfreq:g}")
        units = channel_field(full_info, "unit")
        if len(units) == len(self._ch_units) and _unit_keys(units) != _unit_keys(self._ch_units):
            diff = [
                (label, a, b)
                for label, a, b in zip(self._ch_names, self._ch_units, units, strict=True)
                if a.strip().lower() != b.strip().lower()
            ]
            changes.append(f"channel units changed (channel, was -> now: {diff[:5]})")
        return "; ".join(changes) or None

    def _after_reconnect(self):
        self._timeline.reconnected()

    # -- reading (reader thread) ---------------------------------------------------------
    def _read_once(self):
        scratch = self._scratch
        if self._min_pull_interval:
            wait = self._last_pull + self._min_pull_interval - local_clock()
            if wait > 0:
                self._stop_event.wait(wait)
            self._last_pull = local_clock()
        timestamps = pull_into(
            self._inlet, scratch, self._max_pull, self._poll_timeout, self._stop_event
        )
        n_samples = len(timestamps)
        if n_samples == 0:
            self._check_stall()
            return
        timestamps = np.asarray(timestamps, dtype=np.float64)
        chunk = scratch[:n_samples].copy()
        self._handle_chunk(chunk, timestamps)

    def _handle_chunk(self, chunk, timestamps):
        """Keep a chunk: its clock read, gaps recorded, NaN counted, pushed, listeners called.

        :class:`~sblr_rt.stream.timeline.StreamTimeline` decides which samples are kept
        now (a clock jump drops the samples from it on and reopens the inlet; samples whose
        time does not advance wait for the next chunk).
        """
        if self._chunk_inlet is not self._inlet:
            self._chunk_inlet = self._inlet
            self._timeline.new_inlet()
        chunk, timestamps, jumped = self._timeline.admit(chunk, timestamps)
        if jumped:
            self._restart_after_jump()
        now = local_clock()
        if not len(timestamps):
            with self._state_lock:  # data came: the stream is not stalled
                self._last_arrival = now
                self._stall_reopened = False
            return
        n_nan = 0
        if self._dtype.kind == "f":
            n_nan = int(np.count_nonzero(np.isnan(chunk).any(axis=1)))
        first_index = self.buffer.n_pushed  # only this thread pushes
        with self._state_lock:
            gap_before = self._timeline.record(timestamps, first_index)
            if gap_before.size:
                self._rate.reset()
            self._stall_reopened = False
            self._n_nan_samples += n_nan
            self._n_chunks += 1
            self._last_arrival = now
        self.buffer.push(chunk, timestamps)
        with self._state_lock:
            self._rate.update(first_index + len(timestamps), timestamps[-1])
            self._warn_rate()
        if n_nan and now - self._nan_logged_at > 10.0:
            self._nan_logged_at = now
            logger.warning(
                "LSL stream %r sent samples with NaN (%d so far); they are buffered as is.",
                self._name,
                self._n_nan_samples,
            )
        gap_listeners = self._gap_listeners
        for callback in self._listeners:
            if callback in gap_listeners:
                callback(chunk, timestamps, gap_before)
            else:
                callback(chunk, timestamps)

    def _restart_after_jump(self):
        """Reopen the inlet, so that timestamps restart exactly on the new timeline.

        The samples from the jump on were dropped (they carry the dejitter's smeared
        times); the fresh inlet's first chunk is one gap, logged once.
        """
        old, self._inlet = self._inlet, None
        close_inlet(old)
        del old
        try:
            self._inlet, _ = self._open_inlet(self._resolved_info, timeout=1.0)
        except RuntimeError:  # pylsl's LostError, TimeoutError: the outlet is gone
            self._on_lost()

    def _warn_rate(self):
        """Log once when the effective rate leaves the tolerance (under the lock)."""
        rate = self._rate
        level = rate.news()
        if level is None:
            return
        # Against the declared rate times the declared replay speed (rate.sfreq).
        speed = rate.sfreq / self._sfreq
        logger.warning(
            "LSL stream %r runs at %.4g Hz instead of its declared %g Hz%s (%+.1f %%)%s.",
            self._name,
            rate.effective_sfreq,
            self._sfreq,
            f" x {speed:g} (replay speed)" if speed != 1 else "",
            100 * (rate.effective_sfreq / rate.sfreq - 1),
            ": too far off for decisions" if level == "far_off" else "",
        )

    def _check_stall(self):
        if self._stall_timeout is None or self._last_arrival is None or self._stall_reopened:
            return
        silent = local_clock() - self._last_arrival
        if silent < self._stall_timeout:
            return
        old, self._inlet = self._inlet, None
        close_inlet(old)
        del old
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

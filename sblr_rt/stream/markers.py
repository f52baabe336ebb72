"""Markers: an LSL marker source, and markers placed on the EEG sample grid.

:class:`MarkerSource` reads a marker stream (string or numeric, irregular rate) with the
inlet life cycle of :class:`~sblr_rt.stream._base.BaseSource` and queues its markers with
their clock-corrected LSL timestamps. :func:`align_markers` places them on the sample grid
of an EEG :class:`~sblr_rt.stream.RingBuffer` (e.g. :attr:`LSLSource.buffer`).

Examples
--------
>>> markers = MarkerSource(source_id="cues-1").start()  # doctest: +SKIP
>>> aligned, pending = align_markers(markers.pop(), eeg.buffer)  # doctest: +SKIP
"""

from __future__ import annotations

import collections
import dataclasses
import logging

import numpy as np

from sblr_rt.stream._base import MARKER_PROCESSING_FLAGS, BaseSource
from sblr_rt.stream._info import (
    FORMAT_NAMES,
    StreamDescription,
    channel_labels,
    is_decision_stream,
)
from sblr_rt.stream._liblsl import pylsl

__all__ = ["AlignedMarker", "MarkerSource", "align_markers", "marker_value"]

logger = logging.getLogger("sblr_rt.stream")

#: Undecodable markers logged one by one; after these, every 100th.
_UNDECODABLE_LOGGED = 10


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


class MarkerSource(BaseSource):
    """An LSL marker stream (string or numeric), read by a background thread.

    Markers are queued with their clock-corrected LSL timestamps until :meth:`pop`.
    One-channel streams give scalar values (``str``, ``int`` or ``float``), wider ones
    tuples. Place them on the EEG sample grid with :func:`align_markers`.

    Parameters
    ----------
    name : str | None
        Stream name to match.
    stype : str | None
        Stream type to match, in any case. None: ``"Markers"`` unless ``name`` is
        given, then any type (mne-lsl's ``annotations``, OpenViBE's ``marker``).
    source_id : str | None
        ``source_id`` to match. Without it, two matching streams are refused.
    timeout : float
        Seconds to wait for the stream in :meth:`start`.

    Notes
    -----
    Without ``name`` and ``source_id`` ("the only stream of type Markers"), sblr-rt's own
    decision outlets are left out (:func:`~sblr_rt.stream.is_decision_stream`): a running
    ``SBLR-Predictions`` does not make the choice ambiguous. Name it to read it.

    Examples
    --------
    >>> markers = MarkerSource(source_id="cues-1").start()  # doctest: +SKIP
    >>> markers.pop()  # doctest: +SKIP
    [(5321.204, 'left'), (5325.210, 'right')]
    """

    _kind = "marker stream"
    _processing_flags = MARKER_PROCESSING_FLAGS
    _default_type = "Markers"

    def __init__(self, *, name=None, stype=None, source_id=None, timeout=5.0):
        super().__init__(name=name, stype=stype, source_id=source_id, timeout=timeout)
        self._queue = collections.deque()
        self._n_markers = 0
        self._n_undecodable = 0  # markers skipped: not valid UTF-8
        self._format = None
        self._n_channels = None
        self._labels = None

    def __repr__(self) -> str:
        state = "connected" if self._connected else ("lost" if self._started else "not started")
        return f"<MarkerSource | {self._criteria()} | {state}>"

    def _exact(self, infos):
        infos = super()._exact(infos)
        if self._name is None and self._source_id is None:
            infos = [i for i in infos if not is_decision_stream(StreamDescription.from_info(i))]
        return infos

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
            popped), ``n_undecodable`` (string markers that were not valid UTF-8: logged
            and skipped), ``lost_since``, ``n_reconnects``, ``outages``, ``refused``,
            ``name``, ``source_id``, ``running``.
        """
        self._raise_if_failed()
        self._check_started("status()")
        with self._state_lock:
            status = self._common_status()
            status.update(
                n_markers=self._n_markers,
                n_pending=len(self._queue),
                n_undecodable=self._n_undecodable,
            )
        return status

    def _configure(self, full_info):
        self._format = full_info.channel_format()
        self._n_channels = full_info.channel_count()
        self._labels = None
        if self._n_channels > 1 and self._format != pylsl.cf_string:
            self._labels = channel_labels(full_info)  # one-hot events: see marker_value

    def _layout_change(self, full_info) -> str | None:
        if (
            full_info.channel_format() != self._format
            or full_info.channel_count() != self._n_channels
        ):
            return (
                f"{full_info.channel_count()} {FORMAT_NAMES.get(full_info.channel_format())} "
                f"channels instead of {self._n_channels} "
                f"{FORMAT_NAMES.get(self._format)}"
            )
        return None

    def _read_once(self):
        # Markers are sparse: block on one, then drain what is already there.
        timeout = self._poll_timeout
        while True:
            try:
                sample, timestamp = self._inlet.pull_sample(timeout=timeout)
            except UnicodeDecodeError as err:  # pylsl decodes after taking the sample
                self._undecodable(err)
                timeout = 0.0
                continue
            if sample is None:
                return
            timeout = 0.0
            value = marker_value(sample, self._labels)
            for callback in self._listeners:
                callback(timestamp, value)
            self._queue.append((timestamp, value))
            with self._state_lock:
                self._n_markers += 1

    def _undecodable(self, err: UnicodeDecodeError) -> None:
        """Count and log a marker that is not UTF-8; the session goes on without it."""
        with self._state_lock:
            self._n_undecodable += 1
            n = self._n_undecodable
        if n <= _UNDECODABLE_LOGGED or n % 100 == 0:
            logger.warning(
                "Marker stream %r sent a marker that is not valid UTF-8 (%r); skipped (%d "
                "so far%s).",
                self._name,
                bytes(err.object[:40]),
                n,
                ", logged every 100th from now" if n == _UNDECODABLE_LOGGED else "",
            )


def marker_value(sample, labels=None):
    """Return the value of one marker sample, numbers as plain Python numbers.

    A one-channel sample gives its value: a string as it is, an integral number as an
    ``int`` (an int32 ``3`` and a float ``3.0`` are both the marker ``3``, so that they map
    to the class ``"3"`` as the string ``"3"`` does), any other number as a ``float``. A
    numeric sample of several channels whose channel ``labels`` are known and where exactly
    one channel is non-zero is that channel's label: mne-lsl's player sends each
    annotation that way (one channel per description, the value its duration, ``-1`` for
    none). Any other sample gives the tuple of its values.

    Parameters
    ----------
    sample : sequence
        One sample as pulled from the inlet.
    labels : list of str | None
        Channel labels of a numeric stream of several channels.

    Returns
    -------
    value : str | int | float | tuple

    Examples
    --------
    >>> marker_value([3.0]), marker_value(["left"]), marker_value([0.0, -1.0], ["T1", "T2"])
    (3, 'left', 'T2')
    """
    if len(sample) == 1:
        value = sample[0]
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    values = tuple(v.item() if isinstance(v, np.generic) else v for v in sample)
    if labels is not None and len(labels) == len(values):
        hot = [k for k, v in enumerate(values) if not isinstance(v, str) and v != 0 and v == v]
        if len(hot) == 1:
            return labels[hot[0]]
    return values


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

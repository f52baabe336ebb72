"""LSL outlets: EEG and markers (the decision streams are in :mod:`.decision_outlets`).

Thin, checked wrappers around :class:`pylsl.StreamOutlet` with the project's conventions
(see ``DESIGN.md``): EEG streams carry their channel labels, units and types in
``desc/channels/channel``; markers and predictions are irregular string streams of type
``Markers``; predictions are one JSON object per decision (``SBLR-Predictions``). Beside
them, :class:`ProbabilityOutlet` publishes the same decisions as numbers (float32, one
channel per class, stamped with the window's end) for consumers that read numeric streams
(OpenViBE's LSL input, Timeflux, mne-lsl, feedback programs).

Our decision outlets are never taken for a cue stream (:func:`is_decision_stream`).
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Sequence

import numpy as np

from sblr_rt.stream._info import resolve_predicate
from sblr_rt.stream._liblsl import pylsl

logger = logging.getLogger("sblr_rt.stream")

__all__ = ["EEGOutlet", "MarkerOutlet", "Outlet", "check_str", "stream_channel_info"]


def stream_channel_info(
    *, source_id: str, name: str | None = None, timeout: float = 5.0
) -> list[dict[str, str]]:
    """Return the ``desc/channels/channel`` entries of the stream with ``source_id``.

    Parameters
    ----------
    source_id : str
        The stream's ``source_id``.
    name : str | None
        And its name: two streams may share a ``source_id`` (mne-lsl's player gives its
        EEG and its annotations the same one).
    timeout : float
        Seconds to wait for the stream and its full description.

    Returns
    -------
    channels : list of dict
        One dict per channel with its ``label``, ``unit`` and ``type`` (``""`` where the
        stream gives none); empty if the stream has no channel description.
    """
    check_str(source_id, "source_id")
    if name is None:
        infos = pylsl.resolve_byprop("source_id", source_id, 1, timeout)
    else:
        predicate = resolve_predicate(check_str(name, "name"), None, source_id)
        infos = pylsl.resolve_bypred(predicate, 1, timeout) if predicate else []
        infos = [i for i in infos if i.name() == name and i.source_id() == source_id]
    if not infos:
        what = f"source_id {source_id!r}" + ("" if name is None else f" and name {name!r}")
        raise TimeoutError(f"no LSL stream with {what} within {timeout} s")
    inlet = pylsl.StreamInlet(infos[0])
    try:
        info = inlet.info(timeout=timeout)
    finally:
        del inlet
    channels, out = info.desc().child("channels").child("channel"), []
    while not channels.empty():
        out.append({key: channels.child_value(key) for key in ("label", "unit", "type")})
        channels = channels.next_sibling("channel")
    return out


#: Numeric sample formats an :class:`EEGOutlet` accepts, by numpy dtype name.
_DTYPES = {
    "float32": pylsl.cf_float32,
    "float64": pylsl.cf_double64,
    "int16": pylsl.cf_int16,
    "int32": pylsl.cf_int32,
}


def check_str(value, name: str, *, allow_empty: bool = False) -> str:
    """Return ``value`` if it is a (non-empty) str; raise TypeError/ValueError otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a str, got {type(value).__name__}")
    if not allow_empty and not value:
        raise ValueError(f"'{name}' must be a non-empty string, got ''")
    return value


class Outlet:
    """Common lifetime management of one :class:`pylsl.StreamOutlet`."""

    _outlet: pylsl.StreamOutlet | None = None

    def _get(self) -> pylsl.StreamOutlet:
        if self._outlet is None:
            raise RuntimeError(
                f"{type(self).__name__} {self.name!r} is closed; create a new outlet to push"
            )
        return self._outlet

    def have_consumers(self) -> bool:
        """Return whether at least one inlet is connected.

        Returns
        -------
        connected : bool
            True if an inlet is currently connected to this outlet.
        """
        return self._get().have_consumers()

    def wait_for_consumers(self, timeout: float) -> bool:
        """Block until an inlet connects or ``timeout`` seconds pass.

        Parameters
        ----------
        timeout : float
            Longest wait in seconds.

        Returns
        -------
        connected : bool
            True if an inlet connected in time, False if the wait timed out.
        """
        if not isinstance(timeout, numbers.Real) or not timeout >= 0:
            raise ValueError(
                f"'timeout' must be a non-negative number of seconds, got {timeout!r}"
            )
        return self._get().wait_for_consumers(float(timeout))

    @property
    def info(self) -> pylsl.StreamInfo:
        """The stream's :class:`pylsl.StreamInfo` as published."""
        return self._get().get_info()

    def close(self) -> None:
        """Destroy the outlet; it is no longer discoverable. Calling twice is harmless."""
        outlet, self._outlet = self._outlet, None
        if outlet is not None:
            del outlet  # liblsl destroys the outlet when the last reference goes

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._outlet is None else "open"
        return f"<{type(self).__name__} {self.name!r} source_id={self.source_id!r} {state}>"


class EEGOutlet(Outlet):
    """A regularly sampled multi-channel LSL outlet (type ``EEG`` by default).

    Parameters
    ----------
    name : str
        Stream name.
    ch_names : sequence of str, length n_channels
        Channel labels, written to ``desc/channels/channel/label``.
    sfreq : float
        Nominal sampling rate in Hz (> 0).
    source_id : str
        Unique identifier of the source; an inlet reconnects to an outlet with the same
        ``source_id`` after the stream comes back.
    stype : str
        Stream content type.
    dtype : str
        Sample format on the wire: ``"float32"``, ``"float64"``, ``"int16"`` or ``"int32"``.
    chunk_size : int
        Preferred chunk granularity in samples, 0 to send each push as one chunk.
    unit : str
        Unit of every channel written to ``desc/channels/channel/unit`` (e.g. ``"volts"``,
        ``"microvolts"``).
    ch_types : str | sequence of str
        Channel type(s) written to ``desc/channels/channel/type`` (``"EEG"`` by default).
    max_buffered : float
        Seconds of data the outlet keeps for slow consumers.
    speed : float
        Playback speed of a replay (written to ``desc/acquisition/speed``): samples come at
        ``sfreq * speed`` per second of LSL time, and consumers expect that rate.

    Examples
    --------
    >>> import numpy as np
    >>> outlet = EEGOutlet(name="demo", ch_names=["C3", "C4"], sfreq=100.0,
    ...                    source_id="doc-eeg-outlet")
    >>> outlet.push_chunk(np.zeros((10, 2)))
    >>> outlet.close()
    """

    def __init__(
        self,
        *,
        name: str,
        ch_names: Sequence[str],
        sfreq: float,
        source_id: str,
        stype: str = "EEG",
        dtype: str = "float32",
        chunk_size: int = 0,
        unit: str = "volts",
        ch_types: str | Sequence[str] = "EEG",
        max_buffered: float = 60.0,
        speed: float = 1.0,
    ) -> None:
        self.name = check_str(name, "name")
        self.source_id = check_str(source_id, "source_id")
        self.stype = check_str(stype, "stype", allow_empty=True)
        if isinstance(ch_names, str) or not isinstance(ch_names, Sequence):
            raise TypeError(f"'ch_names' must be a sequence of str, got {type(ch_names).__name__}")
        ch_names = list(ch_names)
        if not ch_names or not all(isinstance(ch, str) for ch in ch_names):
            raise ValueError(f"'ch_names' must be a non-empty list of str, got {ch_names!r}")
        self.ch_names = ch_names
        if not isinstance(sfreq, numbers.Real) or not (math.isfinite(sfreq) and sfreq > 0):
            raise ValueError(f"'sfreq' must be a positive finite number in Hz, got {sfreq!r}")
        self.sfreq = float(sfreq)
        if dtype not in _DTYPES:
            raise ValueError(f"'dtype' must be one of {sorted(_DTYPES)}, got {dtype!r}")
        self.dtype = np.dtype(dtype)
        if not isinstance(chunk_size, numbers.Integral) or chunk_size < 0:
            raise ValueError(f"'chunk_size' must be a non-negative int, got {chunk_size!r}")
        if isinstance(ch_types, str):
            ch_types = [ch_types] * len(ch_names)
        ch_types = list(ch_types)
        if len(ch_types) != len(ch_names):
            raise ValueError(
                f"'ch_types' must have one entry per channel ({len(ch_names)}), "
                f"got {len(ch_types)}"
            )
        self.unit = check_str(unit, "unit")
        info = pylsl.StreamInfo(
            name=self.name,
            type=self.stype,
            channel_count=len(ch_names),
            nominal_srate=self.sfreq,
            channel_format=_DTYPES[dtype],
            source_id=self.source_id,
        )
        channels = info.desc().append_child("channels")
        for label, ch_type in zip(ch_names, ch_types, strict=True):
            channel = channels.append_child("channel")
            channel.append_child_value("label", label)
            channel.append_child_value("unit", self.unit)
            channel.append_child_value("type", ch_type)
        if not isinstance(speed, numbers.Real) or not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"'speed' must be a positive finite number, got {speed!r}")
        self.speed = float(speed)
        acquisition = info.desc().append_child("acquisition")
        acquisition.append_child_value("manufacturer", "sblr-rt")
        # A replay faster than real time says so, so that a consumer expects its samples at
        # sfreq * speed and does not take the acceleration for a wrong rate.
        acquisition.append_child_value("speed", repr(self.speed))
        self._n_channels = len(ch_names)
        self._outlet = pylsl.StreamOutlet(info, int(chunk_size), max(1, round(max_buffered)))
        logger.debug("EEGOutlet %r (%s): %d ch @ %g Hz", name, source_id, len(ch_names), sfreq)

    @property
    def n_channels(self) -> int:
        """Number of channels."""
        return self._n_channels

    def push_chunk(self, data, timestamps=None) -> None:
        """Push samples.

        Parameters
        ----------
        data : array-like, shape (n_samples, n_channels)
            Samples in rows; converted to the outlet's dtype.
        timestamps : None | float | array-like, shape (n_samples,)
            None: the last sample is stamped with
            :func:`~sblr_rt.stream.clock.local_clock` now and the others are deduced from
            the nominal rate. A float: the LSL time of the last sample (others deduced).
            An array: the LSL time of every sample.
        """
        outlet = self._get()
        data = np.asarray(data)
        if data.ndim != 2 or data.shape[1] != self._n_channels:
            raise ValueError(
                f"'data' must have shape (n_samples, {self._n_channels}), got {data.shape}"
            )
        if data.shape[0] == 0:
            return
        data = np.ascontiguousarray(data, dtype=self.dtype)
        if timestamps is None:
            outlet.push_chunk(data)
        elif isinstance(timestamps, numbers.Real):
            outlet.push_chunk(data, float(timestamps))
        else:
            timestamps = np.asarray(timestamps, dtype=np.float64)
            if timestamps.shape != (data.shape[0],):
                raise ValueError(
                    f"'timestamps' must have shape ({data.shape[0]},) like the rows of "
                    f"'data', got {timestamps.shape}"
                )
            outlet.push_chunk(data, timestamps.tolist())


class MarkerOutlet(Outlet):
    """An irregular single-channel string outlet for event markers.

    Parameters
    ----------
    name : str
        Stream name.
    source_id : str
        Unique identifier of the source.
    stype : str
        Stream content type.

    Examples
    --------
    >>> markers = MarkerOutlet(name="demo-markers", source_id="doc-marker-outlet")
    >>> markers.push("left")
    >>> markers.close()
    """

    def __init__(self, *, name: str, source_id: str, stype: str = "Markers") -> None:
        self.name = check_str(name, "name")
        self.source_id = check_str(source_id, "source_id")
        self.stype = check_str(stype, "stype", allow_empty=True)
        info = pylsl.StreamInfo(
            name=self.name,
            type=self.stype,
            channel_count=1,
            nominal_srate=pylsl.IRREGULAR_RATE,
            channel_format=pylsl.cf_string,
            source_id=self.source_id,
        )
        info.desc().append_child("channels").append_child("channel").append_child_value(
            "label", "Marker"
        )
        self._outlet = pylsl.StreamOutlet(info)

    def push(self, value: str, timestamp: float | None = None) -> None:
        """Push one marker.

        Parameters
        ----------
        value : str
            The marker.
        timestamp : float | None
            LSL time of the event (e.g. the timestamp of the EEG sample it belongs to);
            :func:`~sblr_rt.stream.clock.local_clock` now when None.
        """
        outlet = self._get()
        if not isinstance(value, str):
            raise TypeError(f"'value' must be a str, got {type(value).__name__}")
        if timestamp is None:
            outlet.push_sample([value])
        else:
            if not isinstance(timestamp, numbers.Real):
                raise TypeError(f"'timestamp' must be a float, got {type(timestamp).__name__}")
            outlet.push_sample([value], float(timestamp))

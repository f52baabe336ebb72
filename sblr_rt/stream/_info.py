"""What LSL says about streams: their description, the visible streams, channel metadata.

Everything here reads :class:`pylsl.StreamInfo` objects; nothing opens an inlet. The
sources (:mod:`sblr_rt.stream._base` and its subclasses) resolve with these helpers.
"""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np

from sblr_rt.stream._liblsl import pylsl

__all__ = [
    "MARKER_SUFFIXES",
    "StreamDescription",
    "companion_marker_stream",
    "is_decision_stream",
    "is_marker_stream",
    "resolve_streams",
]

#: Default name of the decision outlets (the JSON one; the numeric one adds ``-Numeric``).
DECISION_NAME = "SBLR-Predictions"
#: Start of the default ``source_id`` of every decision outlet of sblr-rt.
DECISION_SOURCE_PREFIX = "sblr-rt-decisions"

logger = logging.getLogger("sblr_rt.stream")

FORMAT_DTYPES = {
    pylsl.cf_float32: np.dtype(np.float32),
    pylsl.cf_double64: np.dtype(np.float64),
    pylsl.cf_int8: np.dtype(np.int8),
    pylsl.cf_int16: np.dtype(np.int16),
    pylsl.cf_int32: np.dtype(np.int32),
    pylsl.cf_int64: np.dtype(np.int64),
}
FORMAT_NAMES = {
    pylsl.cf_float32: "float32",
    pylsl.cf_double64: "double64",
    pylsl.cf_string: "string",
    pylsl.cf_int8: "int8",
    pylsl.cf_int16: "int16",
    pylsl.cf_int32: "int32",
    pylsl.cf_int64: "int64",
}

# pylsl >= 1.18 can wait for the first sample and then drain (``min_samples``) and return


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
            channel_format=FORMAT_NAMES.get(info.channel_format(), "undefined"),
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
        Keep only streams with this name / type (any case) / source_id; ``None`` keeps
        all.
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
    name, stype, source_id = check_identifiers(name, stype, source_id)
    timeout = check_timeout(timeout)
    infos = pylsl.resolve_streams(wait_time=timeout)
    found = [StreamDescription.from_info(info) for info in infos]
    found = [s for s in found if matches(s, name, stype, source_id)]
    return sorted(found, key=lambda s: (s.name, s.stype, s.source_id, s.uid))


def is_decision_stream(description) -> bool:
    """Return whether a stream is one of sblr-rt's own decision outlets.

    THE rule by which ``run``, ``record`` and the marker sources leave our outlets out
    when they pick "the only stream of type Markers": the stream's name starts with
    ``SBLR-Predictions``, or its ``source_id`` starts with ``sblr-rt-decisions`` (the
    default of every decision outlet, whatever its name;
    :func:`~sblr_rt.stream.decision_outlets.decision_source_id`). Only header fields are read:
    a resolved stream does not carry its description.

    Parameters
    ----------
    description : StreamDescription | pylsl.StreamInfo
        The stream.

    Returns
    -------
    ours : bool
    """
    if not isinstance(description, StreamDescription):
        description = StreamDescription.from_info(description)
    return description.name.startswith(DECISION_NAME) or description.source_id.startswith(
        DECISION_SOURCE_PREFIX
    )


# -- channel metadata and resolution criteria ---------------------------------------------
def channel_labels(info) -> list[str]:
    """Return ``desc/channels/channel/label`` per channel (``"0"``, ``"1"``, ... if incomplete)."""
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


def channel_field(info, field) -> list[str]:
    """Return ``desc/channels/channel/<field>`` per channel (``""`` where absent)."""
    values = []
    channel = info.desc().child("channels").child("channel")
    while not channel.empty() and len(values) < info.channel_count():
        values.append(channel.child_value(field))
        channel = channel.next_sibling("channel")
    return values + [""] * (info.channel_count() - len(values))


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: The stream type as the resolve predicate compares it: ASCII letters in lower case.
_TYPE_LOWER = f"translate(type,'{_UPPER}','{_UPPER.lower()}')"


def resolve_predicate(name, stype, source_id) -> str:
    """Return the XPath predicate of :func:`pylsl.resolve_bypred` for these criteria.

    The type is compared without regard to case (``eeg`` finds ``EEG``), as
    :func:`matches` does.
    """
    parts = []
    criteria = (
        ("name", name),
        (_TYPE_LOWER, None if stype is None else stype.lower()),
        ("source_id", source_id),
    )
    for key, value in criteria:
        if value is None:
            continue
        if "'" not in value:
            parts.append(f"{key}='{value}'")
        elif '"' not in value:
            parts.append(f'{key}="{value}"')
        # a value with both quote kinds is matched in Python only (see matches)
    return " and ".join(parts)


def matches(description, name, stype, source_id) -> bool:
    """Return whether a :class:`StreamDescription` meets the criteria (None: any).

    Names and ``source_id`` match exactly, the type without regard to case (mne-lsl's
    player says ``eeg``, most amplifiers ``EEG``).
    """
    return (
        (name is None or description.name == name)
        and (stype is None or description.stype.lower() == stype.lower())
        and (source_id is None or description.source_id == source_id)
    )


#: Names of an EEG stream's own marker stream, most usual first: ``<name>-Markers`` (our
#: replay and simulator), ``<name>-annotations`` (mne-lsl's player).
MARKER_SUFFIXES = ("-Markers", "-annotations")


def companion_marker_stream(eeg_name: str, streams) -> StreamDescription | None:
    """Return the marker stream named after an EEG stream (:data:`MARKER_SUFFIXES`).

    Parameters
    ----------
    eeg_name : str
        The EEG stream's name.
    streams : iterable of StreamDescription
        The visible streams (:func:`resolve_streams`), of any type.

    Returns
    -------
    stream : StreamDescription | None
        The first suffix's stream that is there; None if none is.
    """
    streams = list(streams)
    for suffix in MARKER_SUFFIXES:
        for s in streams:
            if s.name == eeg_name + suffix:
                return s
    return None


#: Stream types (lower case) that carry events rather than signals: LSL's ``Markers``,
#: OpenViBE's ``marker``, mne-lsl's ``annotations``.
MARKER_TYPES = frozenset({"markers", "marker", "annotations", "events", "stimulus"})


def is_marker_stream(description) -> bool:
    """Return whether a stream looks like events rather than a signal.

    A string stream, an irregular one (nominal rate 0), or one whose type is a marker type
    (:data:`MARKER_TYPES`, any case). The dashboard sorts the streams it lists by this
    rule; the sources take any stream they are told to by name or type.

    Parameters
    ----------
    description : StreamDescription
        The stream.

    Returns
    -------
    events : bool
    """
    return (
        description.channel_format == "string"
        or not description.sfreq > 0
        or description.stype.lower() in MARKER_TYPES
    )


# -- parameter checks shared by the sources ------------------------------------------------
def check_identifiers(name, stype, source_id):
    """Check that the stream criteria are str or None; return them."""
    for key, value in (("name", name), ("stype", stype), ("source_id", source_id)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"'{key}' must be a str or None, got {type(value).__name__}.")
    return name, stype, source_id


def check_timeout(timeout) -> float:
    """Check a timeout in seconds (positive, finite); return it as float."""
    return check_positive_float(timeout, "timeout")


def check_positive_float(value, key) -> float:
    """Check that parameter ``key`` is a positive finite number; return it as float."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"'{key}' must be a number, got {type(value).__name__} {value!r}.")
    value = float(value)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"'{key}' must be a positive finite number, got {value!r}.")
    return value


def check_pull_interval(value) -> float:
    """Check ``min_pull_interval``: a number of seconds in [0, 1); return it as float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"'min_pull_interval' must be a number, got {type(value).__name__}.")
    if not 0 <= value < 1:
        raise ValueError(f"'min_pull_interval' must be in [0, 1) seconds, got {value!r}.")
    return float(value)

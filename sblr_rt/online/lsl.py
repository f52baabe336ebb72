"""The LSL collaborators of the online loop: EEG and marker sources, decision outlet, clock.

Built through the :mod:`sblr_rt.stream` facade (the only layer that talks to pylsl), for
:meth:`OnlineLoop.from_lsl <sblr_rt.online.OnlineLoop.from_lsl>`.
"""

from __future__ import annotations

import dataclasses

from sblr_rt.utils._docs import fill_doc
from sblr_rt.validation.constraints import apply_constraints, boolean, number, text

#: The decision outlets' name unless a session is given one (``<name>-Numeric`` for numbers).
DEFAULT_OUTLET_NAME = "SBLR-Predictions"

__all__ = [
    "DEFAULT_OUTLET_NAME",
    "STREAMS_RULES",
    "LSLDecisionSink",
    "LSLStreams",
    "lsl_collaborators",
]


class LSLDecisionSink:
    """Publish decisions on the LSL outlets opened at start: JSON and numeric.

    Parameters
    ----------
    name : str
        Name of the JSON outlet (:class:`~sblr_rt.stream.PredictionOutlet`).
    source_id : str | None
        Its ``source_id`` (default: :func:`~sblr_rt.stream.decision_source_id` of the
        name, which keeps it out of the marker streams ``run`` and ``record`` pick).
    classes : sequence of str | None
        The model's classes: a :class:`~sblr_rt.stream.ProbabilityOutlet` named
        ``<name>-Numeric`` (``source_id`` ``<source_id>-numeric``) publishes each decision
        as numbers too. None: the JSON outlet only.
    """

    def __init__(
        self, name: str = DEFAULT_OUTLET_NAME, source_id: str | None = None, classes=None
    ) -> None:
        from sblr_rt.stream import decision_source_id

        self.name = name
        self.source_id = source_id or decision_source_id(name)
        self.classes = None if classes is None else [str(c) for c in classes]
        self.numeric_name = f"{name}-Numeric"
        self.numeric_source_id = f"{self.source_id}-numeric"
        self._outlet = None
        self._numeric = None

    def open(self) -> None:
        """Create the outlets (they become visible on the network).

        Raises
        ------
        RuntimeError
            If a stream with the name and ``source_id`` of one of the outlets is already on
            the network (another session's: :func:`~sblr_rt.stream.check_outlet_names_free`);
            nothing is created.
        """
        from sblr_rt.stream import PredictionOutlet, ProbabilityOutlet, check_outlet_names_free

        outlets = [(self.name, self.source_id)]
        if self.classes is not None:
            outlets.append((self.numeric_name, self.numeric_source_id))
        check_outlet_names_free(outlets)
        self._outlet = PredictionOutlet(name=self.name, source_id=self.source_id)
        if self.classes is not None:
            try:
                self._numeric = ProbabilityOutlet(
                    self.classes, name=self.numeric_name, source_id=self.numeric_source_id
                )
            except BaseException:
                self.close()
                raise

    def push(self, decision: dict) -> None:
        """Publish one decision's public part as JSON and as numbers.

        The part :meth:`Decision.public <sblr_rt.online.decision.Decision.public>` gives.
        """
        self._outlet.push(decision)
        if self._numeric is not None:
            self._numeric.push(decision)

    def close(self) -> None:
        """Destroy the outlets."""
        for attr in ("_numeric", "_outlet"):
            outlet = getattr(self, attr)
            setattr(self, attr, None)
            if outlet is not None:
                outlet.close()


@fill_doc
@dataclasses.dataclass(frozen=True)
class LSLStreams:
    """The LSL streams of an online loop: the EEG and marker inlets, the decision outlets.

    Parameters
    ----------
    %(stream)s
    stype : str | None
        The EEG stream's type (any case); with no name, ``EEG``.
    %(source_id)s
    marker_stream, marker_stype, marker_source_id : str | None
        The marker stream of trial mode, chosen the same way (``marker_stype`` defaults to
        ``Markers``).
    outlet : bool
        Publish the decisions (:class:`LSLDecisionSink`).
    outlet_name : str
        Name of the JSON outlet; the numeric one is ``<outlet_name>-Numeric``.
    outlet_source_id : str | None
        Its ``source_id`` (default: :func:`~sblr_rt.stream.decision_source_id` of the name).
    %(timeout)s
    buffer_seconds : float | None
        Raw samples kept; None: 4 windows of the model, at least 30 s.

    Raises
    ------
    TypeError, ValueError
        If a field breaks its rule (:data:`STREAMS_RULES`): a name that is not a string,
        a ``timeout`` or ``buffer_seconds`` that is not a positive number of seconds.
    """

    stream: str | None = None
    stype: str | None = None
    source_id: str | None = None
    marker_stream: str | None = None
    marker_stype: str | None = None
    marker_source_id: str | None = None
    outlet: bool = True
    outlet_name: str = DEFAULT_OUTLET_NAME
    outlet_source_id: str | None = None
    timeout: float = 5.0
    buffer_seconds: float | None = None

    def __post_init__(self):
        apply_constraints(self, STREAMS_RULES)


_NAME = text(none=True)
#: What each field of :class:`LSLStreams` accepts (:mod:`sblr_rt.validation.constraints`):
#: ``timeout`` in the range of ``--timeout``, ``buffer_seconds`` of any length the
#: source can allocate (:class:`~sblr_rt.stream.LSLSource` checks the bytes).
STREAMS_RULES = {
    "stream": _NAME,
    "stype": _NAME,
    "source_id": _NAME,
    "marker_stream": _NAME,
    "marker_stype": _NAME,
    "marker_source_id": _NAME,
    "outlet": boolean(),
    "outlet_name": text(non_empty=True),
    "outlet_source_id": _NAME,
    "timeout": number(limit="seconds"),
    "buffer_seconds": number(limit="seconds", none=True),
}


def lsl_collaborators(classifier, streams: LSLStreams | None = None, *, trial: bool = False):
    """Build the LSL source, marker source, sink and clock of an online loop (not started).

    Parameters
    ----------
    classifier : OnlineClassifier
        The loop's classifier (its window length sizes the buffer; its classes name the
        numeric outlet's channels).
    streams : LSLStreams | None
        The streams; None: the defaults (the first EEG stream, the first marker stream).
    trial : bool
        Build a marker source (trial mode).

    Returns
    -------
    source : LSLSource
        The EEG source, keeping ``buffer_seconds`` of samples (default 4 windows, >= 30 s).
    markers : MarkerSource | None
        The marker source (trial mode).
    sink : LSLDecisionSink | None
        The decision outlets, JSON and numeric (None when ``outlet`` is False).
    clock : callable
        :func:`sblr_rt.stream.clock.local_clock`.
    """
    from sblr_rt.stream import LSLSource, MarkerSource, local_clock

    s = LSLStreams() if streams is None else streams
    buffer_seconds = s.buffer_seconds
    if buffer_seconds is None:
        buffer_seconds = max(30.0, 4 * classifier.n_times_raw / classifier.sfreq)
    source = LSLSource(
        name=s.stream,
        stype=s.stype,
        source_id=s.source_id,
        timeout=s.timeout,
        buffer_seconds=float(buffer_seconds),
    )
    markers = None
    if trial:
        markers = MarkerSource(
            name=s.marker_stream,
            stype=s.marker_stype,
            source_id=s.marker_source_id,
            timeout=s.timeout,
        )
    sink = None
    if s.outlet:
        sink = LSLDecisionSink(s.outlet_name, s.outlet_source_id, classes=classifier.classes)
    return source, markers, sink, local_clock

"""The LSL collaborators of the online loop: EEG and marker sources, decision outlet, clock.

Built through the :mod:`sblr_rt.stream` facade (the only layer that talks to pylsl), for
:meth:`OnlineLoop.from_lsl <sblr_rt.online.OnlineLoop.from_lsl>`.
"""

from __future__ import annotations

__all__ = ["LSLDecisionSink", "lsl_collaborators"]


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
        self, name: str = "SBLR-Predictions", source_id: str | None = None, classes=None
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
        """Create the outlets (they become visible on the network)."""
        from sblr_rt.stream import PredictionOutlet, ProbabilityOutlet

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
        """Publish one decision (``label, proba, window_end, trial, cue``, ...)."""
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


def lsl_collaborators(
    classifier,
    *,
    stream=None,
    stype=None,
    source_id=None,
    trial=False,
    marker_stream=None,
    marker_stype=None,
    marker_source_id=None,
    outlet=True,
    outlet_name="SBLR-Predictions",
    outlet_source_id=None,
    timeout=5.0,
    buffer_seconds=None,
):
    """Build the LSL source, marker source, sink and clock of an online loop (not started).

    Parameters are those of :meth:`OnlineLoop.from_lsl`; ``trial`` asks for a marker source.
    A stream chosen by name is taken whatever its type; ``stype`` and ``marker_stype``
    (any case) choose by type, and default to ``EEG`` and ``Markers`` when no name is
    given.

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

    if not timeout > 0:
        raise ValueError(f"'timeout' must be > 0, got {timeout!r}.")
    if buffer_seconds is None:
        buffer_seconds = max(30.0, 4 * classifier.n_times / classifier.sfreq)
    source = LSLSource(
        name=stream,
        stype=stype,
        source_id=source_id,
        timeout=timeout,
        buffer_seconds=float(buffer_seconds),
    )
    markers = None
    if trial:
        markers = MarkerSource(
            name=marker_stream, stype=marker_stype, source_id=marker_source_id, timeout=timeout
        )
    sink = None
    if outlet:
        sink = LSLDecisionSink(outlet_name, outlet_source_id, classes=classifier.classes)
    return source, markers, sink, local_clock

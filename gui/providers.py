"""Snapshot providers for the Live tab besides the online loop itself.

The Live tab polls any object with ``snapshot(channels=None) -> Telemetry`` (see
:meth:`sblr_rt.online.loop.OnlineLoop.snapshot`). With a model, that is the loop; without
one, :class:`SourceProvider` shows the traces of a bare :class:`~sblr_rt.stream.LSLSource`;
in a session that adapts, :class:`AdaptingSession` is the loop with its adapter.
"""

from __future__ import annotations

import logging

import numpy as np

from sblr_rt.online.lsl import DEFAULT_OUTLET_NAME

logger = logging.getLogger("sblr_rt.gui")


def open_provider(
    desc,
    markers,
    model,
    *,
    hop,
    adapt=None,
    model_path=None,
    rename=None,
    outlet_name=DEFAULT_OUTLET_NAME,
):
    """Open what the Live tab polls for a stream: traces, a loop, or a loop that adapts.

    Parameters
    ----------
    desc : StreamDescription
        The EEG stream.
    markers : StreamDescription | None
        The cue stream (trial mode), or None (sliding windows only).
    model : BCIModel | None
        None: traces only (:class:`SourceProvider`).
    hop : float
        Seconds between sliding-window decisions.
    adapt : dict | None
        With ``markers`` and ``model_path``: adapt the model during the session
        (:meth:`sblr_rt.calibration.adapt.Adapter.for_model_file` keywords).
    model_path : str | Path | None
        The model's file (where an adapting session's versions go by default).
    rename : ChannelRenaming | None
        Stream label -> model label, applied before the stream is matched to the model.
    outlet_name : str
        The loop's decision outlets (``outlet_name`` and ``<outlet_name>-Numeric``).

    Returns
    -------
    provider : SourceProvider | OnlineLoop | AdaptingSession
        Started.
    """
    if model is None:
        return SourceProvider(name=desc.name, source_id=desc.source_id).start()
    from sblr_rt.online import OnlineLoop, freeze_heap

    kwargs = {}
    if markers is not None:
        kwargs = dict(mode="trial", marker_stream=markers.name, marker_source_id=markers.source_id)
    adapting = adapt is not None and markers is not None and bool(model_path)
    loop = OnlineLoop.from_lsl(
        model,
        stream=desc.name,
        source_id=desc.source_id,
        hop=hop,
        keep_trials=adapting,
        rename_channels=rename,
        outlet_name=outlet_name,
        **kwargs,
    )
    loop.start()
    freeze_heap()  # no full garbage-collection pass over the startup objects mid-session
    if not adapting:
        return loop
    from sblr_rt.calibration.adapt import Adapter

    try:
        adapter = Adapter.for_model_file(loop, model, model_path, **adapt)
        return AdaptingSession(loop, adapter.start())
    except Exception:
        loop.stop()
        raise


class AdaptingSession:
    """An online loop and the adapter that refits its model, polled and stopped as one.

    The loop's snapshot carries the adaptation's state (``Telemetry.adaptation``: model
    version, refits, failures, cues naming no class), which the Live tab's status line
    shows.

    Parameters
    ----------
    loop : OnlineLoop
        A started loop built with ``keep_trials=True``.
    adapter : sblr_rt.calibration.adapt.Adapter
        Its started adapter.
    """

    def __init__(self, loop, adapter) -> None:
        self.loop, self.adapter = loop, adapter

    def snapshot(self, channels=None, **kwargs):
        """Return the loop's snapshot (see :meth:`OnlineLoop.snapshot`)."""
        return self.loop.snapshot(channels, **kwargs)

    def __getattr__(self, name):
        return getattr(self.loop, name)

    def stop(self) -> None:
        """Stop the adapter (ending a running refit), then the loop."""
        try:
            self.adapter.stop()
        finally:
            self.loop.stop()


class SourceProvider:
    """Traces and stream status of an LSL EEG stream, without classification.

    Parameters
    ----------
    name : str | None
        Stream name.
    source_id : str | None
        Its ``source_id``.
    stype : str | None
        Its type.
    display_sfreq : float
        Rate of the traces handed to the dashboard (every k-th sample).
    display_seconds : float
        Seconds of traces handed to the dashboard.
    timeout : float
        Seconds :meth:`start` waits for the stream.
    """

    def __init__(
        self,
        *,
        name=None,
        source_id=None,
        stype="EEG",
        display_sfreq: float = 100.0,
        display_seconds: float = 10.0,
        timeout: float = 5.0,
    ):
        from sblr_rt.stream import LSLSource

        self.display_sfreq = float(display_sfreq)
        self.display_seconds = float(display_seconds)
        self.source = LSLSource(
            name=name,
            stype=stype,
            source_id=source_id,
            timeout=timeout,
            buffer_seconds=max(30.0, self.display_seconds),
        )

    def start(self) -> SourceProvider:
        """Resolve the stream and start reading (blocks up to ``timeout``: use a worker)."""
        self.source.start()
        return self

    def stop(self) -> None:
        """Stop reading."""
        self.source.stop()

    def snapshot(self, channels=None, *, n_decisions=None):
        """Return the stream's state and recent samples (no decisions).

        Parameters
        ----------
        channels : list of str | None
            Channels to return; all when None.
        n_decisions : int | None
            Ignored (no decisions here).

        Returns
        -------
        snapshot : Telemetry
            ``time``, ``running``, ``stream``, ``raw``, ``gaps``, ``n_gaps`` as in
            ``OnlineLoop.snapshot()``; ``mode`` None (no decisions).
        """
        from sblr_rt.online.telemetry import RawTraces, StreamTelemetry, Telemetry
        from sblr_rt.stream import local_clock

        source = self.source
        status = source.status()
        ch_names = list(source.ch_names)
        sfreq = float(source.sfreq)
        step = max(1, round(sfreq / self.display_sfreq)) if sfreq > 0 else 1
        buffer = source.buffer
        n = min(buffer.n_available, int(self.display_seconds * (sfreq or self.display_sfreq)))
        idx = list(range(len(ch_names)))
        if channels is not None:
            where = {c: i for i, c in enumerate(ch_names)}
            idx = [where[c] for c in channels if c in where]
        if n >= 2:
            data, times = buffer.latest(n)
            start = (n - 1) % step
            data = np.asarray(data[idx, start::step], dtype=np.float32)
            times = np.asarray(times[start::step], float)
        else:
            data, times = np.zeros((len(idx), 0), np.float32), np.zeros(0)
        return Telemetry(
            time=local_clock(),
            running=bool(status.get("running", True)),
            stream=StreamTelemetry(
                name=status.get("name") or source.name,
                source_id=status.get("source_id"),
                sfreq=sfreq,
                n_channels=len(ch_names),
                ch_names=tuple(ch_names),
                connected=bool(status.get("connected")),
                n_samples=int(status.get("n_samples", 0)),
                buffer_fill=float(status.get("buffer_fill", 0.0)),
                effective_sfreq=status.get("effective_sfreq") or float("nan"),
                **StreamTelemetry.state_of(status, bool(status.get("connected"))),
            ),
            raw=RawTraces(data, times, tuple(ch_names[i] for i in idx), sfreq / step),
            gaps=tuple(list(status.get("gaps") or [])[-20:]),
            n_gaps=int(status.get("n_gaps", 0)),
        )

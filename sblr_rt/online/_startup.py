"""Start-up of the online loop: its arguments, its collaborators, the stream's checks.

What :class:`~sblr_rt.online.loop.OnlineLoop` does before its first step and after its
last: validate the constructor's arguments, start the EEG source, check its channels and
rate (:func:`~sblr_rt.online._channels.match_stream`: the channel mapping it finds is
logged and kept for the telemetry) and its units
(:func:`~sblr_rt.online.units.check_stream_units`) against the model, start the marker
source and open the sink (closing what was opened if any of it fails), and close them.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from sblr_rt.online._channels import match_stream
from sblr_rt.online.scheduler import Scheduler
from sblr_rt.online.units import UNIT_MISMATCH, check_stream_units

logger = logging.getLogger("sblr_rt.online")

__all__ = ["build_scheduler", "check_arguments", "close", "open_collaborators", "stream_label"]

MODES = ("sliding", "trial")


def check_arguments(mode, hop, markers, unit_mismatch, display_sfreq) -> float:
    """Validate the loop's arguments (see :class:`~sblr_rt.online.loop.OnlineLoop`).

    Returns
    -------
    hop : float
        ``hop`` as a float.

    Raises
    ------
    ValueError
        If ``mode``, ``hop``, ``unit_mismatch`` or ``display_sfreq`` is out of range, or
        ``markers`` is None in trial mode.
    """
    if mode not in MODES:
        raise ValueError(f"'mode' must be one of {MODES}, got {mode!r}.")
    hop = float(hop)
    if not math.isfinite(hop) or hop < 0:
        raise ValueError(f"'hop' must be a finite number of seconds >= 0, got {hop!r}.")
    if mode == "sliding" and hop == 0:
        raise ValueError("'hop' must be > 0 in sliding mode (0 turns sliding off), got 0.")
    if mode == "trial" and markers is None:
        raise ValueError("'markers' must be a marker source in trial mode, got None.")
    if unit_mismatch not in UNIT_MISMATCH:
        raise ValueError(f"'unit_mismatch' must be one of {UNIT_MISMATCH}, got {unit_mismatch!r}.")
    if not display_sfreq > 0:
        raise ValueError(f"'display_sfreq' must be > 0, got {display_sfreq!r}.")
    return hop


def stream_label(source) -> str:
    """Return how the logs and errors name the EEG stream of ``source``."""
    name = getattr(source, "name", None)
    return f"EEG stream {name!r}" if name else "the EEG stream"


def open_collaborators(classifier, source, markers, sink, *, unit_mismatch, label):
    """Start the source, check it against the model, start the markers, open the sink.

    Parameters
    ----------
    classifier : OnlineClassifier
        The loop's classifier.
    source, markers, sink : object
        The loop's collaborators (``markers`` and ``sink`` may be None).
    unit_mismatch : {"rescale", "refuse"}
        See :func:`~sblr_rt.online.units.check_stream_units`.
    label : str
        The stream's name in messages (:func:`stream_label`).

    Returns
    -------
    pick : list of int | None
        The stream's channels the model reads, in the model's order (None: all, as is).
    scale : float | None
        Factor from the stream's unit to the model's, or None.
    channels : ChannelMatch
        Which stream channel feeds each model channel, and by which label rule
        (:func:`sblr_rt.io.labels.match_channels`).

    Raises
    ------
    ValueError
        From the stream checks; whatever was started is closed first.
    """
    opened = []
    try:
        _start(source, opened)
        channels = match_stream(
            classifier, list(source.ch_names), float(source.sfreq), stream=label
        )
        pick = None if channels.identity else np.array(channels.picks, dtype=np.intp)
        scale = unit_scale(classifier, source, pick, unit_mismatch, label)
        _start(markers, opened)
        if sink is not None and hasattr(sink, "open"):
            sink.open()
    except BaseException:
        for obj in reversed(opened):
            close(obj)
        raise
    return pick, scale, channels


def build_scheduler(classifier, source, pick, telemetry, clock, sink, *, hop, label, **kwargs):
    """Build the loop's :class:`~sblr_rt.online.scheduler.Scheduler` on a started source.

    Parameters
    ----------
    classifier : OnlineClassifier
        The loop's classifier; its streaming state is sized here.
    source : object
        The started EEG source (``buffer``, optional ``gap_indices``).
    pick, telemetry, clock, sink, label
        As the scheduler takes them.
    hop : float
        Seconds between sliding decisions (0: none).
    **kwargs
        ``on_chunk`` and ``scale``, passed on.

    Returns
    -------
    scheduler : Scheduler
    """
    sfreq, n_times = classifier.sfreq, classifier.n_times
    # Room for a window plus 5 s (at least a window) for cues whose marker arrives
    # late (a marker inlet's first clock sync can take a while; replays run faster
    # than real time) and for slow worker cycles.
    capacity = int(n_times + max(5.0 * sfreq, n_times))
    hop_samples = max(1, round(hop * sfreq)) if hop > 0 else 0
    return Scheduler(
        classifier.streaming(capacity=capacity),
        source.buffer,
        pick,
        telemetry,
        clock,
        sink,
        hop_samples,
        label,
        gap_indices=getattr(source, "gap_indices", None),
        **kwargs,
    )


def unit_scale(classifier, source, pick, unit_mismatch, label):
    units = getattr(source, "ch_units", None)
    if units is not None:
        units = list(units)
        units = units if pick is None else [units[i] for i in pick]
    metadata = getattr(classifier.model, "metadata", None) or {}
    return check_stream_units(
        metadata.get("unit"), units, unit_mismatch=unit_mismatch, stream=label
    )


def _start(obj, opened: list) -> None:
    if obj is not None and hasattr(obj, "start"):
        obj.start()
        opened.append(obj)


def close(obj) -> None:
    """Stop or close ``obj``; log, never raise, if that fails."""
    try:
        if hasattr(obj, "stop"):
            obj.stop()
        elif hasattr(obj, "close"):
            obj.close()
    except Exception:
        logger.exception("Closing %r failed.", obj)

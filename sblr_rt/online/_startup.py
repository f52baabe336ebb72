"""Start-up of the online loop: its collaborators, the stream's checks, the scheduler.

What :class:`~sblr_rt.online.loop.OnlineLoop` does before its first step and after its
last: start the EEG source, check its channels and rate
(:func:`~sblr_rt.online._channels.match_stream`: the channel mapping it finds is logged and
kept for the telemetry) and its units (:func:`~sblr_rt.online.stream_units.check_stream_units`)
against the model, start the marker source and open the sink (closing what was opened if
any of it fails), build the scheduler, and close them.
"""

from __future__ import annotations

import logging

import numpy as np

from sblr_rt.online._channels import match_stream
from sblr_rt.online.scheduler import Scheduler, stream_label
from sblr_rt.online.stream_units import check_stream_units
from sblr_rt.online.streaming import StreamFeed
from sblr_rt.utils._docs import fill_doc

logger = logging.getLogger("sblr_rt.online")

__all__ = ["build_scheduler", "close", "open_collaborators", "stream_feed", "stream_label"]


@fill_doc
def stream_feed(classifier, source, unit_mismatch: str, *, rename=None):
    """Check a started source against the model: its channels, rate and units.

    Parameters
    ----------
    classifier : OnlineClassifier
        The model's classifier (its channels, rate and :attr:`run_info
        <sblr_rt.online.OnlineClassifier.run_info>` unit).
    source : object
        The EEG source: ``ch_names``, ``sfreq``, optional ``ch_units`` and ``name``.
    %(unit_mismatch)s
    rename : ChannelRenaming | None
        Stream label -> model label, applied before matching (:func:`match_stream`).

    Returns
    -------
    feed : StreamFeed
        The stream's channels the model reads, in the model's order, and the unit factor.
    channels : ChannelMatch
        Which stream channel feeds each model channel, and by which label rule
        (:func:`sblr_rt.io.labels.match_channels`).

    Raises
    ------
    ValueError
        If the rate differs, channels are missing, or the units differ and
        ``unit_mismatch`` is ``"refuse"``.
    """
    label = stream_label(source)
    channels = match_stream(
        classifier, list(source.ch_names), float(source.sfreq), stream=label, rename=rename
    )
    pick = None if channels.identity else np.array(channels.picks, dtype=np.intp)
    units = getattr(source, "ch_units", None)
    if units is not None:
        units = list(units)
        units = units if pick is None else [units[i] for i in pick]
    scale = check_stream_units(
        _model_unit(classifier), units, unit_mismatch=unit_mismatch, stream=label
    )
    return StreamFeed(pick, scale), channels


def _model_unit(classifier):
    run_info = getattr(classifier, "run_info", None)
    return None if run_info is None else run_info.unit


@fill_doc
def open_collaborators(classifier, source, markers, sink, *, unit_mismatch, rename=None):
    """Start the source, check it against the model, start the markers, open the sink.

    Parameters
    ----------
    classifier : OnlineClassifier
        The loop's classifier.
    source, markers, sink : object
        The loop's collaborators (``markers`` and ``sink`` may be None).
    %(unit_mismatch)s
    rename : ChannelRenaming | None
        See :func:`stream_feed`.

    Returns
    -------
    feed : StreamFeed
        See :func:`stream_feed`.
    channels : ChannelMatch
        See :func:`stream_feed`.

    Raises
    ------
    ValueError
        From the stream checks; whatever was started is closed first.
    """
    opened = []
    try:
        _start(source, opened)
        feed, channels = stream_feed(classifier, source, unit_mismatch, rename=rename)
        _start(markers, opened)
        if sink is not None and hasattr(sink, "open"):
            sink.open()
    except BaseException:
        for obj in reversed(opened):
            close(obj)
        raise
    return feed, channels


def build_scheduler(classifier, source, feed, outputs, *, hop, evidence, model_version):
    """Build the loop's :class:`~sblr_rt.online.scheduler.Scheduler` on a started source.

    Parameters
    ----------
    classifier : OnlineClassifier
        The loop's classifier; its streaming state is sized here.
    source : object
        The started EEG source (``buffer``, optional ``gap_indices``).
    feed, outputs, evidence, model_version
        As the scheduler takes them.
    hop : float
        Seconds between sliding decisions (0: none).

    Returns
    -------
    scheduler : Scheduler
    """
    sfreq, n_times = classifier.sfreq, classifier.n_times_raw
    # Room for a window plus 5 s (at least a window) for cues whose marker arrives
    # late (a marker inlet's first clock sync can take a while; replays run faster
    # than real time) and for slow worker cycles.
    capacity = int(n_times + max(5.0 * sfreq, n_times))
    return Scheduler(
        classifier.streaming(capacity=capacity),
        source,
        feed,
        outputs,
        hop_samples=max(1, round(hop * sfreq)) if hop > 0 else 0,
        evidence=evidence,
        model_version=model_version,
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

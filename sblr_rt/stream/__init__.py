"""Streams: the ring buffer, LSL inputs (EEG and markers) and LSL outlets.

:class:`RingBuffer` is numpy only. Everything else talks to Lab Streaming Layer and is
loaded on first use, so that ``import sblr_rt.stream.ring_buffer`` (and this package)
never imports pylsl.

Examples
--------
>>> from sblr_rt.stream import RingBuffer
>>> RingBuffer(118, 30_000)
<RingBuffer | 118 channels, 0/30000 samples, 0 pushed, float64>
"""

import importlib

from sblr_rt.stream.ring_buffer import RingBuffer

_LAZY = {
    "AlignedMarker": "sblr_rt.stream.markers",
    "LSLSource": "sblr_rt.stream.eeg_source",
    "MarkerSource": "sblr_rt.stream.markers",
    "StreamDescription": "sblr_rt.stream._info",
    "resolve_streams": "sblr_rt.stream._info",
    "align_markers": "sblr_rt.stream.markers",
    "EEGOutlet": "sblr_rt.stream.outlets",
    "MarkerOutlet": "sblr_rt.stream.outlets",
    "PredictionOutlet": "sblr_rt.stream.decision_outlets",
    "ProbabilityOutlet": "sblr_rt.stream.decision_outlets",
    "decision_source_id": "sblr_rt.stream.decision_outlets",
    "check_outlet_names_free": "sblr_rt.stream.decision_outlets",
    "is_decision_stream": "sblr_rt.stream._info",
    "is_marker_stream": "sblr_rt.stream._info",
    "companion_marker_stream": "sblr_rt.stream._info",
    "stream_channel_info": "sblr_rt.stream.outlets",
    "local_clock": "sblr_rt.stream.clock",
}

__all__ = ["RingBuffer", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sblr_rt.stream' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

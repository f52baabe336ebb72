"""Online classification: a pure ``step(window)`` and the loop that runs it on a stream.

- ``classifier.py`` (numpy only): :class:`OnlineClassifier` wraps a trained
  :class:`~sblr_rt.bci_model.BCIModel`; ``step(window) -> decision`` is a pure function of
  a raw window; :meth:`~OnlineClassifier.streaming` gives a :class:`StreamingState`.
- ``streaming.py``: :class:`StreamingState`, samples in and decisions on any recent window
  out (indices, timestamps, invalid samples, breaks), driving one incremental form.
- ``incremental/``: the incremental forms, one :class:`IncrementalForm` subclass each (projected
  waveform, filtered band power, filtered spectral, filtered covariance, the ensemble's
  weighted members, plain), registered in :data:`FORMS`.
- ``scheduler.py``: one scheduling step (ingest, gaps, sliding hops, trial windows).
- ``loop.py``: :class:`OnlineLoop`, the collaborators (source, markers, sink, clock), the
  worker thread and the model swaps of a session that adapts; :meth:`OnlineLoop.from_lsl`
  builds the LSL ones (``lsl.py``, :class:`LSLStreams`).
- ``settings.py``: :class:`OnlineSettings` (what the loop decides, when) and
  :class:`DisplaySettings` (what its snapshot keeps).
- ``run_info.py``: :class:`RunInfo`, what the loop reads from a model file (unit,
  calibration markers, smoothing, rejection settings, version), read once.
- ``decision.py``: :class:`Decision`, one window's decision, and its two encodings (JSON,
  numbers).
- ``telemetry.py``: counters and latency statistics; :class:`Telemetry`, the snapshot.
- ``cues.py``: which markers start a trial.
- ``evidence.py``: the evidence accumulated over a trial (smoothed probabilities, early
  decisions).
- ``stream_units.py``: the stream's unit against the model's (normalised spellings, the factor).
- ``heap.py``: :func:`freeze_heap`, so that the garbage collector's full passes do not
  stall a live process.
- ``_channels.py``: the stream's channels and rate against the model's (labels matched by
  :func:`sblr_rt.io.labels.match_channels`, the mapping logged).
"""

from sblr_rt.online.classifier import (
    OnlineClassifier,
    check_stream_info,
    decision_to_json,
    match_stream,
    public_decision,
)
from sblr_rt.online.decision import Decision
from sblr_rt.online.evidence import Evidence, Smoothing
from sblr_rt.online.heap import freeze_heap
from sblr_rt.online.incremental import FORMS, IncrementalForm
from sblr_rt.online.loop import OnlineLoop
from sblr_rt.online.lsl import DEFAULT_OUTLET_NAME, LSLStreams
from sblr_rt.online.run_info import RunInfo
from sblr_rt.online.settings import DisplaySettings, OnlineSettings
from sblr_rt.online.stream_units import check_stream_units, normalize_unit, unit_factor
from sblr_rt.online.streaming import StreamingState
from sblr_rt.online.telemetry import Telemetry

__all__ = [
    "DEFAULT_OUTLET_NAME",
    "FORMS",
    "Decision",
    "DisplaySettings",
    "Evidence",
    "IncrementalForm",
    "LSLStreams",
    "OnlineClassifier",
    "OnlineLoop",
    "OnlineSettings",
    "RunInfo",
    "Smoothing",
    "StreamingState",
    "Telemetry",
    "check_stream_info",
    "check_stream_units",
    "decision_to_json",
    "freeze_heap",
    "match_stream",
    "normalize_unit",
    "public_decision",
    "unit_factor",
]

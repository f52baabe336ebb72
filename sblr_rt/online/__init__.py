"""Online classification: a pure ``step(window)`` and the loop that runs it on a stream.

- :class:`OnlineClassifier` (``classifier.py``, numpy only): wraps a trained
  :class:`~sblr_rt.bci_model.BCIModel`; ``step(window) -> decision`` is a pure function of a
  raw window, with the folded fast path on the waveform features, and
  :meth:`~OnlineClassifier.streaming` gives the sample-by-sample fast path (projection onto
  the spatial factors, or band-pass once per sample).
- :class:`OnlineLoop` (``loop.py``): LSL EEG (and marker) stream in, decisions out on the
  ``SBLR-Predictions`` outlet, with ``start``/``stop``, a context manager and
  :meth:`~OnlineLoop.snapshot` for the dashboard. LSL is loaded only when a loop starts.
"""

from .classifier import OnlineClassifier, StreamingState, check_stream_info, public_decision
from .loop import OnlineLoop, decision_to_json

__all__ = [
    "OnlineClassifier",
    "OnlineLoop",
    "StreamingState",
    "check_stream_info",
    "decision_to_json",
    "public_decision",
]

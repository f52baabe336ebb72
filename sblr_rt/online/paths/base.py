"""The interface of a streaming feature path: samples in, scores of any recent window out.

A path owns the per-sample state of one way of computing the model's scores as samples
arrive (projected virtual channels, filtered band power, raw samples, ...). Everything
that is the same for every path (absolute sample indices, timestamps, non-finite samples,
breaks, which windows may be classified) lives in
:class:`~sblr_rt.online.streaming.StreamingState`, which drives the path.

To add a path: write a subclass in a module of this package, give it a ``name`` (and, for
a model's default fast path, the preprocessor ``features`` it serves), and register it in
:mod:`sblr_rt.online.paths` (``PATHS``). Nothing else changes.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import numpy as np

from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["StreamingPath", "skip_rows"]


def skip_rows(ring: RingBuffer, n: int) -> None:
    """Advance ``ring`` by ``n`` zero rows without allocating them (lost samples)."""
    if n > 0:
        rows = np.broadcast_to(np.zeros(1, ring.dtype), (n, ring.n_channels))
        ring.push(rows, None)


class StreamingPath(abc.ABC):
    """One streaming computation of the model's scores.

    Parameters
    ----------
    classifier : OnlineClassifier
        The classifier (its public factors and preprocessor).
    capacity : int
        Samples of history the path must keep (at least one raw window).

    Notes
    -----
    Samples are addressed by absolute index from 0, as in the driving state: the ``k``-th
    sample pushed (or skipped) has index ``k``. The state hands the path finite samples
    only (non-finite ones are zeroed and remembered by the state), so a path never sees
    NaN or inf.
    """

    #: Name of the path (``StreamingState.path``).
    name: ClassVar[str] = ""
    #: The preprocessor ``features`` whose fast path this is (None: any model).
    features: ClassVar[str | None] = None

    def __init__(self, classifier, capacity: int) -> None:
        self.classifier = classifier
        self.capacity = int(capacity)

    @classmethod
    def check_model(cls, classifier) -> None:
        """Raise ValueError if this path cannot compute the classifier's scores."""
        if cls.features is not None and classifier.features != cls.features:
            raise ValueError(
                f"'path'={cls.name!r} needs the {cls.features} feature path, got "
                f"features={classifier.features!r}"
            )

    @abc.abstractmethod
    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels), model channel order."""

    @abc.abstractmethod
    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (no window will span them)."""

    def mark_break(self) -> None:  # noqa: B027 - most paths keep no state across samples
        """Note a discontinuity before the next sample (a path with running state resets)."""

    def settle(self) -> None:  # noqa: B027 - most paths defer no work
        """Run work deferred to a moment when no decision waits (the loop calls it)."""

    @abc.abstractmethod
    def scores(self, stop: int) -> np.ndarray:
        """Return the scores, shape (n_outputs,), of the raw window ending before ``stop``.

        The driving state has checked that the window is held and whole.
        """

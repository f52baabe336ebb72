"""Switching the online loop to a new model between two decisions, without a gap.

A model's streaming state is model-specific (the projected form buffers the samples
projected on *its* spatial factors), so a new model cannot take over the old state. Instead
:func:`prepare_swap` builds the new model's state **off the decision thread**: it reads the
last ``capacity`` raw samples the scheduler has already ingested from the source's ring
buffer (thread-safe for readers) and feeds them, with the same gap rule
(:meth:`Scheduler.feed_state <sblr_rt.online.scheduler.Scheduler.feed_state>`), into a
fresh state. The scheduler adopts the :class:`PreparedSwap` at the start of its next step:
it feeds the few samples that arrived in between, re-bases its indices and continues. The
new state holds the same history as the old one, so the next sliding hop and every pending
trial window are decided by the new model, and nothing is skipped.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from sblr_rt.online.run_info import RunInfo
from sblr_rt.online.streaming import StreamFeed

logger = logging.getLogger("sblr_rt.online")

__all__ = ["PreparedSwap", "SwapSlot", "model_version_of", "prepare_swap"]


def model_version_of(model) -> int:
    """Return the version counter a model file carries, else 0.

    See :attr:`RunInfo.version <sblr_rt.online.run_info.RunInfo.version>`.
    """
    return RunInfo.from_model(model).version


@dataclass(frozen=True)
class PreparedSwap:
    """A new model's classifier and streaming state, filled up to raw index ``n_in``.

    The scheduler adopts it between two steps (:meth:`Scheduler.step
    <sblr_rt.online.scheduler.Scheduler.step>`): it feeds the samples that arrived since
    ``n_in`` and takes the state over.

    Attributes
    ----------
    classifier : OnlineClassifier
        The new model's classifier.
    state : StreamingState
        Its streaming state; state index 0 is raw index ``offset``.
    offset, n_in : int
        Raw (ring buffer) index of the state's sample 0, and of the next sample to feed.
    last_ts : float | None
        Timestamp of the last sample fed.
    feed : StreamFeed
        The stream's channels in the new model's order, and the unit factor.
    version : int
        The model version decisions will name.
    """

    classifier: object
    state: object
    offset: int
    n_in: int
    last_ts: float | None
    feed: StreamFeed
    version: int


def prepare_swap(classifier, scheduler, *, feed, version) -> PreparedSwap:
    """Build ``classifier``'s streaming state on the samples ``scheduler`` already ingested.

    Runs on any thread but the decision thread (it reads the ring buffer only).

    Parameters
    ----------
    classifier : OnlineClassifier
        The new model's classifier (same raw channels and rate as the stream).
    scheduler : Scheduler
        The running loop's scheduler (its buffer, capacity, ingest position, gap rule).
    feed : StreamFeed
        The stream's channels in the new model's order and the unit factor
        (:func:`~sblr_rt.online._startup.stream_feed`).
    version : int
        The version decisions of this model will name.

    Returns
    -------
    prepared : PreparedSwap
    """
    capacity = scheduler.state.capacity
    state = classifier.streaming(capacity=capacity)
    buffer = scheduler.buffer
    for _ in range(5):  # the writer may overwrite the start between the two reads
        end = scheduler.n_in
        start = max(buffer.first_index, end - capacity)
        try:
            last = scheduler.feed_state(state, start, end, feed, None)
            break
        except ValueError:
            state = classifier.streaming(capacity=capacity)
    else:  # pragma: no cover - the writer outran five reads of a >= 30 s buffer
        raise RuntimeError("could not read the recent samples to prepare the new model")
    return PreparedSwap(classifier, state, start, end, last, feed, int(version))


class SwapSlot:
    """One pending model hand-over, put by any thread, taken by the decision thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: PreparedSwap | None = None

    def put(self, prepared: PreparedSwap) -> None:
        """Offer ``prepared``; a newer offer replaces one not yet taken."""
        with self._lock:
            self._pending = prepared

    def take(self) -> PreparedSwap | None:
        """Return and clear the pending hand-over (None: nothing pending)."""
        if self._pending is None:  # the common case, without the lock
            return None
        with self._lock:
            prepared, self._pending = self._pending, None
        return prepared

    @property
    def pending(self) -> bool:
        """Whether a hand-over waits for the decision thread."""
        return self._pending is not None

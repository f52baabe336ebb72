"""Switching the online loop to a new model between two decisions, without a gap.

A model's streaming state is model-specific (the waveform path buffers the samples
projected on *its* spatial factors), so a new model cannot take over the old state. Instead
:func:`prepare_swap` builds the new model's state **off the decision thread**: it reads the
last ``capacity`` raw samples the scheduler has already ingested from the source's ring
buffer (thread-safe for readers) and feeds them, with the same gap rule, into a fresh state.
The scheduler then adopts it at the start of its next step (:meth:`PreparedSwap.adopt`):
it feeds the few samples that arrived in between, re-bases its indices and continues. The
new state holds the same history as the old one, so the next sliding hop and every pending
trial window are decided by the new model, and nothing is skipped.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from sblr_rt.io.gaps import find_gaps

logger = logging.getLogger("sblr_rt.online")

__all__ = ["PreparedSwap", "SwapSlot", "model_version_of", "prepare_swap"]


def model_version_of(model) -> int:
    """Return the version counter a model file carries (``metadata["adaptation"]``), else 0."""
    metadata = getattr(model, "metadata", None) or {}
    adaptation = metadata.get("adaptation") or {}
    try:
        return int(adaptation.get("version", 0))
    except (TypeError, ValueError):
        return 0


def _feed(state, buffer, start, stop, pick, scale, gap_indices, threshold, last_ts):
    """Push raw samples ``[start, stop)`` of ``buffer`` into ``state``; return the last time.

    The gaps are found by the same rule as :meth:`Scheduler.ingest` (the source's own
    ``gap_indices`` or :func:`~sblr_rt.io.gaps.find_gaps`), without logging or counting
    them again: the scheduler already did when it ingested these samples.
    """
    if stop <= start:
        return last_ts
    chunk, ts = buffer.get(start, stop)
    data = chunk.T
    if gap_indices is not None:
        gap_at = gap_indices(start, stop) - start
    else:
        gap_at = find_gaps(ts, last=last_ts, threshold=threshold)
    picked = data if pick is None else data[:, pick]
    if scale is not None:
        picked = picked * scale
    first = 0
    for g in gap_at:
        state.push(picked[first:g], ts[first:g])
        state.mark_break()
        first = g
    state.push(picked[first:], ts[first:])
    return float(ts[-1])


@dataclass
class PreparedSwap:
    """A new model's classifier and streaming state, filled up to raw index ``n_in``.

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
    pick, scale
        The stream's channels in the new model's order, and the unit factor.
    version : int
        The model version decisions will name.
    """

    classifier: object
    state: object
    offset: int
    n_in: int
    last_ts: float | None
    pick: object
    scale: object
    version: int

    def adopt(self, scheduler) -> bool:
        """Catch up with the scheduler's ingested samples and take over its state.

        Called on the decision thread, between two steps. Returns False (and leaves the
        scheduler as it was) when the samples in between were overwritten meanwhile.
        """
        try:
            self.last_ts = _feed(
                self.state,
                scheduler.buffer,
                self.n_in,
                scheduler.n_in,
                self.pick,
                self.scale,
                scheduler.gap_indices,
                scheduler.gap_threshold,
                self.last_ts,
            )
        except ValueError:
            return False
        old_offset = scheduler.offset
        scheduler.state = self.state
        scheduler.offset = self.offset
        scheduler.pick, scheduler.scale = self.pick, self.scale
        if scheduler.next_slide is not None:  # state indices, re-based
            scheduler.next_slide += old_offset - self.offset
        scheduler.model_version = self.version
        return True


def prepare_swap(classifier, scheduler, *, pick, scale, version) -> PreparedSwap:
    """Build ``classifier``'s streaming state on the samples ``scheduler`` already ingested.

    Runs on any thread but the decision thread (it reads the ring buffer only).

    Parameters
    ----------
    classifier : OnlineClassifier
        The new model's classifier (same raw channels and rate as the stream).
    scheduler : Scheduler
        The running loop's scheduler (its buffer, capacity, ingest position, gap rule).
    pick, scale
        The stream's channels in the new model's order and the unit factor
        (:func:`~sblr_rt.online._startup.open_collaborators`' rules).
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
            last = _feed(
                state,
                buffer,
                start,
                end,
                pick,
                scale,
                scheduler.gap_indices,
                scheduler.gap_threshold,
                None,
            )
            break
        except ValueError:
            state = classifier.streaming(capacity=capacity)
    else:  # pragma: no cover - the writer outran five reads of a >= 30 s buffer
        raise RuntimeError("could not read the recent samples to prepare the new model")
    return PreparedSwap(classifier, state, start, end, last, pick, scale, int(version))


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

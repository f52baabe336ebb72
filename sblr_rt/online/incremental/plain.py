"""The plain incremental form: raw samples buffered, the offline pipeline on each window."""

from __future__ import annotations

import numpy as np

from sblr_rt.online.incremental.form import IncrementalForm, Scoring, skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["PlainForm"]


class PlainForm(IncrementalForm):
    """Buffer raw samples; a decision runs the offline pipeline (:meth:`Scoring.plain_scores`).

    The reference against which the fast forms are checked; any model.
    """

    name = "plain"

    def __init__(self, scoring: Scoring, capacity: int) -> None:
        super().__init__(scoring, capacity)
        self._ring = RingBuffer(scoring.n_channels, self.capacity)

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        self._ring.push(chunk, None)

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples."""
        skip_rows(self._ring, n)

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        window, _ = self._ring.get(stop - self.scoring.n_times_raw, stop)
        return self.scoring.plain_scores(window)

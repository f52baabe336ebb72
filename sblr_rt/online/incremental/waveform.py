"""The projected waveform form: each sample projected onto the folded spatial factors."""

from __future__ import annotations

import numpy as np

from sblr_rt.online.incremental.form import IncrementalForm, Scoring, skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["ProjectedForm"]


class ProjectedForm(IncrementalForm):
    """Waveform features: buffer ``r`` virtual channels per output, not the raw channels.

    Every waveform step is linear, so the model folds into native-rate factors
    ``score = tr(U_n^T X_raw V_n) + b`` (:attr:`Scoring.native`). Each
    sample is projected onto ``U_n`` as it arrives; a decision is ``r`` dot products of
    length ``n_times`` with ``V_n``. The FIR filter is folded into ``V_n``: no filter state.
    """

    name = "projected"
    features = "waveform"

    def __init__(self, scoring: Scoring, capacity: int) -> None:
        super().__init__(scoring, capacity)
        # (n_channels, n_outputs * rank) and (n_times, n_outputs * rank)
        self._spatial, temporal = scoring.folded("native_spatial")
        # (n_outputs * rank, n_times), rows contiguous: a decision is one small product
        self._temporal_t = np.ascontiguousarray(temporal.T)
        self._ring = RingBuffer(self._spatial.shape[1], self.capacity, mirrored=True)

    @property
    def n_columns(self) -> int:
        """Virtual channels buffered per sample (``n_outputs * rank``)."""
        return self._spatial.shape[1]

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        self._ring.push(chunk @ self._spatial, None)

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples."""
        skip_rows(self._ring, n)

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        rows = self._ring.rows(stop - self.scoring.n_times_raw, stop)  # (n_times, K r), a view
        # The diagonal of V_n^T P (K r x K r, BLAS) beats an einsum over the long axis.
        cols = np.diagonal(self._temporal_t @ rows)
        return self.scoring.scores_from_columns(cols)

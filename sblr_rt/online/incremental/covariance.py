"""The filtered covariance form: each sample band-pass filtered once, covariance on demand."""

from __future__ import annotations

import numpy as np

from sblr_rt.online.incremental._fir_bank import PickedFilterBank
from sblr_rt.online.incremental.base import IncrementalForm, Scoring, skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["FilteredCovarianceForm"]


class FilteredCovarianceForm(IncrementalForm):
    """Covariance features: filter once per sample, the window's covariance at a decision.

    Each picked sample goes through the spatial stage and the band-pass as it arrives (a
    partitioned-FFT filter bank, as the band-power form), and the filtered samples are
    buffered. A decision reads the last ``n_window`` filtered rows and applies the
    preprocessor's own rules (shrunk covariance, matrix log, scaling) and the factors, so
    the scores equal the offline pipeline's; the window is never filtered twice.

    Parameters
    ----------
    scoring, capacity, filtered_input
        As for :class:`~sblr_rt.online.incremental.bandpower.FilteredBandPowerForm`.
    """

    name = "filtered-covariance"
    features = "covariance"

    reads_filters = True

    def __init__(self, scoring: Scoring, capacity: int, *, filtered_input=None) -> None:
        super().__init__(scoring, capacity)
        self._pre = scoring.preprocessor
        self._input = PickedFilterBank(self._pre) if filtered_input is None else filtered_input
        self._bank = self._input.bank
        self._ring = RingBuffer(self._input.n_columns, self.capacity)

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        for filtered in self._input.pieces(chunk):
            self._ring.push(filtered, None)

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (the filters restart: every window has warm-up)."""
        skip_rows(self._ring, n)
        self._bank.reset()

    def settle(self) -> None:
        """Run the filter bank's deferred work (while no decision waits)."""
        self._bank.settle()

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        window, _ = self._ring.get(stop - self._pre.n_window, stop)  # (n_picks, n_window)
        X = self._pre.transform_filtered(window[None])[0]
        return self.scoring.scores_from_features(X)

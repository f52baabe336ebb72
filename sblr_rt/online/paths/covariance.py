"""The filtered covariance path: each sample band-pass filtered once, covariance on demand."""

from __future__ import annotations

import numpy as np

from sblr_rt.online.paths._fir_bank import PartitionedFirBank
from sblr_rt.online.paths.base import StreamingPath, skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["FilteredCovariancePath"]


class FilteredCovariancePath(StreamingPath):
    """Covariance features: filter once per sample, the window's covariance at a decision.

    Each picked sample goes through the spatial stage and the band-pass as it arrives (a
    partitioned-FFT filter bank, as the band-power path), and the filtered samples are
    buffered. A decision reads the last ``n_window`` filtered rows and applies the
    preprocessor's own rules (shrunk covariance, matrix log, scaling) and the factors, so
    the scores equal the offline pipeline's; the window is never filtered twice.
    """

    name = "filtered-covariance"
    features = "covariance"
    _PIECE = 256  # samples filtered at once (bounds the temporaries of a long chunk)

    def __init__(self, classifier, capacity: int) -> None:
        super().__init__(classifier, capacity)
        pre = classifier.preprocessor
        self._pre = pre
        self._picks = np.asarray(pre.pick_indices, dtype=np.intp)
        S = pre.spatial_matrix
        self._spatial_t = None if S is None else np.ascontiguousarray(S.T)
        taps = np.stack([np.asarray(b, dtype=np.float64) for b in pre.filters])
        self._bank = PartitionedFirBank(taps, len(self._picks))
        self._ring = RingBuffer(len(self._picks) * taps.shape[0], self.capacity)

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        picked = chunk[:, self._picks].astype(np.float64, copy=False)  # LSL's float32 too
        if self._spatial_t is not None:
            picked = picked @ self._spatial_t
        for i in range(0, picked.shape[0], self._PIECE):
            self._ring.push(self._bank.process(picked[i : i + self._PIECE]), None)

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (the filters restart: every window has warm-up)."""
        skip_rows(self._ring, n)
        self._bank.reset()

    def settle(self) -> None:
        """Run the filter bank's deferred work (off the decision's latency path)."""
        self._bank.settle()

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        window, _ = self._ring.get(stop - self._pre.n_window, stop)  # (n_picks, n_window)
        X = self._pre.transform_filtered(window[None])[0]
        return self.classifier.scores_from_features(X)

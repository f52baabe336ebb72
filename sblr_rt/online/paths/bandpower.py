"""The filtered band-power path: each sample band-pass filtered once, running power sums."""

from __future__ import annotations

from collections import deque

import numpy as np

from sblr_rt.online.paths.base import StreamingPath, skip_rows
from sblr_rt.preprocessing import apply_scaling
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["FilteredBandPowerPath"]


class FilteredBandPowerPath(StreamingPath):
    """Band-power features: filter once per sample, keep running sums of the squared bands.

    The squaring cannot be folded into the factors, so each sample is filtered as it
    arrives (a block Toeplitz product, so BLAS does the work) and the running sums of the
    squared band signals are buffered (band-major columns): a bin's power is the
    difference of two rows, so a decision reads ``n_bins + 1`` rows, then logs, scales
    (:meth:`Preprocessor.scale`) and applies the factors.

    The sums are rebased now and then (and at every break) to keep their rounding error
    small: rows stored before a rebase are corrected on reading, so differences are exact.
    """

    name = "filtered"
    features = "bandpower"
    _BLOCK = 64  # samples per Toeplitz filter block (bounds the matrix size)

    def __init__(self, classifier, capacity: int) -> None:
        super().__init__(classifier, capacity)
        pre = classifier.preprocessor
        self._pre = pre
        self._picks = np.asarray(pre.pick_indices, dtype=np.intp)
        # The spatial stage, applied to each picked sample before the filters.
        S = pre.spatial_matrix
        self._spatial_t = None if S is None else np.ascontiguousarray(S.T)
        self._taps = np.stack([np.asarray(b, dtype=np.float64) for b in pre.filters])
        self._m = self._taps.shape[1]
        n_pick = len(self._picks)
        # Raw picked history: the filter needs the last m - 1 samples before each block.
        self._raw = RingBuffer(
            n_pick, max(self._m - 1 + self._BLOCK, 2 * self._BLOCK), mirrored=True
        )
        skip_rows(self._raw, self._m - 1)  # zero initial state
        n_cols = n_pick * self._taps.shape[0]
        self._ring = RingBuffer(n_cols, self.capacity)
        self._csum = np.zeros(n_cols)
        self._rebases: deque[tuple[int, np.ndarray]] = deque()  # (first row after, base)
        self._since_rebase = 0
        self._toeplitz: dict[int, np.ndarray] = {}
        self._edges = np.asarray(pre.bin_edges)
        self._counts = np.diff(self._edges).astype(np.float64)
        # The preprocessor's own rules, bound once: per-window reference, then scaling.
        self._from_log_power = pre.features_from_log_power
        self._scaling = (pre.row_offset_, pre.row_scale_, pre.col_scale_)
        self._tiny = np.finfo(np.float64).tiny

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        picked = chunk[:, self._picks]
        if self._spatial_t is not None:
            picked = picked @ self._spatial_t
        n_bands = self._taps.shape[0]
        for i in range(0, picked.shape[0], self._BLOCK):
            block = picked[i : i + self._BLOCK]
            h = block.shape[0]
            self._raw.push(block, None)
            n = self._raw.n_pushed
            hist = self._raw.rows(n - h - self._m + 1, n)  # (m - 1 + h, n_pick), a view
            y = self._toeplitz_for(h) @ hist  # (n_bands * h, n_pick)
            # (n_bands, h, n_pick) -> (h, n_bands * n_pick): band-major columns.
            with np.errstate(over="ignore", invalid="ignore"):
                # A huge finite burst may overflow: its windows then score inf/NaN and
                # are dropped, and the next rebase (or break) restarts the sums.
                power = np.square(y).reshape(n_bands, h, -1).transpose(1, 0, 2).reshape(h, -1)
                csum = np.cumsum(power, axis=0)
                csum += self._csum
            self._csum = csum[-1].copy()
            self._ring.push(csum, None)
            self._since_rebase += h
        if self._since_rebase >= self.capacity:
            self._rebase()

    def _rebase(self) -> None:
        """Restart the running sums from zero for the rows to come."""
        n = self._ring.n_pushed
        if np.any(self._csum):
            self._rebases.append((n, self._csum))
        self._csum = np.zeros_like(self._csum)
        self._since_rebase = 0
        # A rebase older than every held row corrects no row any more.
        while self._rebases and self._rebases[0][0] <= n - self.capacity:
            self._rebases.popleft()

    def _toeplitz_for(self, h: int) -> np.ndarray:
        T = self._toeplitz.get(h)
        if T is None:
            m = self._m
            n_bands = self._taps.shape[0]
            T = np.zeros((n_bands * h, m - 1 + h))
            rev = self._taps[:, ::-1]
            for j in range(h):
                T[j::h][:, j : j + m] = rev
            self._toeplitz[h] = T
        return T

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples."""
        skip_rows(self._ring, n)
        skip_rows(self._raw, min(n, self._raw.capacity))
        self._rebase()

    def mark_break(self) -> None:
        """Restart the running sums (a discontinuity before the next sample)."""
        # Windows never straddle a break: restart the sums, so that whatever came before
        # (a huge burst) no longer weighs on their rounding.
        self._rebase()

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        clf = self.classifier
        # Running sums just before each bin edge; the first edge is the window's first
        # sample, whose predecessor is in the warm-up part (n_pad >= 1).
        rows = stop - clf.n_times + clf.n_pad - 1 + self._edges  # absolute row indices
        csum = self._ring.take(rows)  # (n_bins + 1, n_cols): only the rows a decision needs
        with np.errstate(invalid="ignore"):  # overflowed sums score NaN (then dropped)
            for first, base in self._rebases:
                # Rows stored before a rebase hold sums relative to the older origin.
                csum[rows < first] -= base
            power = csum[1:] - csum[:-1]  # (n_bins, n_cols): sums over each bin
            power /= self._counts[:, None]
            np.maximum(power, self._tiny, out=power)
            np.log(power, out=power)
        Z = self._from_log_power(power.T[None])
        return clf.scores_from_features(apply_scaling(Z, *self._scaling)[0])

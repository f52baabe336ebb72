"""The filtered covariance form: samples band-pass filtered once, block sums of products."""

from __future__ import annotations

import numpy as np

from sblr_rt.online.incremental._fir_bank import PickedFilterBank
from sblr_rt.online.incremental.form import IncrementalForm, Scoring, skip_rows
from sblr_rt.preprocessing.features import log_shrunk_covariance
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["FilteredCovarianceForm", "covariance_block_for"]


def covariance_block_for(n_window: int) -> int:
    """Return the block of samples whose sums the form keeps, a power of two near ``2 sqrt(n)``.

    A decision sums the ``n_window / B`` block sums inside the window (``n_picks^2`` adds
    each) and the products of the up to ``B - 1`` samples before the first whole block
    (``n_picks^2`` multiply-adds each, at BLAS speed, about half of them on average):
    ``B`` near ``2 sqrt(n_window)`` keeps both small, whatever the number of channels.
    """
    target = 2.0 * np.sqrt(max(int(n_window), 1))
    return int(min(1024, max(16, 2 ** round(np.log2(target)))))


class FilteredCovarianceForm(IncrementalForm):
    """Covariance features: filter once per sample, sum the products by blocks of samples.

    Each picked sample goes through the spatial stage and the band-pass as it arrives (a
    partitioned-FFT filter bank, as the band-power form), and the filtered samples ``y``
    are buffered. The samples are also cut into blocks of ``B`` consecutive absolute
    indices, and each block keeps the sums of ``y y^T`` and of ``y`` over its samples
    (accumulated as they arrive). A window's sums are then the sums of the whole blocks it
    holds, plus the products of the few samples before its first whole block and, unless
    it ends at the newest sample (where the block being filled holds them), after its
    last: no product over the whole window at a decision, and no running sum from which
    old samples are subtracted, so no rounding error accumulates however long the run.
    The window's centred covariance ``(sum y y^T - s s^T / n) / n`` (``s = sum y``) then
    goes through the preprocessor's own rules (shrinkage, matrix log, scaling:
    :func:`~sblr_rt.preprocessing.features.log_shrunk_covariance`,
    :meth:`Preprocessor.scale <sblr_rt.preprocessing.Preprocessor.scale>`) and the
    factors, so the scores equal the offline pipeline's to rounding.

    The block sums span two windows back from the newest sample (``n_picks^2`` floats a
    block); a window older than that is computed from its buffered samples, as a whole.

    Parameters
    ----------
    scoring, capacity, filtered_input
        As for :class:`~sblr_rt.online.incremental.bandpower.FilteredBandPowerForm`.
    block : int | None
        Samples per block ``B`` (None: :func:`covariance_block_for` of the window).
    """

    name = "filtered-covariance"
    features = "covariance"

    reads_filters = True

    def __init__(
        self, scoring: Scoring, capacity: int, *, filtered_input=None, block: int | None = None
    ) -> None:
        super().__init__(scoring, capacity)
        pre = scoring.preprocessor
        self._pre = pre
        self._input = PickedFilterBank(pre) if filtered_input is None else filtered_input
        self._bank = self._input.bank
        p = self._input.n_columns
        self._ring = RingBuffer(p, self.capacity)
        self._n_window = n = int(pre.n_window)
        B = covariance_block_for(n) if block is None else int(block)
        if B < 1:
            raise ValueError(f"'block' must be a positive number of samples, got {block}")
        #: Samples per block.
        self.block = B
        # Slot of block k: k % n_slots. Enough slots for the blocks of the windows ending
        # up to one window before the newest sample, and the block being filled.
        self._n_slots = -(-min(self.capacity, 2 * n) // B) + 2
        self._gram = np.zeros((self._n_slots, p, p))
        self._sum = np.zeros((self._n_slots, p))
        self._tmp = np.empty((p, p))
        self._n = 0  # absolute index of the next sample

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        for filtered in self._input.pieces(chunk):
            self._ring.push(filtered, None)
            self._accumulate(filtered)

    def _accumulate(self, y: np.ndarray) -> None:
        """Add the filtered samples ``y`` (n_samples, n_picks) to their blocks' sums."""
        B, done = self.block, 0
        with np.errstate(over="ignore", invalid="ignore"):
            # A huge finite burst may overflow its block: the windows holding that block
            # score NaN (dropped), the later ones do not see it.
            while done < len(y):
                k, offset = divmod(self._n, B)
                h = min(B - offset, len(y) - done)
                rows = y[done : done + h]
                slot = k % self._n_slots
                if offset == 0:  # a new block: its slot is reused
                    np.matmul(rows.T, rows, out=self._gram[slot])
                    np.sum(rows, axis=0, out=self._sum[slot])
                else:
                    self._gram[slot] += np.matmul(rows.T, rows, out=self._tmp)
                    self._sum[slot] += rows.sum(axis=0)
                self._n += h
                done += h

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (the filters restart: every window has warm-up)."""
        skip_rows(self._ring, n)
        self._bank.reset()
        if n <= 0:
            return
        # Zero samples add nothing; the blocks they start begin from zero sums.
        B, end = self.block, self._n + n
        first = max(-(-self._n // B), (end - 1) // B - self._n_slots + 1)
        for k in range(first, (end - 1) // B + 1):
            self._gram[k % self._n_slots] = 0.0
            self._sum[k % self._n_slots] = 0.0
        self._n = end

    def settle(self) -> None:
        """Run the filter bank's deferred work (off the decision's latency path)."""
        self._bank.settle()

    def window_sums(self, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Return ``sum y y^T`` (n_picks, n_picks) and ``sum y`` (n_picks,) over a window.

        The window is the ``n_window`` filtered samples before ``stop`` (absolute index).
        """
        a, b = stop - self._n_window, stop
        B, n_slots = self.block, self._n_slots
        first, last = -(-a // B), b // B  # whole blocks first .. last - 1
        if first > last or first <= self._n // B - n_slots:
            return self._products(a, b)  # a short window, or older than the blocks kept
        gram, total = self._products(a, first * B)
        s0, s1 = first % n_slots, last - first + first % n_slots
        with np.errstate(over="ignore", invalid="ignore"):
            for lo, hi in ((s0, min(s1, n_slots)), (0, max(0, s1 - n_slots))):
                if hi > lo:
                    gram += np.add.reduce(self._gram[lo:hi], axis=0)
                    total += np.add.reduce(self._sum[lo:hi], axis=0)
            if b == self._n:  # the block being filled holds the samples after the last
                if b % B:
                    gram += self._gram[last % n_slots]
                    total += self._sum[last % n_slots]
            else:
                g, s = self._products(last * B, b)
                gram += g
                total += s
        return gram, total

    def _products(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Return ``sum y y^T`` and ``sum y`` over the buffered samples ``start .. stop - 1``."""
        rows, _ = self._ring.get(start, stop)  # (n_picks, stop - start)
        with np.errstate(over="ignore", invalid="ignore"):
            return rows @ rows.T, rows.sum(axis=1)

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        n = self._n_window
        gram, total = self.window_sums(stop)
        with np.errstate(over="ignore", invalid="ignore"):
            S = gram - np.outer(total, total / n)
            S /= n
        if not np.isfinite(S).all():  # an overflowed burst: no decision (as bandpower)
            return np.full(self.scoring.n_outputs, np.nan)
        X = self._pre.scale(log_shrunk_covariance(S[None], n))[0]
        return self.scoring.scores_from_features(X)

"""The filtered band-power form: each sample band-pass filtered once, running power sums."""

from __future__ import annotations

from collections import deque

import numpy as np

from sblr_rt.online.incremental._fir_bank import PickedFilterBank
from sblr_rt.online.incremental.form import IncrementalForm, Scoring, skip_rows
from sblr_rt.preprocessing import apply_scaling
from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["FilteredBandPowerForm"]


class FilteredBandPowerForm(IncrementalForm):
    """Band-power features: filter once per sample, keep running sums of the squared bands.

    The squaring cannot be folded into the factors, so each sample is filtered as it
    arrives (all bands at once by a partitioned-FFT filter bank,
    :class:`~sblr_rt.online.incremental._fir_bank.PartitionedFirBank`: FFT cost per sample,
    no added latency) and the running sums of the squared band signals are buffered
    (band-major columns): a bin's power is the difference of two rows, so a decision
    reads ``n_bins + 1`` rows, then logs, scales (:meth:`Preprocessor.scale`) and applies
    the factors.

    The sums are rebased now and then (and at every break) to keep their rounding error
    small: rows stored before a rebase are corrected on reading, so differences are exact.

    Parameters
    ----------
    scoring, capacity
        As for :class:`~sblr_rt.online.incremental.form.IncrementalForm`.
    filtered_input : SharedFilterBank.Reader | None
        Where the filtered samples come from: None, the form's own
        :class:`~sblr_rt.online.incremental._fir_bank.PickedFilterBank`; an ensemble passes a
        reader of a bank its members share.
    """

    name = "filtered"
    features = "bandpower"

    reads_filters = True

    def __init__(self, scoring: Scoring, capacity: int, *, filtered_input=None) -> None:
        super().__init__(scoring, capacity)
        pre = scoring.preprocessor
        self._pre = pre
        self._input = PickedFilterBank(pre) if filtered_input is None else filtered_input
        self._bank = self._input.bank
        n_cols = self._input.n_columns
        self._ring = RingBuffer(n_cols, self.capacity)
        self._csum = np.zeros(n_cols)
        self._rebases: deque[tuple[int, np.ndarray]] = deque()  # (first row after, base)
        self._since_rebase = 0
        self._edges = np.asarray(pre.bin_edges)
        self._counts = np.diff(self._edges).astype(np.float64)
        # The preprocessor's own rules, bound once: per-window reference, then scaling.
        self._from_log_power = pre.features_from_log_power
        self._scaling = (pre.row_offset_, pre.row_scale_, pre.col_scale_)
        self._tiny = np.finfo(np.float64).tiny
        self._fold = self._fold_after_log()

    def _scores_from_log_power(self, log_power: np.ndarray) -> np.ndarray:
        """Scores (..., n_outputs) of log powers (..., n_bins, n_cols): the offline rules."""
        lp = np.swapaxes(log_power, -1, -2).reshape(-1, *log_power.shape[-1:-3:-1])
        Z = apply_scaling(self._from_log_power(lp), *self._scaling)
        return self.scoring.scores_from_features(Z).reshape(*log_power.shape[:-2], -1)

    def _fold_after_log(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Fold everything after the log into one affine map, if it is one (it is).

        The reference (a mean subtracted), the scaling and ``tr(U^T X V) + b`` are affine
        in the log powers: a decision is then one product with a weight matrix
        ``(n_outputs, n_bins * n_cols)``. Built from the offline rules themselves (their
        response to unit log powers) and checked on a random input; None (the rules
        applied at every decision) if the check fails.
        """
        shape = (len(self._edges) - 1, self._ring.n_channels)
        size = shape[0] * shape[1]
        const = self._scores_from_log_power(np.zeros(shape))
        weights = np.empty((size, len(const)))
        for a in range(0, size, 256):
            b = min(size, a + 256)
            basis = np.zeros((b - a, size))
            basis[np.arange(b - a), np.arange(a, b)] = 1.0
            weights[a:b] = self._scores_from_log_power(basis.reshape(-1, *shape)) - const
        weights = np.ascontiguousarray(weights.T)
        probe = np.random.default_rng(0).normal(-20.0, 3.0, shape)
        want = self._scores_from_log_power(probe)
        got = weights @ probe.ravel() + const
        if not np.allclose(got, want, rtol=1e-11, atol=1e-11 * np.abs(weights).sum()):
            return None
        return weights, const

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels)."""
        for filtered in self._input.pieces(chunk):
            self._push_filtered(filtered)
        if self._since_rebase >= self.capacity:
            self._rebase()

    def _push_filtered(self, y: np.ndarray) -> None:
        """Append the running sums of the squared filtered samples ``y`` (overwritten)."""
        with np.errstate(over="ignore", invalid="ignore"):
            # A huge finite burst may overflow: its windows then score inf/NaN and are
            # dropped, and the next rebase (or break) restarts the sums.
            csum = np.square(y, out=y)
            # Row by row: numpy's cumsum along axis 0 is ~25x slower on (20, 3584).
            np.add(csum[0], self._csum, out=csum[0])
            for i in range(1, csum.shape[0]):
                np.add(csum[i], csum[i - 1], out=csum[i])
        self._csum = csum[-1].copy()
        self._ring.push(csum, None)
        self._since_rebase += y.shape[0]

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

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples."""
        skip_rows(self._ring, n)
        # No window spans lost samples, and every window's warm-up covers the filters'
        # memory: restarting them from zero gives the same windows as zeros would.
        self._bank.reset()
        self._rebase()

    def settle(self) -> None:
        """Run the filter bank's deferred work (while no decision waits)."""
        self._bank.settle()

    def mark_break(self) -> None:
        """Restart the running sums (a discontinuity before the next sample)."""
        # Windows never straddle a break: restart the sums, so that whatever came before
        # (a huge burst) no longer weighs on their rounding.
        self._rebase()

    def scores(self, stop: int) -> np.ndarray:
        """Return the scores (n_outputs,) of the raw window ending before ``stop``."""
        scoring = self.scoring
        # Running sums just before each bin edge; the first edge is the window's first
        # sample, whose predecessor is in the warm-up part (n_pad >= 1).
        rows = stop - scoring.n_times_raw + scoring.n_pad - 1 + self._edges  # absolute row indices
        csum = self._ring.take(rows)  # (n_bins + 1, n_cols): only the rows a decision needs
        with np.errstate(invalid="ignore"):  # overflowed sums score NaN (then dropped)
            for first, base in self._rebases:
                # Rows stored before a rebase hold sums relative to the older origin
                # (rows ascend: a prefix).
                csum[: np.searchsorted(rows, first)] -= base
            power = csum[1:] - csum[:-1]  # (n_bins, n_cols): sums over each bin
            power /= self._counts[:, None]
            np.maximum(power, self._tiny, out=power)
            np.log(power, out=power)
        if self._fold is None:
            return self._scores_from_log_power(power)
        weights, const = self._fold
        with np.errstate(invalid="ignore"):  # inf log power scores NaN (then dropped)
            return weights @ power.ravel() + const

"""A bank of long causal FIR filters applied sample-exactly to a stream, at FFT cost.

Direct convolution costs ``numtaps`` multiply-adds per sample, filter and channel: for
the narrow bands of the power forms (3380 taps at 2048 Hz) that is tens of GFLOP/s at
256 channels, more than a core. The bank uses uniformly partitioned overlap-save
instead (blocks of ``B`` samples, the filters cut into ``K`` partitions of ``B`` taps, a
frequency-domain delay line of the blocks' spectra), split so that no output waits for
a block to fill and no chunk pays for a whole block's FFT work:

- the *near* part of output ``t`` in block ``j`` (the current and previous blocks'
  samples, taps ``0 .. B + i``) is a small Toeplitz product per chunk;
- the *far* part (every sample before block ``j - 1``) only depends on blocks that were
  complete when block ``j - 1`` began, so it is computed during block ``j - 1``, a group
  of channels at a time, in proportion to the samples received: one rFFT of the block
  just completed per channel, one batched complex product over the partitions and one
  inverse FFT per filter and channel.

Output sample ``t`` is available as soon as input sample ``t`` is, and equals direct
convolution from a zero state to rounding (relative ~1e-15). :meth:`PartitionedFirBank.settle`
does the far work due by the end of the next chunk (as long as the last one): it only reads
complete blocks, so it may run ahead, and the chunk that closes a block then finds it done.
A caller may run it after its latency-critical work (the online loop does, after
publishing a decision), else the next :meth:`process` does what is due.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import fft

__all__ = [
    "PartitionedFirBank",
    "PickedFilterBank",
    "SharedFilterBank",
    "block_size_for",
    "filter_key",
]

#: Channel groups of the far part (its work is spread over a block in this many steps).
N_GROUPS = 8


def block_size_for(numtaps: int) -> int:
    """Return the partition size ``B``, a power of two near ``2 sqrt(numtaps)``.

    The near part costs about ``1.5 B`` multiply-adds per sample (BLAS at full speed),
    the far part about ``4 numtaps / B`` flops (small complex products, slower per flop)
    plus an FFT (how the balance was measured: docs/benchmarks.md, "Online loop").
    """
    target = 2.0 * np.sqrt(max(int(numtaps), 1))
    return int(min(512, max(16, 2 ** round(np.log2(target)))))


class PartitionedFirBank:
    """Several FIR filters of one length applied to the same channels, chunk by chunk.

    Parameters
    ----------
    taps : ndarray, shape (n_filters, numtaps)
        The filters' coefficients.
    n_channels : int
        Channels of every chunk.
    block : int | None
        Partition size ``B`` (None: :func:`block_size_for`).

    Notes
    -----
    :meth:`process` returns ``(n_samples, n_filters * n_channels)``, filter-major columns:
    column ``k * n_channels + c`` is channel ``c`` through filter ``k``.
    """

    def __init__(self, taps: np.ndarray, n_channels: int, *, block: int | None = None) -> None:
        taps = np.atleast_2d(np.asarray(taps, dtype=np.float64))
        self.n_filters, self.numtaps = taps.shape
        self.n_channels = n = int(n_channels)
        B = block_size_for(self.numtaps) if block is None else int(block)
        self.block = B
        K = max(2, -(-self.numtaps // B))  # partitions; 0 and half of 1 are near
        padded = np.zeros((self.n_filters, K * B))
        padded[:, : self.numtaps] = taps
        # Far partitions 1 .. K-1 as spectra (F, n_filters, K - 1), oldest first, so
        # that one batched product with the delay line's newest K - 1 spectra sums them.
        parts = padded.reshape(self.n_filters, K, B)[:, :0:-1]
        self._H = np.ascontiguousarray(fft.rfft(parts, 2 * B, axis=2).transpose(2, 0, 1))
        self._S = K - 1  # delay-line slots
        # Near part: near[i, k, l] = taps[k, B + i - l] over the rows [previous, current].
        out_i, row = np.meshgrid(np.arange(B), np.arange(2 * B), indexing="ij")
        lag = B + out_i - row
        ok = (lag >= 0) & (lag < self.numtaps)
        near = np.zeros((B, self.n_filters, 2 * B))
        near[out_i[ok], :, row[ok]] = taps[:, lag[ok]].T
        self._near = near
        # rfft of [0, x] (x in the second half) = rfft of [x, 0] times (-1)^f.
        self._shift = np.where(np.arange(B + 1) % 2, -1.0, 1.0)[:, None]

        # The far work of a block in steps: the spectrum of the block just completed, the
        # partition sums by groups of frequencies (each a product with every channel, so
        # BLAS gets wide matrices), the inverse FFTs by groups of channels.
        def split(size):
            bounds = np.linspace(0, size, min(N_GROUPS, size) + 1).round().astype(int)
            return list(itertools.pairwise(bounds.tolist()))

        self._steps = (
            [(self._spectrum, None)]
            + [(self._partition_sums, g) for g in split(B + 1)]
            + [(self._inverse, g) for g in split(n)]
        )
        self.reset()

    def reset(self) -> None:
        """Forget the past: zero state, as if every earlier sample were zero."""
        B, n, S = self.block, self.n_channels, self._S
        # Delay line of block spectra, mirrored (slot p and p + S) so that the S newest
        # are one contiguous run. Slot of block q: q % S. The current block's slot holds
        # the spectrum of [previous, 0] once its group's far work has run.
        self._fdl = np.zeros((B + 1, 2 * S, n), dtype=np.complex128)
        self._block_index = 0
        self._rows = np.zeros((2 * B, n))  # [previous block, current block so far]
        self._pos = 0  # samples of the current block received
        self._acc = np.zeros((B + 1, self.n_filters, n), dtype=np.complex128)
        self._tail = np.zeros((B, self.n_filters, n))  # far part of the current block
        self._next = np.zeros((B, self.n_filters, n))  # ... of the next, being computed
        self._done = 0  # steps of the next block's far part done
        self._last = 0  # samples of the last chunk (how far settle() runs ahead)

    def process(self, x: np.ndarray) -> np.ndarray:
        """Filter the next samples.

        Parameters
        ----------
        x : ndarray, shape (n_samples, n_channels)
            The next input samples.

        Returns
        -------
        y : ndarray, shape (n_samples, n_filters * n_channels)
            The filtered samples, filter-major columns.
        """
        self._far(self._pos)  # the far work due before these samples (if not run since)
        B = self.block
        n_samples = x.shape[0]
        self._last = n_samples
        out = np.empty((n_samples, self.n_filters * self.n_channels))
        done = 0
        while done < n_samples:
            i0 = self._pos
            h = min(B - i0, n_samples - done)
            i1 = i0 + h
            self._rows[B + i0 : B + i1] = x[done : done + h]
            near = np.matmul(self._near[i0:i1, :, : B + i1], self._rows[: B + i1])
            near += self._tail[i0:i1]
            out[done : done + h] = near.reshape(h, -1)
            self._pos = i1
            done += h
            if i1 == B:
                self._close_block()
        return out

    def _close_block(self) -> None:
        """Finish the far work of the block just completed, then start a new block."""
        self._work(len(self._steps))
        B = self.block
        self._rows[:B] = self._rows[B:]
        self._rows[B:] = 0.0
        self._pos = 0
        self._tail, self._next = self._next, self._tail
        self._done = 0
        self._block_index += 1

    def settle(self) -> None:
        """Run the far work due by the end of the next chunk, as long as the last one.

        The far part only reads complete blocks, so it can run ahead of the samples: the
        chunk that closes a block then finds the next block's far part done.
        """
        self._far(min(self.block, self._pos + self._last))

    def _far(self, upto: int) -> None:
        """Run the far work due for the first ``upto`` samples of the current block."""
        due = -(-len(self._steps) * upto // self.block)
        if self._done < due:
            self._work(due)

    def _work(self, upto: int) -> None:
        """Run the next block's far-part steps ``_done .. upto - 1``."""
        for step, arg in self._steps[self._done : upto]:
            step(arg)
        self._done = max(self._done, upto)

    def _spectrum(self, _) -> None:
        """Store the spectra of the block just completed in the delay line."""
        B, S = self.block, self._S
        j = self._block_index
        p, q = j % S, (j - 1) % S  # slots of the current and previous blocks
        spec = fft.rfft(self._rows[:B], 2 * B, axis=0)  # [previous, 0]
        if j > 0:
            # The previous block's slot held [before it, 0]: add [0, previous].
            self._fdl[:, q] += self._shift * spec
            self._fdl[:, q + S] = self._fdl[:, q]
        self._fdl[:, p] = spec
        self._fdl[:, p + S] = spec

    def _partition_sums(self, group: tuple[int, int]) -> None:
        """Sum the far partitions' products for frequencies ``group``."""
        a, b = group
        p, S = self._block_index % self._S, self._S
        np.matmul(self._H[a:b], self._fdl[a:b, p + 1 : p + S + 1], out=self._acc[a:b])

    def _inverse(self, group: tuple[int, int]) -> None:
        """Inverse FFT of the partition sums for channels ``group``: the next far part."""
        a, b = group
        B = self.block
        self._next[:, :, a:b] = fft.irfft(self._acc[:, :, a:b], 2 * B, axis=0)[B:]


class PickedFilterBank:
    """A preprocessor's input stage, sample by sample: picks, spatial stage, filter bank.

    What the filtered incremental forms share: the model's channels picked from each raw
    sample, the spatial stage applied (a common average as a mean subtracted, O(n) per
    sample), then every filter of the preprocessor by one :class:`PartitionedFirBank`.

    Parameters
    ----------
    pre : Preprocessor
        The fitted preprocessor (``pick_indices``, ``spatial_matrix``, ``filters``).
    """

    _PIECE = 256  # samples filtered at once (bounds the temporaries of a long chunk)

    def __init__(self, pre) -> None:
        self._picks = np.asarray(pre.pick_indices, dtype=np.intp)
        n = len(self._picks)
        S = pre.spatial_operator
        self._spatial_t = None if S is None else np.ascontiguousarray(S.T)
        self._average = S is not None and np.allclose(S, np.eye(n) - 1.0 / n, rtol=0, atol=1e-15)
        taps = _taps(pre)
        self.bank = PartitionedFirBank(taps, n)
        #: Columns of the output: filter-major, ``n_filters * n_picks``.
        self.n_columns = n * taps.shape[0]

    def pieces(self, chunk: np.ndarray):
        """Yield the filtered samples of a raw chunk (n_samples, n_channels), in pieces."""
        picked = chunk[:, self._picks].astype(np.float64, copy=False)  # LSL's float32 too
        if self._average:
            picked = picked - picked.mean(axis=1, keepdims=True)
        elif self._spatial_t is not None:
            picked = picked @ self._spatial_t
        for i in range(0, picked.shape[0], self._PIECE):
            yield self.bank.process(picked[i : i + self._PIECE])


def _taps(pre) -> np.ndarray:
    """Return the preprocessor's filters, shape (n_filters, numtaps)."""
    return np.stack([np.asarray(b, dtype=np.float64) for b in pre.filters])


def filter_key(pre) -> tuple:
    """Return what decides a preprocessor's filtered samples before its spatial stage.

    Two preprocessors with equal keys pick the same channels and filter them with the same
    taps: one :class:`SharedFilterBank` serves both.
    """
    taps = _taps(pre)
    return (tuple(int(i) for i in pre.pick_indices), taps.shape, taps.tobytes())


class SharedFilterBank:
    """One filter bank for several preprocessors that pick and filter alike.

    The picked raw channels are filtered once; each reader (:meth:`reader`) then applies
    its own spatial stage to the filtered samples. Filtering acts on each channel alone, so
    this equals filtering the spatially transformed samples (what :class:`PickedFilterBank`
    does) to rounding; it is the order of the offline pipeline
    (:meth:`Preprocessor.filter_epochs <sblr_rt.preprocessing.Preprocessor.filter_epochs>`).

    Parameters
    ----------
    pre : Preprocessor
        One of the preprocessors (its picks and filters; its spatial stage is not used).

    Notes
    -----
    The owner calls :meth:`feed` with each raw chunk before its readers read it
    (:meth:`SharedFilterBank.Reader.pieces` returns the pieces of the last chunk fed).
    """

    _PIECE = PickedFilterBank._PIECE

    def __init__(self, pre) -> None:
        #: :func:`filter_key` of the preprocessors this bank serves.
        self.key = filter_key(pre)
        self._picks = np.asarray(pre.pick_indices, dtype=np.intp)
        self.n_picks = len(self._picks)
        taps = _taps(pre)
        self.n_filters = taps.shape[0]
        self.bank = PartitionedFirBank(taps, self.n_picks)
        self._pieces: list[np.ndarray] = []

    def feed(self, chunk: np.ndarray) -> None:
        """Filter a raw chunk (n_samples, n_channels): the pieces the readers read next."""
        picked = chunk[:, self._picks].astype(np.float64, copy=False)
        self._pieces = [
            self.bank.process(picked[i : i + self._PIECE])
            for i in range(0, picked.shape[0], self._PIECE)
        ]

    def reader(self, pre) -> SharedFilterBank.Reader:
        """Return the input stage of ``pre`` (same picks and filters) read from this bank."""
        if filter_key(pre) != self.key:
            raise ValueError("'pre' must pick and filter as the shared bank does")
        return SharedFilterBank.Reader(self, pre.spatial_operator)

    class Reader:
        """A preprocessor's input stage read from a shared bank: its spatial stage applied.

        Has the interface of :class:`PickedFilterBank` (``bank``, ``n_columns``,
        :meth:`pieces`); the shared bank's reset and deferred work are idempotent, so that
        every reader may call them.
        """

        def __init__(self, shared: SharedFilterBank, spatial_matrix: np.ndarray | None) -> None:
            self._shared = shared
            self._spatial = spatial_matrix
            self.bank = shared.bank
            self.n_columns = shared.n_filters * shared.n_picks

        def pieces(self, chunk: np.ndarray):
            """Yield the filtered samples of the chunk last fed, own spatial stage applied.

            ``chunk`` is the chunk fed to the shared bank (it is not filtered again). Each
            piece is a new array, which the reader may overwrite.
            """
            shared = self._shared
            for y in shared._pieces:
                if self._spatial is None:
                    yield y.copy()
                    continue
                blocks = y.reshape(y.shape[0], shared.n_filters, shared.n_picks)
                yield (blocks @ self._spatial.T).reshape(y.shape)

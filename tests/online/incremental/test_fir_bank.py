"""The partitioned-FFT filter bank equals direct causal filtering, however fed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from sblr_rt.online.incremental._fir_bank import PartitionedFirBank, block_size_for


def _direct(taps, x):
    return np.concatenate([signal.lfilter(b, [1.0], x, axis=0) for b in taps], axis=1)


@pytest.mark.parametrize(
    ("numtaps", "block"),
    [(1, 16), (7, 16), (16, 16), (17, 16), (33, 16), (200, 16), (1651, 64), (3381, None)],
)
def test_any_chunking_gives_direct_convolution(numtaps, block):
    """Outputs equal lfilter from a zero state for random chunk sizes, settled or not."""
    rng = np.random.default_rng(numtaps)
    taps = rng.standard_normal((3, numtaps))
    x = rng.standard_normal((4000, 5))
    bank = PartitionedFirBank(taps, 5, block=block)
    out, i = [], 0
    while i < len(x):
        h = int(rng.integers(1, 3 * bank.block))
        out.append(bank.process(x[i : i + h]))
        i += h
        if rng.random() < 0.5:
            bank.settle()
    got = np.concatenate(out)
    want = _direct(taps, x)
    assert got.shape == want.shape == (4000, 15)  # filter-major columns
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())


def test_reset_forgets_the_past():
    rng = np.random.default_rng(1)
    taps = rng.standard_normal((2, 100))
    x = rng.standard_normal((500, 3))
    bank = PartitionedFirBank(taps, 3, block=16)
    bank.process(1e6 * rng.standard_normal((77, 3)))
    bank.reset()
    np.testing.assert_allclose(bank.process(x), _direct(taps, x), atol=1e-12)


def test_block_size_balances_near_and_far_work():
    assert block_size_for(3381) == 128
    assert block_size_for(1) == 16
    assert block_size_for(10**7) == 512


def test_settle_runs_the_far_work_ahead_of_the_block_end():
    """With steady chunks and a settle after each, no chunk runs far work of its own.

    The far part reads complete blocks only, so settling runs it ahead by one chunk: the
    chunk that closes a block (the latency-critical call) finds the next block's far part
    done. The outputs still equal direct convolution.
    """
    rng = np.random.default_rng(3)
    taps = rng.standard_normal((2, 300))
    x = rng.standard_normal((40 * 20, 4))
    bank = PartitionedFirBank(taps, 4, block=32)
    in_process = []
    work = bank._work

    def spy(upto):
        if bank._done < upto:
            in_process.append(processing)
        work(upto)

    bank._work = spy
    out = []
    for i in range(0, len(x), 20):
        processing = True
        out.append(bank.process(x[i : i + 20]))
        processing = False
        bank.settle()
    np.testing.assert_allclose(np.concatenate(out), _direct(taps, x), atol=1e-12)
    assert in_process and not any(in_process)  # far work ran, never inside process()

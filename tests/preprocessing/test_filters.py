"""FIR design and the streaming engine: chunks equal the whole, sizes are bounded."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.preprocessing.filters import (
    MAX_NUMTAPS,
    StreamingFilter,
    design_fir,
    filter_padded_epochs,
)


def test_design_is_odd_linear_phase_and_passes_its_band():
    b = design_fir(250.0, 8.0, 30.0)
    assert b.size % 2 == 1
    np.testing.assert_allclose(b, b[::-1])
    w = np.exp(-2j * np.pi * np.array([0.5, 20.0, 80.0]) / 250.0)
    gain = np.abs(np.polyval(b[::-1], w))
    assert gain[1] > 0.95 and gain[0] < 0.05 and gain[2] < 0.05


def test_design_refuses_bad_edges_and_huge_filters():
    with pytest.raises(ValueError, match="both be None"):
        design_fir(100.0, None, None)
    with pytest.raises(ValueError, match="Nyquist"):
        design_fir(100.0, None, 60.0)
    with pytest.raises(ValueError, match=f"1 to {MAX_NUMTAPS} taps"):
        design_fir(100.0, 1e-9, None)  # a transition of 1e-9 Hz: 3e11 taps
    with pytest.raises(ValueError, match="taps"):
        design_fir(100.0, 8.0, 30.0, numtaps=MAX_NUMTAPS + 2)


def test_streaming_in_chunks_equals_whole_and_padded_epochs():
    rng = np.random.default_rng(0)
    filters = [design_fir(100.0, 8.0, 13.0, 31), design_fir(100.0, 13.0, 30.0, 31)]
    data = rng.standard_normal((4, 500))
    whole = StreamingFilter(filters, np.array([2, 0]), 4).process(data)
    filt = StreamingFilter(filters, np.array([2, 0]), 4)
    parts = [filt.process(data[:, i : i + 37]) for i in range(0, 500, 37)]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), whole, rtol=1e-12, atol=1e-14)
    assert filt.n_processed == 500 and whole.shape == (4, 500)
    # An epoch padded by numtaps - 1 samples and filtered from zero equals the stream.
    start, n_pad = 200, 30
    epoch = data[None, [2, 0], start - n_pad : start + 50]
    np.testing.assert_allclose(
        filter_padded_epochs(filters, epoch, n_pad)[0],
        whole[:, start : start + 50],
        rtol=1e-10,
        atol=1e-12,
    )

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


@pytest.mark.parametrize(
    ("sfreq", "l_freq", "h_freq"),
    [
        (160.0, 8.0, 13.0),
        (160.0, 13.0, 30.0),
        (160.0, 32.0, 34.0),
        (100.0, None, 20.0),
        (160.0, 1.0, None),
        (250.0, 0.5, 40.0),
        (128.0, 1.0, 63.0),
    ],
)
def test_design_is_mnes_create_filter(sfreq, l_freq, h_freq):
    import mne

    kwargs = dict(method="fir", phase="zero", fir_window="hamming", fir_design="firwin")
    ref = mne.filter.create_filter(None, sfreq, l_freq, h_freq, **kwargs, verbose=False)
    np.testing.assert_array_equal(design_fir(sfreq, l_freq, h_freq), ref)
    # a longer filter (the band-power path's common length) too
    n = ref.size + 40
    ref = mne.filter.create_filter(
        None, sfreq, l_freq, h_freq, filter_length=n, **kwargs, verbose=False
    )
    np.testing.assert_array_equal(design_fir(sfreq, l_freq, h_freq, numtaps=n), ref)


def _gain(b, sfreq, freq):
    w = np.exp(-2j * np.pi * np.asarray(freq) / sfreq)
    return np.abs(np.polyval(b[::-1], w))


def test_each_edge_cuts_at_the_middle_of_its_own_transition():
    # 8-13 Hz at 160 Hz: transitions 2 Hz and 3.25 Hz, half amplitude at 7 and 14.625 Hz
    b = design_fir(160.0, 8.0, 13.0)
    np.testing.assert_allclose(_gain(b, 160.0, [7.0, 14.625]), 0.5, atol=0.01)
    assert _gain(b, 160.0, 14.0) > 0.7  # the old single-transition design cut here


def test_explicit_short_length_truncates_the_edges():
    b = design_fir(100.0, 8.0, 13.0, numtaps=31)  # each edge needs 165 taps
    assert b.size == 31
    np.testing.assert_allclose(b, b[::-1])
    assert _gain(b, 100.0, 10.5) > 2 * _gain(b, 100.0, 40.0)

"""Linear operators of the waveform path: resampling, baseline, bins, FIR as a matrix."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from sblr_rt.preprocessing.operators import (
    baseline_matrix,
    bin_edges,
    fir_matrix,
    resampling_matrix,
)


def test_resampling_is_anti_aliased_and_keeps_constants():
    R = resampling_matrix(400, 100)
    np.testing.assert_allclose(np.ones(400) @ R, np.ones(100))
    t = np.arange(400)
    slow = np.sin(2 * np.pi * 0.02 * t)  # 0.08 of the new rate: kept
    fast = np.sin(2 * np.pi * 0.2 * t)  # above the new Nyquist (0.125): removed
    assert np.abs(fast @ R)[10:-10].max() < 0.05
    centres = 4 * np.arange(100) + 1.5  # bin centres
    expected = np.sin(2 * np.pi * 0.02 * centres)
    np.testing.assert_allclose((slow @ R)[10:-10], expected[10:-10], atol=0.02)
    assert np.array_equal(resampling_matrix(50, 50), np.eye(50))


def test_baseline_matrix_removes_the_interval_mean():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 20)) + 5.0
    out = w @ baseline_matrix(20, 4, 9)
    np.testing.assert_allclose(out[:, 4:9].mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(
        out - w, np.broadcast_to(-w[:, 4:9].mean(axis=1, keepdims=True), w.shape)
    )


def test_bin_edges_cover_the_window():
    edges = bin_edges(10, 3)
    assert edges[0] == 0 and edges[-1] == 10 and np.all(np.diff(edges) >= 3)
    with pytest.raises(ValueError, match="time bins"):
        bin_edges(10, 11)


def test_fir_matrix_equals_lfilter_from_zero_state():
    rng = np.random.default_rng(1)
    b = rng.standard_normal(7)
    raw = rng.standard_normal(6 + 30)
    F = fir_matrix(b, 30, 6)
    np.testing.assert_allclose(F @ raw, signal.lfilter(b, [1.0], raw)[6:], rtol=1e-12)

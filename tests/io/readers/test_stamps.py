"""Timestamps of a file: gaps by the one gap rule, the effective rate ignores gaps."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.io.readers import _stamps


def test_file_gaps_are_jumps_over_a_tenth_of_a_second_and_ten_periods():
    # 100 Hz: the threshold is max(0.1 s, 10 periods) = 0.1 s
    steps = np.full(300, 0.01)
    steps[[50, 120, 200]] = [0.05, 0.25, 0.101]  # 0.05 s is jitter, not a gap
    stamps = 20.0 + np.cumsum(steps)
    found = _stamps.stamp_gaps(stamps, 100.0)
    assert [i for i, _ in found] == [120, 200]
    np.testing.assert_allclose([s for _, s in found], [0.24, 0.091])
    # 10 Hz: ten periods (1 s) is the threshold
    assert _stamps.stamp_gaps(np.r_[0.0, 0.1, 0.9, 2.5], 10.0) == [(3, pytest.approx(1.5))]


def test_effective_rate_leaves_gaps_out():
    stamps = np.r_[np.arange(100), np.arange(400, 500)] / 50.0
    gaps = _stamps.stamp_gaps(stamps, 50.0)
    assert gaps == [(100, pytest.approx(6.0))]
    assert _stamps.effective_rate(stamps, gaps) == pytest.approx(50.0)
    assert _stamps.effective_rate(stamps[:1], []) is None

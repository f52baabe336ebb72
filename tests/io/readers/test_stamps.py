"""Timestamps of a file: the gap rule is the streaming one, the effective rate ignores gaps."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.io.readers import _stamps
from sblr_rt.stream import gaps as stream_gaps


@pytest.mark.parametrize("sfreq", [10.0, 100.0, 160.0, 1000.0])
def test_file_gaps_follow_the_stream_rule(sfreq):
    rng = np.random.default_rng(int(sfreq))
    threshold = stream_gaps.gap_threshold(sfreq)
    steps = rng.choice([1 / sfreq] * 3 + [0.5 * threshold, 1.01 * threshold, 3.0], size=400)
    stamps = 50.0 + np.cumsum(steps)
    expected = stream_gaps.find_gaps(stamps, last=None, threshold=stream_gaps.gap_threshold(sfreq))
    found = _stamps.stamp_gaps(stamps, sfreq)
    assert [i for i, _ in found] == list(expected) and len(found) > 0
    np.testing.assert_allclose(
        [s for _, s in found], stamps[expected] - stamps[expected - 1] - 1 / sfreq
    )


def test_effective_rate_leaves_gaps_out():
    stamps = np.r_[np.arange(100), np.arange(400, 500)] / 50.0
    gaps = _stamps.stamp_gaps(stamps, 50.0)
    assert gaps == [(100, pytest.approx(6.0))]
    assert _stamps.effective_rate(stamps, gaps) == pytest.approx(50.0)
    assert _stamps.effective_rate(stamps[:1], []) is None

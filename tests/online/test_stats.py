"""The loop's small bounded statistics (numpy only)."""

from __future__ import annotations

import math

import numpy as np

from sblr_rt.online._stats import DecimatedRing, RecentValues


def test_recent_values_keep_only_the_horizon():
    values = RecentValues(horizon=10.0)
    assert values.summary(0.0)["n"] == 0 and math.isnan(values.summary(0.0)["p50"])
    for t in range(30):
        values.add(float(t), float(t))
    summary = values.summary(29.0)
    assert summary["n"] == 11  # t = 19 .. 29
    assert summary["max"] == 29.0 and summary["p50"] == 24.0
    assert 1.0 <= values.rate(29.0) <= 1.2
    assert values.summary(100.0)["n"] == 0


def test_decimated_ring_keeps_every_kth_sample_across_wraps():
    ring = DecimatedRing(3, step=4, capacity=5)
    data = np.arange(60 * 3, dtype=float).reshape(60, 3)
    times = np.arange(60) / 100.0
    start = 0
    for n in (1, 7, 0, 13, 2, 30, 7):  # irregular chunks, one longer than the ring
        ring.push(start, data[start : start + n], times[start : start + n])
        start += n
    got, t = ring.latest()
    kept = np.arange(0, 60, 4)[-5:]
    np.testing.assert_array_equal(got, data[kept].T)
    np.testing.assert_array_equal(t, times[kept])
    sub, _ = ring.latest(np.array([2, 0]))
    np.testing.assert_array_equal(sub, data[kept][:, [2, 0]].T)

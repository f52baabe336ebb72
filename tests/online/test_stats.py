"""The display decimation of the online loop (numpy only)."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online._stats import DecimatedRing, display_channels


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


def test_display_channels_by_name_or_index():
    names = ["C3", "Cz", "C4"]
    assert display_channels(None, names) == (None, names)
    idx, picked = display_channels(["C4", 0], names)
    assert idx.tolist() == [2, 0] and picked == ["C4", "C3"]
    with pytest.raises(ValueError, match="unknown 'Pz'"):
        display_channels(["Pz"], names)

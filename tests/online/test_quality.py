"""The online signal checks give calibration's rejection verdict on every window."""

from __future__ import annotations

import types

import numpy as np
import pytest
from sblr_rt.calibration.concerns import RejectionSettings
from sblr_rt.calibration.epochs import _reject_reason

from sblr_rt.online.quality import WindowQuality
from sblr_rt.online.run_info import RunInfo


def _quality(n_channels, n_times, config, capacity):
    model = types.SimpleNamespace(pick_indices=np.arange(n_channels))  # reads every channel
    run_info = RunInfo.from_metadata({"config": config})
    clf = types.SimpleNamespace(
        model=model, run_info=run_info, ch_names=list(range(n_channels)), n_times_raw=n_times
    )
    return WindowQuality(clf, capacity)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_every_window_gets_calibrations_verdict(seed, chunk):
    rng = np.random.default_rng(seed)
    n, n_ch, n_times = 1200, 5, 50
    data = np.round(rng.standard_normal((n, n_ch)), 1)
    data[0] = 9.0  # the extremes are reached first: online "so far" = the recording's
    data[1] = -9.0
    for _ in range(6):  # flat stretches, stuck runs at an extreme, rising runs
        c, k, length = rng.integers(n_ch), rng.integers(2, n - 80), rng.integers(3, 70)
        kind = rng.integers(3)
        if kind == 0:
            data[k : k + length, c] = data[k, c]
        elif kind == 1:
            data[k : k + length, c] = rng.choice([9.0, -9.0])
        else:
            data[k : k + length, c] = np.linspace(0, 8.9, length)
    config = {"flat": 0.0, "clip_run": 5, "reject": None}
    quality = _quality(n_ch, n_times, config, capacity=n)
    for k in range(0, n, chunk):
        quality.push(data[k : k + chunk])
    gmax, gmin = data.max(axis=0), data.min(axis=0)
    rejection = RejectionSettings(**config)
    for stop in range(n_times, n + 1):
        expected = _reject_reason(data[stop - n_times : stop].T, gmin, gmax, rejection)
        assert quality.reason(stop) == expected, stop


def test_thresholds_of_the_model_read_the_window():
    data = np.random.default_rng(0).standard_normal((300, 3))
    data[100:160, 1] *= 1e-3  # nearly flat, not exactly
    data[200, 2] = 40.0
    quality = _quality(3, 50, {"flat": 0.05, "clip_run": None, "reject": 20.0}, 300)
    quality.push(data)
    assert quality.reason(150) == "flat"
    assert quality.reason(230) == "amplitude"
    assert quality.reason(80) is None
    assert quality.channels(150, "flat", ["a", "b", "c"]) == ["b"]


def test_an_infinite_sample_is_no_extreme_for_the_clipping_rule():
    data = np.random.default_rng(1).standard_normal((400, 2))
    data[50, 0] = np.inf  # a non-finite burst (refused on its own as a gap)
    data[200:260, 0] = 5.0  # railed later: the largest finite value the channel sent
    quality = _quality(2, 50, {"flat": 0.0, "clip_run": 5, "reject": None}, 400)
    quality.push(data)
    assert quality.reason(230) == "clipped"
    assert quality.reason(262) == "clipped"

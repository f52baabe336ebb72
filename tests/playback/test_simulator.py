"""The simulator: deterministic generator, paradigm, class patterns, argument checks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import signal

from sblr_rt.montage import BERLIN_118
from sblr_rt.playback.simulator import Simulator, simulator_channels


def test_deterministic_and_chunk_invariant():
    a, ma = Simulator(sfreq=250.0, n_channels=32, seed=7).read(5000)
    sim = Simulator(sfreq=250.0, n_channels=32, seed=7)
    rng = np.random.default_rng(0)
    parts, markers, n = [], [], 0
    while n < 5000:
        k = int(min(rng.integers(0, 97), 5000 - n))
        d, m = sim.read(k)
        parts.append(d)
        markers += m
        n += k
    np.testing.assert_array_equal(np.concatenate(parts), a)
    assert markers == ma and sim.n_read == 5000
    b, mb = Simulator(sfreq=250.0, n_channels=32, seed=8).read(5000)
    assert not np.allclose(a, b) and mb != ma


def test_channels_and_amplitude():
    sim = Simulator(sfreq=200.0, seed=0)
    assert sim.ch_names == list(BERLIN_118)
    data, _ = sim.read(4000)
    assert data.shape == (4000, 118) and data.dtype == np.float64
    assert 3e-6 < data.std() < 3e-5  # volts, EEG-like
    assert {"C3", "Cz", "C4"} <= set(simulator_channels(3))
    assert simulator_channels(120)[-2:] == ["EEG119", "EEG120"]
    d, _ = Simulator(sfreq=100.0, n_channels=120, seed=0).read(100)
    assert d.shape == (100, 120) and np.all(np.isfinite(d))


def test_paradigm_balanced_and_timed():
    kwargs = dict(sfreq=100.0, n_channels=8, classes=["left", "right", "feet"], seed=3,
                  first_cue=1.0, trial_duration=2.0, iti=(1.0, 1.5))  # fmt: skip
    sim = Simulator(**kwargs)
    _, markers = sim.read(100 * 300)
    samples = np.array([m[0] for m in markers])
    assert samples[0] == 100
    gaps = np.diff(samples) / 100.0
    assert gaps.min() >= 3.0 - 1e-9 and gaps.max() <= 3.5 + 1e-9
    counts = Counter(v for _, v in markers[:24])  # two complete blocks of 12
    assert counts == {"left": 8, "right": 8, "feet": 8}
    _, again = Simulator(**kwargs).read(100 * 300)
    assert again == markers


def test_class_patterns_erd_and_slow_potential():
    sfreq = 250.0
    sim = Simulator(sfreq=sfreq, n_channels=32, seed=11, erd=0.6)
    data, markers = sim.read(int(240 * sfreq))
    ch = sim.ch_names
    sos = signal.butter(4, [9, 13], "bandpass", fs=sfreq, output="sos")
    mu = signal.sosfiltfilt(sos, data, axis=0) ** 2
    lowpass = signal.sosfiltfilt(signal.butter(2, 3, fs=sfreq, output="sos"), data, axis=0)
    c3, c4 = ch.index("C3"), ch.index("C4")
    ratio, slow = {}, {}
    for cls in ("left", "right"):
        starts = [s for s, v in markers if v == cls and s + 4 * sfreq < len(data)]
        during = np.mean([mu[s + 250 : s + 1000] for s in starts], axis=(0, 1))
        before = np.mean([mu[s - 375 : s] for s in starts], axis=(0, 1))
        ratio[cls] = during / before
        slow[cls] = np.mean([lowpass[s + 150 : s + 250].mean(0) - lowpass[s - 100 : s].mean(0)
                             for s in starts], axis=0)  # fmt: skip
    # left hand imagery -> mu drop over the right motor cortex (C4), right -> C3
    assert ratio["left"][c4] < 0.6 * ratio["left"][c3]
    assert ratio["right"][c3] < 0.6 * ratio["right"][c4]
    # slow negative potential with the same lateralisation
    assert slow["left"][c4] < slow["left"][c3] - 1e-6
    assert slow["right"][c3] < slow["right"][c4] - 1e-6


def test_argument_errors():
    with pytest.raises(ValueError, match="'classes'"):
        Simulator(classes=["left"])
    with pytest.raises(ValueError, match="'sfreq'"):
        Simulator(sfreq=10)
    with pytest.raises(ValueError, match="'n_channels'"):
        Simulator(n_channels=0)
    with pytest.raises(ValueError, match="'iti'"):
        Simulator(iti=(3, 1))

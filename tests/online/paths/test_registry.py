"""Adding a streaming path is a class and a registry entry, nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier, StreamingPath
from sblr_rt.online.paths import PATHS, fast_path_for, path_class
from sblr_rt.online.paths.base import skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer


class MeanPath(StreamingPath):
    """A toy path: the score is the mean of channel 0 over the window."""

    name = "mean"
    features = "toy"

    def __init__(self, scoring, capacity):
        super().__init__(scoring, capacity)
        self.ring = RingBuffer(1, capacity)
        self.breaks = 0

    def push(self, chunk):
        self.ring.push(chunk[:, :1], np.zeros(len(chunk)))

    def skip(self, n):
        skip_rows(self.ring, n)

    def mark_break(self):
        self.breaks += 1

    def scores(self, stop):
        window, _ = self.ring.get(stop - self.scoring.n_times_raw, stop)
        return np.array([window.mean()])


def test_a_registered_path_is_driven_by_the_streaming_state(make_model, monkeypatch):
    monkeypatch.setitem(PATHS, MeanPath.name, MeanPath)
    assert fast_path_for("toy") is MeanPath and fast_path_for("waveform").name == "projected"
    clf = OnlineClassifier(make_model())
    with pytest.raises(ValueError, match="'path'='mean' needs the toy feature path"):
        clf.streaming(path="mean")
    monkeypatch.setattr(MeanPath, "features", None)
    state = clf.streaming(path="mean")
    n = clf.n_times_raw
    data = np.random.default_rng(0).standard_normal((2 * n, len(clf.ch_names)))
    data[5, 0] = np.inf
    state.push(data, np.arange(2 * n) / clf.sfreq)
    state.mark_break()
    assert state.feature_path.breaks == 1
    assert state.why_not(n) == "nonfinite"
    decision = state.decide(2 * n)
    assert decision["score"] == pytest.approx(data[n:, 0].mean())


def test_unknown_path_names_are_refused():
    with pytest.raises(ValueError, match="'path' must be one of"):
        path_class("spectral")

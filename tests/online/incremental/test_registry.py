"""Adding an incremental form is a class and a registry entry, nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online import IncrementalForm, OnlineClassifier, Telemetry
from sblr_rt.online.incremental import FORMS, form_class, form_for
from sblr_rt.online.incremental.form import skip_rows
from sblr_rt.stream.ring_buffer import RingBuffer


class MeanForm(IncrementalForm):
    """A toy form: the score is the mean of channel 0 over the window."""

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


def test_a_registered_form_is_driven_by_the_streaming_state(make_model, monkeypatch):
    monkeypatch.setitem(FORMS, MeanForm.name, MeanForm)
    assert form_for("toy") is MeanForm and form_for("waveform").name == "projected"
    clf = OnlineClassifier(make_model())
    with pytest.raises(ValueError, match="'form'='mean' needs the toy feature path"):
        clf.streaming(form="mean")
    monkeypatch.setattr(MeanForm, "features", None)
    state = clf.streaming(form="mean")
    n = clf.n_times_raw
    data = np.random.default_rng(0).standard_normal((2 * n, len(clf.ch_names)))
    data[5, 0] = np.inf
    state.push(data, np.arange(2 * n) / clf.sfreq)
    state.mark_break()
    assert state.incremental_form.breaks == 1
    assert state.why_not(n) == "nonfinite"
    decision = state.decide(2 * n)
    assert decision["score"] == pytest.approx(data[n:, 0].mean())


def test_unknown_form_names_are_refused():
    with pytest.raises(ValueError, match="'form' must be one of"):
        form_class("spectral")


def test_the_old_path_names_still_work_and_warn(make_model):
    """``path`` (keyword and attribute) is the deprecated name of ``form`` (CHANGELOG)."""
    clf = OnlineClassifier(make_model())
    window = np.zeros((len(clf.ch_names), clf.n_times_raw))
    with pytest.warns(DeprecationWarning, match="'path' is deprecated: it is renamed 'form'"):
        state = clf.streaming(path="plain")
    assert state.form == "plain"
    with pytest.warns(DeprecationWarning, match="renamed 'form'"):
        assert state.path == "plain"
    with pytest.warns(DeprecationWarning, match="renamed 'incremental_form'"):
        assert state.feature_path is state.incremental_form
    with pytest.warns(DeprecationWarning, match="renamed 'form'"):
        assert clf.path == clf.form == "folded"
    with pytest.warns(DeprecationWarning, match="renamed 'auto_form'"):
        assert clf.path_class() is clf.auto_form() is FORMS["projected"]
    with pytest.warns(DeprecationWarning, match="renamed 'form'"):
        old = clf.decision_function(window, path="plain")
    np.testing.assert_array_equal(old, clf.decision_function(window, form="plain"))
    with pytest.warns(DeprecationWarning, match="renamed 'form'"):
        assert clf.step(window, path="folded")["label"] == clf.step(window)["label"]
    with pytest.raises(TypeError, match="give 'form' only"):
        clf.decision_function(window, form="plain", path="folded")
    with pytest.warns(DeprecationWarning, match="renamed 'form'"):
        assert Telemetry(form="projected").path == "projected"

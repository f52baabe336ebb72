"""The streaming state on arrays only (no LSL): equals the pure step, gaps, non-finite."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online.classifier import OnlineClassifier
from sblr_rt.online.streaming import StreamingState, count_nonfinite


def _feed(state, data, times, rng, max_chunk=37):
    """Push ``data`` (n_samples, n_channels) in irregular chunks, some empty."""
    i = 0
    while i < len(data):
        n = int(rng.integers(0, max_chunk))
        state.push(data[i : i + n], times[i : i + n])
        i += n


@pytest.mark.parametrize("fast", [True, False])
def test_streaming_equals_step_on_the_same_samples(case_model, fast):
    """Projected/filtered streaming decisions equal the pure step on the same samples."""
    model = case_model
    clf = OnlineClassifier(model, fast=fast)
    rng = np.random.default_rng(3)
    n_total = 3 * clf.n_times_raw + 101
    data = rng.standard_normal((n_total, len(clf.ch_names)))
    times = 100.0 + np.arange(n_total) / clf.sfreq
    state = clf.streaming(capacity=clf.n_times_raw + 150)
    fast_forms = {
        "waveform": "projected",
        "bandpower": "filtered",
        "covariance": "filtered-covariance",
        "ensemble": "ensemble",
    }
    expected_form = fast_forms[model.features] if fast else "plain"
    assert state.form == expected_form
    stops = sorted(rng.choice(np.arange(clf.n_times_raw, n_total + 1), 12, replace=False))
    stops[-1] = n_total
    pushed = 0
    for stop in stops:
        _feed(state, data[pushed:stop], times[pushed:stop], rng)
        pushed = stop
        assert state.n_pushed == stop
        back = int(rng.integers(0, 100))  # a window ending a little before the newest
        for s in (stop, stop - back):
            if s < clf.n_times_raw:
                continue
            assert state.why_not(s) is None
            got = state.decide(s, trial=True, cue="x")
            window = data[s - clf.n_times_raw : s].T
            ref = model.decision_function(window[None])[0]
            np.testing.assert_allclose(got["score"], ref, rtol=1e-9, atol=1e-9)
            assert got["label"] == model.predict(window[None])[0]
            assert got["window_end"] == times[s - 1]
            assert got["trial"] and got["cue"] == "x"
    assert state.why_not(n_total + 1) == "future"
    assert state.why_not(n_total - clf.n_times_raw - 151 + clf.n_times_raw) == "unavailable"


def test_projected_state_buffers_only_r_virtual_channels(make_model):
    clf = OnlineClassifier(make_model(rank=3, n_classes=3))
    state = clf.streaming()
    assert state.incremental_form.n_columns == 3 * 3  # rank x classes, not 6 raw channels


def test_streaming_nan_and_breaks(make_model):
    model = make_model(features="bandpower")
    for fast in (True, False):
        clf = OnlineClassifier(model, fast=fast)
        n = clf.n_times_raw
        rng = np.random.default_rng(5)
        data = rng.standard_normal((4 * n, len(clf.ch_names)))
        times = np.arange(4 * n) / clf.sfreq
        data[n + 10, 2] = np.nan
        state = clf.streaming(capacity=2 * n)
        assert count_nonfinite(data) == 1
        state.push(data[: 2 * n], times[: 2 * n])
        assert state.why_not(n) is None
        assert state.why_not(n + 11) == "nonfinite"
        assert state.why_not(2 * n) == "nonfinite"
        state.mark_break()
        state.push(data[2 * n : 3 * n + 5], times[2 * n : 3 * n + 5])
        assert state.why_not(3 * n - 1) == "gap"  # straddles the break
        assert state.why_not(3 * n) is None  # starts right after it
        # After a break, the window equals the pure step on the same samples.
        ref = model.decision_function(data[2 * n : 3 * n].T[None])[0]
        np.testing.assert_allclose(state.decide(3 * n)["score"], ref, rtol=1e-9)
        state.skip(7)
        assert state.n_pushed == 3 * n + 12
        assert state.why_not(3 * n + 12) == "gap"
        with pytest.raises(ValueError, match="cannot be classified: gap"):
            state.decide(3 * n + 12)
        # The NaN is forgotten once it leaves the history.
        state.push(np.nan_to_num(data[: 2 * n]), times[: 2 * n] + 100)
        assert not state._bad_runs and len(state._breaks) <= 1


def test_trial_stop_aligns_cues_to_samples(make_model):
    model = make_model(tmin=-0.2, tmax=0.8, l_freq=2.0, h_freq=30.0)
    clf = OnlineClassifier(model)
    state = clf.streaming(capacity=3 * clf.n_times_raw)
    t0 = 1000.0
    n_total = 2 * clf.n_times_raw
    times = t0 + np.arange(n_total) / clf.sfreq
    assert state.trial_stop(t0) is None
    state.push(np.zeros((n_total, len(clf.ch_names))), times)
    onset = clf.n_times_raw
    cue = t0 + onset / clf.sfreq + 0.3 / clf.sfreq  # nearest sample: onset
    stop = state.trial_stop(cue)
    assert stop == onset + round(0.8 * clf.sfreq)
    # The raw epoch's convention (BCIModel): n_pad samples before onset + tmin.
    assert stop - clf.n_times_raw == onset + round(-0.2 * clf.sfreq) - clf.n_pad
    assert state.trial_stop(t0 + (onset + 0.7) / clf.sfreq) == stop + 1
    assert state.trial_stop(times[-1] + 1.0) is None
    assert state.trial_stop(t0 - 5.0) == -1


def test_streaming_state_rejects_bad_configuration(make_model):
    clf = OnlineClassifier(make_model())
    with pytest.raises(ValueError, match="'capacity' must hold at least one window"):
        clf.streaming(capacity=clf.n_times_raw - 1)
    with pytest.raises(ValueError, match="'form'='filtered' needs the bandpower"):
        StreamingState(clf, form="filtered")
    with pytest.raises(ValueError, match="'form' must be one of"):
        StreamingState(clf, form="magic")
    state = clf.streaming()
    with pytest.raises(ValueError, match="'chunk' must have shape"):
        state.push(np.zeros((3, 2)), np.zeros(3))


def test_run_centring_counts_the_trials_and_leaves_sliding_windows_out(make_model):
    """Trials move the run's mean; sliding windows are only scored from it."""
    from sblr_rt.model.run_centring import RunCentring

    base = make_model()
    model = type(base)(
        preprocessor=base.preprocessor,
        estimator=base.estimator,
        classes=base.classes,
        run_centring=RunCentring([0.0], [0.0], warmup=1.0),
    )
    clf = OnlineClassifier(model)
    rng = np.random.default_rng(5)
    n = 3 * clf.n_times_raw
    state = clf.streaming(capacity=n)
    data = rng.standard_normal((n, len(clf.ch_names))) + 3.0
    state.push(data, 100.0 + np.arange(n) / 100)
    raw = model.decision_function(data[: clf.n_times_raw].T[None])
    slide = state.decide(clf.n_times_raw)["score"]
    assert state.run_centring.n_trials == 0 and slide == pytest.approx(raw[0])
    first = state.decide(clf.n_times_raw, trial=True)["score"]
    assert state.run_centring.n_trials == 1 and first == pytest.approx(raw[0] / 2)
    off = OnlineClassifier(model, recentre=False).streaming(capacity=n)
    assert off.run_centring is None

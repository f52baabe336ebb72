"""What a broken world does to the online loop: cue times, dead electrodes, clock jumps.

On the in-memory fakes of ``conftest.py`` (no LSL, no thread): a decision is only ever
made on the samples its cue names, windows of flat or clipped channels get none, a jump of
the stream's clock is one gap, and large chunks lose no trial.
"""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier, OnlineLoop
from sblr_rt.online.scheduler import CUE_AHEAD, CUE_EXPIRY

from .test_loop_step import _run

SFREQ = 100.0


def _setup(fakes, model, n_total, *, ts=None, hop=0.1, seed=0):
    clf = OnlineClassifier(model)
    data = np.random.default_rng(seed).standard_normal((n_total, len(clf.ch_names)))
    times = 50.0 + np.arange(n_total) / SFREQ if ts is None else ts
    source = fakes.Source(data, times, clf.ch_names, SFREQ)
    markers, sink, clock = fakes.Markers(), fakes.Sink(), fakes.Clock(times[0])
    loop = OnlineLoop(
        clf, source, markers=markers, sink=sink, clock=clock, mode="trial", hop=hop,
        cues=["class0", "class1"],
    )  # fmt: skip
    return loop.start(thread=False), source, markers, clock


def _check_trial(model, source, decision, onset):
    """The trial decision is the model's on the window its cue names, exactly."""
    stop = onset + round(model.preprocessor.tmax * SFREQ)
    assert decision["window_stop_index"] == stop
    window = source.data[stop - model.n_times_raw : stop].T[None]
    np.testing.assert_allclose(decision["score"], model.decision_function(window)[0], rtol=1e-9)


def _trials(loop):
    return [d for d in loop.pop_decisions() if d["trial"]]


@pytest.mark.parametrize("offset", [1e6, CUE_AHEAD + 5.0, np.inf, np.nan])
def test_a_cue_stamped_far_ahead_is_refused_and_later_trials_are_decided(
    make_model, fakes, caplog, offset
):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers, clock = _setup(fakes, model, 5 * n)
    caplog.set_level(logging.WARNING, "sblr_rt.online")
    _run(loop, source, clock, until=n)
    markers.add(source.timestamps[n - 1] + offset, "class0")
    markers.add(source.timestamps[n + 10], "class1")
    markers.add(source.timestamps[2 * n + 10], "class0")
    _run(loop, source, clock)
    trials = _trials(loop)
    assert [d["cue"] for d in trials] == ["class1", "class0"]
    _check_trial(model, source, trials[0], n + 10)
    _check_trial(model, source, trials[1], 2 * n + 10)
    snap = loop.snapshot()
    assert snap.refused_cues.far == 1 and snap.refused_cues.total == 1
    assert loop._scheduler.pending_cues == []
    assert sum("No decision for the trial at cue 'class0'" in r.getMessage()
               for r in caplog.records) == 1  # fmt: skip


@pytest.mark.parametrize("age", [8.0, 100.0, 1e5])
def test_a_cue_whose_samples_are_gone_is_refused_never_decided_on_other_data(
    make_model, fakes, age
):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers, clock = _setup(fakes, model, 10 * n)
    _run(loop, source, clock, until=9 * n)
    markers.add(source.timestamps[9 * n - 1] - age, "class0")  # held no longer
    markers.add(source.timestamps[9 * n - 20], "class1")
    _run(loop, source, clock)
    trials = _trials(loop)
    assert [d["cue"] for d in trials] == ["class1"]
    _check_trial(model, source, trials[0], 9 * n - 20)
    assert loop.snapshot().refused_cues.unavailable == 1


def test_a_cue_in_a_gap_names_no_samples_and_is_refused(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    ts = 50.0 + np.arange(6 * n) / SFREQ
    ts[2 * n :] += 5.0  # 5 s without samples
    loop, source, markers, clock = _setup(fakes, model, 6 * n, ts=ts)
    markers.add(ts[2 * n - 1] + 2.5, "class0")  # in the middle of the gap
    markers.add(ts[3 * n + 5], "class1")
    _run(loop, source, clock)
    trials = _trials(loop)
    assert [d["cue"] for d in trials] == ["class1"]
    _check_trial(model, source, trials[0], 3 * n + 5)
    assert loop.snapshot().refused_cues.unavailable == 1


def test_pending_cues_expire_when_their_window_never_comes(make_model, fakes, caplog):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers, clock = _setup(fakes, model, 3 * n)
    _run(loop, source, clock, until=2 * n)
    markers.add(source.timestamps[2 * n - 1] + 5.0, "class0")  # ahead, within CUE_AHEAD
    loop.step_once()
    assert len(loop._scheduler.pending_cues) == 1
    clock.t += 5.0 + model.preprocessor.tmax + CUE_EXPIRY / 2  # the stream stalled
    loop.step_once()
    assert len(loop._scheduler.pending_cues) == 1
    clock.t += CUE_EXPIRY
    loop.step_once()
    assert loop._scheduler.pending_cues == []
    assert loop.snapshot().refused_cues.expired == 1
    assert any("never delivered" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("seconds", [10.0, 30.0])
def test_large_chunks_lose_no_trial_decision(make_model, fakes, seconds):
    model = make_model()
    n_chunk = int(seconds * SFREQ)
    loop, source, markers, clock = _setup(fakes, model, 3 * n_chunk)
    onsets = list(range(50, 2 * n_chunk, 137))
    for k in range(3):  # each chunk with the cues shown while it was recorded
        for onset in onsets:
            if k * n_chunk <= onset < (k + 1) * n_chunk:
                markers.add(source.timestamps[onset], f"class{onsets.index(onset) % 2}")
        _run(loop, source, clock, chunk=n_chunk, until=(k + 1) * n_chunk)
    trials = _trials(loop)
    assert len(trials) == len(onsets)
    for decision, onset in zip(trials, onsets, strict=True):
        _check_trial(model, source, decision, onset)
    snap = loop.snapshot()
    assert snap.dropped.trials == 0 and snap.refused_cues.total == 0


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("flat", "flat"), ("railed", "flat"), ("zeros", "flat"), ("clipped", "clipped")],
)
def test_windows_of_dead_or_saturated_channels_get_no_decision(
    make_model, fakes, caplog, fault, reason
):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers, clock = _setup(fakes, model, 8 * n)
    bad = slice(3 * n, 5 * n)
    if fault == "flat":
        source.data[bad, 2] = source.data[3 * n, 2]
    elif fault == "railed":  # several channels at the amplifier's rail
        source.data[bad, :4] = 0.4
    elif fault == "zeros":  # every channel disconnected
        source.data[bad] = 0.0
    else:  # stuck at the largest value it sends, with signal around
        source.data[:, 1] = np.clip(source.data[:, 1], -10, 10)
        source.data[3 * n + 20 : 3 * n + 40, 1] = 4.0
        source.data[: 3 * n, 1] = np.clip(source.data[: 3 * n, 1], -3.9, 3.9)
        source.data[3 * n + 40 :, 1] = np.clip(source.data[3 * n + 40 :, 1], -3.9, 3.9)
    markers.add(source.timestamps[3 * n + 30], "class0")  # a trial in the bad stretch
    markers.add(source.timestamps[6 * n + 10], "class1")
    caplog.set_level(logging.INFO, "sblr_rt.online")
    _run(loop, source, clock)
    decisions = loop.pop_decisions()
    lo, hi = (3 * n, 5 * n) if fault != "clipped" else (3 * n + 20, 3 * n + 40)
    for d in decisions:  # calibration's rules: flat over the window, clipped 5 samples
        start, stop = d["window_start_index"], d["window_stop_index"]
        if fault == "clipped":
            assert min(stop, hi) - max(start, lo) < 5, d
        else:
            assert not (lo <= start and stop <= hi), d
    assert [d["cue"] for d in decisions if d["trial"]] == ["class1"]
    assert any(d["window_start_index"] >= hi for d in decisions if not d["trial"])
    snap = loop.snapshot()
    assert getattr(snap.dropped, reason) >= 2  # the trial and sliding windows
    warned = [r for r in caplog.records if f"has {reason} channels" in r.getMessage()]
    assert len(warned) == 1  # once per stretch
    assert any("usable again" in r.getMessage() for r in caplog.records)


def test_the_rejection_settings_of_the_model_apply(make_model, fakes):
    model = copy.copy(make_model())  # the cached model stays as it is
    model.metadata = {"config": {"reject": 3.0, "clip_run": None, "flat": 0.0}}
    n = model.n_times_raw
    loop, source, _, clock = _setup(fakes, model, 4 * n)
    source.data[2 * n, 0] = 50.0  # one spike beyond the 3.0 peak-to-peak limit
    _run(loop, source, clock)
    snap = loop.snapshot()
    assert snap.dropped.amplitude >= 1
    assert all(
        not (d["window_start_index"] <= 2 * n < d["window_stop_index"]) for d in snap.decisions
    )


@pytest.mark.parametrize("step", [-5.0, -0.5, 3600.0])
def test_a_clock_jump_is_one_gap_and_trials_resume_on_the_new_timeline(
    make_model, fakes, caplog, step
):
    model = make_model()
    n = model.n_times_raw
    ts = 50.0 + np.arange(8 * n) / SFREQ
    ts[3 * n :] += step
    loop, source, markers, clock = _setup(fakes, model, 8 * n, ts=ts)
    caplog.set_level(logging.WARNING, "sblr_rt.online")
    markers.add(ts[n + 10], "class0")
    _run(loop, source, clock, until=3 * n + 5)
    markers.add(ts[4 * n + 10], "class1")  # on the new timeline
    _run(loop, source, clock)
    trials = _trials(loop)
    assert [d["cue"] for d in trials] == ["class0", "class1"]
    _check_trial(model, source, trials[0], n + 10)
    _check_trial(model, source, trials[1], 4 * n + 10)
    snap = loop.snapshot()
    assert snap.n_gaps == 1
    assert sum("Gap of" in r.getMessage() for r in caplog.records) == 1
    decisions = snap.decisions
    assert any(d["window_start_index"] >= 3 * n for d in decisions)  # decisions resume
    assert not any(d["window_start_index"] < 3 * n < d["window_stop_index"] for d in decisions)


def test_a_far_cue_that_came_before_any_eeg_is_refused_once_eeg_arrives(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers, clock = _setup(fakes, model, 3 * n)
    markers.add(source.timestamps[0] + 1e6, "class0")
    markers.add(source.timestamps[n + 5], "class1")
    loop.step_once()  # no sample yet: nothing to judge the cue by
    _run(loop, source, clock)
    assert [d["cue"] for d in _trials(loop)] == ["class1"]
    assert loop.snapshot().refused_cues.far == 1 and loop._scheduler.pending_cues == []

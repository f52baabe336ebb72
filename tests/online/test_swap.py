"""Switching models between two decisions (no gap), the model version, the trial tap."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pylsl
import pytest

from sblr_rt.online import OnlineClassifier, OnlineLoop
from sblr_rt.stream import EEGOutlet

SFREQ = 100.0
DEADLINE = 20.0


def _fake_loop(fakes, model, n_total, *, mode="sliding", hop=0.1, cues=None, seed=0, **kw):
    clf = OnlineClassifier(model)
    data = np.random.default_rng(seed).standard_normal((n_total, len(clf.ch_names)))
    times = 50.0 + np.arange(n_total) / SFREQ
    source = fakes.Source(data, times, clf.ch_names, SFREQ)
    markers = fakes.Markers() if mode == "trial" else None
    loop = OnlineLoop(
        clf,
        source,
        markers=markers,
        sink=fakes.Sink(),
        clock=fakes.Clock(times[0]),
        mode=mode,
        hop=hop,
        cues=cues,
        **kw,
    )
    return loop.start(thread=False), source, markers


def _run(loop, source, until, chunk=5):
    while source.sent < until:
        source.send(min(chunk, until - source.sent))
        loop.clock.t = source.timestamps[source.sent - 1] + 0.002
        loop.step_once()


def _score(model, data, stop):
    return model.decision_function(data[stop - model.n_times_raw : stop].T[None])[0]


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_swap_between_two_decisions_skips_no_hop(make_model, fakes, features):
    old, new = make_model(features=features), make_model(features=features, seed=5, rank=2)
    n = old.n_times_raw
    loop, source, _ = _fake_loop(fakes, old, 4 * n)
    half, end = 5 * (2 * n // 5), 5 * (4 * n // 5)  # chunks of 5 samples, hops of 10
    _run(loop, source, half)
    loop.swap_model(new, version=7)
    assert loop.swap_pending and loop.model_version == 0
    _run(loop, source, end)
    assert not loop.swap_pending and loop.model_version == 7
    decisions = loop.pop_decisions()
    stops = [d["window_stop_index"] for d in decisions]
    assert set(np.diff(stops)) == {10}  # every hop decided, across the switch
    versions = [d["model_version"] for d in decisions]
    k = versions.index(7)
    assert set(versions[:k]) == {0} and set(versions[k:]) == {7}
    assert stops[k] > half  # the first decision after the swap was offered
    for d in decisions:  # each decision is its own version's model on its window
        model = old if d["model_version"] == 0 else new
        np.testing.assert_allclose(d["score"], _score(model, source.data, d["window_stop_index"]))
    snap = loop.snapshot()
    assert snap.dropped.total == 0 and snap.model_version == 7
    assert all(json.loads(s)["model_version"] in (0, 7) for s in loop.sink.sent)


def test_a_pending_trial_is_decided_by_the_new_model(make_model, fakes):
    old, new = make_model(), make_model(seed=3)
    n = old.n_times_raw
    loop, source, markers = _fake_loop(fakes, old, 4 * n, mode="trial", hop=0.0)
    _run(loop, source, n + 10)
    markers.add(source.timestamps[n], "class1")  # its window ends at 2 n
    _run(loop, source, n + 40)
    loop.swap_model(new)  # the version the model names: 0 (no adaptation metadata)
    _run(loop, source, 3 * n)
    (d,) = loop.pop_decisions()
    assert d["trial"] and d["window_stop_index"] == 2 * n
    np.testing.assert_allclose(d["score"], _score(new, source.data, 2 * n))


def test_swap_needs_a_running_loop_and_a_matching_model(make_model, fakes):
    model = make_model()
    loop, _, _ = _fake_loop(fakes, model, 2 * model.n_times_raw)
    with pytest.raises(ValueError, match="EEG007"):  # a channel the stream lacks
        loop.swap_model(make_model(n_channels=8))
    loop.stop()
    with pytest.raises(RuntimeError, match="Start the loop"):
        loop.swap_model(model)


def test_the_tap_hands_out_labelled_trials_with_their_samples(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    loop, source, markers = _fake_loop(
        fakes, model, 5 * n, mode="trial", hop=0.0, cues="class0,class1,nothing", keep_trials=True
    )
    _run(loop, source, n + 250)
    for k, value in enumerate(["class1", "nothing", "class0"]):
        markers.add(source.timestamps[n + 20 + 60 * k], value)
    _run(loop, source, 5 * n)
    trials = loop.pop_trials(seconds_before=1.0)
    assert [t.cue for t in trials] == ["class1", "nothing", "class0"]
    assert [t.label for t in trials] == ["class1", None, "class0"]  # "nothing" names no class
    assert [t.index for t in trials] == [0, 1, 2] and loop.pop_trials() == []
    decisions = loop.pop_decisions()
    for t, d in zip(trials, decisions, strict=True):
        stop = d["window_stop_index"]
        start = stop - n - 100
        np.testing.assert_array_equal(t.data, source.data[start:stop].T)
        assert t.predicted == d["label"] and t.model_version == 0
        assert t.cue_offset == pytest.approx(t.t_cue - source.timestamps[start])
    with pytest.raises(ValueError, match="keep_trials"):
        _fake_loop(fakes, model, n, keep_trials=True)


def test_a_trial_decided_early_still_hands_its_tmax_epoch_to_the_tap(make_model, fakes):
    """--early with --adapt: one published decision per trial, the tap gets the full epoch."""
    from sblr_rt.online import Smoothing

    model = make_model()
    n = model.n_times_raw
    loop, source, markers = _fake_loop(
        fakes,
        model,
        5 * n,
        mode="trial",
        hop=0.1,
        cues="class0,class1",
        keep_trials=True,
        smoothing=Smoothing("ema", tau=0.2, early=0.5001),  # every trial stops at once
    )
    _run(loop, source, 2 * n)
    onset = 2 * n - 5  # the cue arrives before its window is in: sliding decisions first
    markers.add(source.timestamps[onset], "class1")
    _run(loop, source, 5 * n)
    trial_decisions = [d for d in loop.pop_decisions() if d["trial"]]
    assert [d["early"] for d in trial_decisions] == [True]  # no second decision at tmax
    (trial,) = loop.pop_trials(seconds_before=1.0)
    assert trial.cue == "class1" and trial.predicted == trial_decisions[0]["label"]
    assert trial.data.shape[1] == n + 100  # the cue's whole window, not the early one
    assert trial_decisions[0]["window_stop_index"] < onset + n


class _Pusher:
    """Push rows of ``data`` in chunks of 7 at ``rate`` samples per second."""

    def __init__(self, outlet, data, rate):
        self.outlet, self.data, self.rate = outlet, data, rate
        self.t0, self.sent = None, 0

    def until(self, stop):
        if self.t0 is None:
            self.t0 = pylsl.local_clock()
        while self.sent < stop:
            k = min(7, stop - self.sent)
            stamps = self.t0 + np.arange(self.sent, self.sent + k) / self.rate
            self.outlet.push_chunk(self.data[self.sent : self.sent + k], stamps)
            self.sent += k
            time.sleep(max(0.0, self.t0 + self.sent / self.rate - pylsl.local_clock()))


@pytest.mark.lsl
def test_swap_over_lsl_while_the_worker_runs(make_model, source_id, wait):
    """Over real LSL, a model swapped from another thread takes over between two hops."""
    old, new = make_model(), make_model(seed=9, rank=2)
    clf = OnlineClassifier(old)
    n_total = 8 * clf.n_times_raw
    data = np.random.default_rng(1).standard_normal((n_total, len(clf.ch_names)))
    eeg = EEGOutlet(
        name="swap-eeg", ch_names=clf.ch_names, sfreq=SFREQ, source_id=source_id, dtype="float64"
    )
    loop = OnlineLoop.from_lsl(old, source_id=source_id, hop=0.1, outlet=False, timeout=DEADLINE)
    push = _Pusher(eeg, data, 4 * SFREQ)
    try:
        loop.start()
        assert eeg.wait_for_consumers(DEADLINE)
        push.until(3 * clf.n_times_raw)
        wait(lambda: loop.snapshot().n_decisions >= 3, "decisions of the first model")
        swapper = threading.Thread(target=loop.swap_model, args=(new,), kwargs={"version": 1})
        swapper.start()  # from another thread while the worker decides
        push.until(5 * clf.n_times_raw)
        swapper.join(DEADLINE)
        push.until(n_total)
        wait(lambda: loop.model_version == 1, "the switch")

        def done():
            recent = loop.snapshot(n_decisions=1).decisions
            return bool(recent) and recent[-1]["window_stop_index"] > n_total - 10

        wait(done, "the decision on the last hop")
        decisions = loop.pop_decisions()
        snap = loop.snapshot()
    finally:
        loop.stop()
        del push, eeg
    # A fresh state would refuse a window's worth of hops ("refilling"); the swap none.
    dropped = snap.dropped
    assert dropped.total == dropped.behind and snap.model_version == 1
    stops = [d["window_stop_index"] for d in decisions]
    versions = [d["model_version"] for d in decisions]
    k = versions.index(1)
    assert set(versions[:k]) == {0} and set(versions[k:]) == {1} and k >= 3
    # The next hop after the switch: one hop (plus hops skipped as behind) and a chunk.
    assert 0 < stops[k] - stops[k - 1] <= 10 * (1 + dropped.behind) + 7
    for d in decisions:
        model = old if d["model_version"] == 0 else new
        np.testing.assert_allclose(
            d["score"], _score(model, data, d["window_stop_index"]), rtol=1e-8, atol=1e-8
        )


def test_trials_decided_early_still_move_the_run_centring(make_model, fakes):
    """--early with run centring: each trial's tmax window joins the run's mean, as offline."""
    from sblr_rt.bci_model import SingleModel
    from sblr_rt.model.run_centring import RunCentring
    from sblr_rt.online import Smoothing

    plain = make_model()
    model = SingleModel(
        preprocessor=plain.preprocessor,
        estimator=plain.estimator,
        classes=plain.classes,
        run_centring=RunCentring([0.0], [0.0], 1.0),
    )
    n = model.n_times_raw
    loop, source, markers = _fake_loop(
        fakes,
        model,
        8 * n,
        mode="trial",
        hop=0.1,
        cues="class0,class1",
        smoothing=Smoothing("ema", tau=0.2, early=0.5001),  # every trial stops at once
    )
    _run(loop, source, 2 * n)
    onsets = [2 * n - 5, 4 * n - 5, 6 * n - 5]
    for k, onset in enumerate(onsets):
        markers.add(source.timestamps[onset], f"class{k % 2}")
    _run(loop, source, 8 * n)
    trials = [d for d in loop.pop_decisions() if d["trial"]]
    assert [d["early"] for d in trials] == [True, True, True]
    assert loop.snapshot().run_centring["n_trials"] == 3  # was stuck at 0

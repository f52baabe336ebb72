"""The online loop against real LSL outlets and inlets on this machine.

Every stream has a unique ``source_id``; data are waited for with deadlines; inlets (the
loop's sources, the prediction consumer) are closed before their outlets. Windows are
located in the sent data by their timestamps, so each decision is checked against the
offline model on exactly the samples it saw.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time

import numpy as np
import pylsl
import pytest
import threadpoolctl

from sblr_rt.online import OnlineClassifier, OnlineLoop
from sblr_rt.online.telemetry import Dropped
from sblr_rt.stream import EEGOutlet, MarkerOutlet

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings
pytestmark = pytest.mark.lsl


def _wait(predicate, what, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline} s waiting for {what}")
        time.sleep(0.01)


class _Pusher:
    """Push ``data`` (n_samples, n_channels) in chunks at ``speed`` x real time.

    Sample ``k`` is stamped ``t0 + k / (sfreq * speed)`` (as sblr_rt.playback.stream_player
    does), markers ``(index, value)`` with their sample's timestamp.
    """

    def __init__(self, outlet, data, sfreq, *, speed=4.0, markers=None, marker_outlet=None):
        self.outlet, self.data, self.rate = outlet, data, sfreq * speed
        self.markers = sorted(markers or [])
        self.marker_outlet = marker_outlet
        self.t0 = None
        self.n = 0

    def push_until(self, stop, chunk=7):
        if self.t0 is None:
            self.t0 = pylsl.local_clock()
        stop = min(stop, len(self.data))
        while self.n < stop:
            k = min(chunk, stop - self.n)
            stamps = self.t0 + np.arange(self.n, self.n + k) / self.rate
            self.outlet.push_chunk(self.data[self.n : self.n + k], stamps)
            for index, value in self.markers:
                if self.n <= index < self.n + k:
                    self.marker_outlet.push(value, self.t0 + index / self.rate)
            self.n += k
            time.sleep(max(0.0, self.t0 + self.n / self.rate - pylsl.local_clock()))

    def index_of(self, timestamp):
        return round((timestamp - self.t0) * self.rate)


def _prediction_inlet(source_id):
    infos = pylsl.resolve_byprop("source_id", source_id, 1, DEADLINE)
    assert infos, "the prediction outlet was not found"
    inlet = pylsl.StreamInlet(infos[0])
    inlet.open_stream(DEADLINE)
    return inlet


def _check_against_offline(model, data, pusher, decisions):
    for d in decisions:
        stop = pusher.index_of(d["window_end"]) + 1
        assert stop == d["window_stop_index"]
        window = data[stop - model.n_times_raw : stop].T
        ref = model.decision_function(window[None])[0]
        np.testing.assert_allclose(d["score"], ref, rtol=1e-8, atol=1e-8)
        assert d["label"] == model.predict(window[None])[0]


def test_loop_decisions_equal_the_offline_model(make_model, source_id):
    """Sliding and trial decisions (pushed as JSON) equal the offline model on their samples."""
    model = make_model(l_freq=1.0, h_freq=20.0, rank=2, tmin=-0.2, tmax=0.8)
    clf = OnlineClassifier(model)
    rng = np.random.default_rng(0)
    n_total = 4 * clf.n_times_raw
    data = rng.standard_normal((n_total, len(clf.ch_names)))
    onsets = [clf.n_times_raw + 3, clf.n_times_raw + 250, 3 * clf.n_times_raw]
    markers = [(i, model.classes[k % 2]) for k, i in enumerate(onsets)] + [(500, "other")]
    # Extra channel and another order: the loop picks the model's channels by label.
    stream_names = ["EXTRA", *reversed(clf.ch_names)]
    stream_data = np.column_stack([np.zeros(n_total), data[:, ::-1]])
    eeg = EEGOutlet(
        name="loop-eeg",
        ch_names=stream_names,
        sfreq=clf.sfreq,
        source_id=source_id,
        dtype="float64",
    )
    cues = MarkerOutlet(name="loop-cues", source_id=f"{source_id}-cues")
    pred_id = f"{source_id}-pred"
    pusher = _Pusher(eeg, stream_data, clf.sfreq, markers=markers, marker_outlet=cues)
    loop = OnlineLoop.from_lsl(
        model,
        source_id=source_id,
        mode="trial",
        hop=0.25,
        marker_source_id=f"{source_id}-cues",
        outlet_source_id=pred_id,
        timeout=DEADLINE,
    )
    inlet = None
    try:
        loop.start()
        inlet = _prediction_inlet(pred_id)
        assert eeg.wait_for_consumers(DEADLINE) and cues.wait_for_consumers(DEADLINE)
        pusher.push_until(n_total)
        _wait(lambda: loop.snapshot().n_trial_decisions >= 3, "3 trial decisions")
        decisions = loop.pop_decisions()
        received = []
        _wait(
            lambda: (
                received.extend(inlet.pull_chunk(timeout=0.0)[0])
                or len(received) >= len(decisions)
            ),
            "the decisions on the outlet",
        )
        snap = loop.snapshot()
    finally:
        if inlet is not None:
            inlet.close_stream()
        inlet = None  # inlets before outlets
        loop.stop()
        del eeg, cues

    trials = [d for d in decisions if d["trial"]]
    assert [d["cue"] for d in trials] == [v for _, v in markers[:3]]
    for d, onset in zip(trials, onsets, strict=True):  # the BCIModel epoch convention
        assert d["window_stop_index"] == onset + round(model.tmax * model.sfreq)
    sliding = [d for d in decisions if not d["trial"]]
    assert len(sliding) >= 5
    stops = [d["window_stop_index"] for d in sliding]
    assert all(np.diff(stops) > 0)
    _check_against_offline(model, data, pusher, decisions)
    public = [json.loads(s[0]) for s in received]
    keys = {
        "label",
        "proba",
        "window_end",
        "trial",
        "cue",
        "proba_smoothed",
        "early",
        "model_version",
    }
    assert all(set(p) == keys and p["model_version"] == 0 for p in public)
    # no smoothing configured: the smoothed probability is the window's own
    # (to the floor of 1e-6 the smoothing puts under a probability, so that its log stays
    # finite: which windows are decided depends on the machine's timing, and one may be
    # that confident)
    assert all(p["proba_smoothed"] == pytest.approx(p["proba"], abs=1e-6) for p in public)
    assert not any(p["early"] for p in public)
    assert [p["label"] for p in public] == [d["label"] for d in decisions]
    assert [p["window_end"] for p in public] == [d["window_end"] for d in decisions]
    assert sum(p["trial"] for p in public) == 3
    assert snap.n_cues == 4 and {c[1] for c in snap.cues} == {*model.classes, "other"}
    assert snap.form == "projected" and snap.stream.n_channels == len(stream_names)
    assert snap.n_gaps == 0 and snap.n_nonfinite_samples == 0 and snap.n_overruns == 0
    # No window was refused for its data: hops are only skipped when several arrived at
    # once (this machine's pace) or while the rate of the sped-up replay halts the loop,
    # never for a gap, a non-finite sample, an unclassifiable trial or a signal check.
    assert dataclasses.replace(snap.dropped, behind=0, halted=0) == Dropped()


def test_loop_survives_nan_and_a_vanished_stream(make_model, source_id, caplog):
    caplog.set_level(logging.INFO, logger="sblr_rt")
    model = make_model(features="bandpower", rank=2)
    clf = OnlineClassifier(model)
    rng = np.random.default_rng(1)
    n = clf.n_times_raw
    data = rng.standard_normal((6 * n, len(clf.ch_names)))
    data[n + 20 : n + 23, 1] = np.nan

    def outlet():
        return EEGOutlet(
            name="loop-gap",
            ch_names=clf.ch_names,
            sfreq=clf.sfreq,
            source_id=source_id,
            dtype="float64",
        )

    eeg = outlet()
    loop = OnlineLoop.from_lsl(
        model, source_id=source_id, hop=0.1, outlet=False, timeout=DEADLINE, buffer_seconds=60
    )
    pusher = _Pusher(eeg, data, clf.sfreq, speed=8.0)
    try:
        loop.start()
        assert eeg.wait_for_consumers(DEADLINE)
        pusher.push_until(3 * n)
        _wait(lambda: loop.snapshot().stream.n_samples >= 3 * n, "the first part")
        del eeg, pusher.outlet  # the amplifier's program dies
        _wait(lambda: not loop.snapshot().stream.connected, "the loss to be noticed")
        time.sleep(0.3)
        eeg = outlet()
        pusher.outlet = eeg
        pusher.t0 += 2.0  # the stream returns later: its timestamps jump

        def back():
            if loop.snapshot().stream.n_samples > 3 * n:
                return True
            pusher.push_until(pusher.n + 5)  # samples sent before reconnection are lost
            return False

        _wait(back, "data after the return")
        pusher.push_until(6 * n)
        _wait(
            lambda: loop.snapshot().n_gaps >= 1 and loop.snapshot().n_decisions > 0,
            "the gap",
        )
        first_after = pusher.n
        _wait(
            lambda: any(d["window_stop_index"] > 3 * n + n for d in loop.snapshot().decisions),
            "decisions after the return",
        )
        decisions = loop.pop_decisions()
        snap = loop.snapshot()
    finally:
        loop.stop()
        del eeg
    assert first_after > 3 * n
    assert snap.n_nonfinite_samples == 3
    assert snap.dropped.nonfinite >= 1 and snap.dropped.refilling >= 1
    assert snap.n_gaps >= 1 and len(snap.gaps) >= 1
    t_gap0, t_gap1 = snap.gaps[0]
    for d in decisions:
        start_t = d["window_end"] - (clf.n_times_raw - 1) / pusher.rate
        # No window holds the NaN samples, and none straddles the gap.
        assert not (start_t <= pusher.t0 - 2.0 + (n + 22) / pusher.rate < d["window_end"])
        assert not (start_t < t_gap1 - 0.5 / pusher.rate and d["window_end"] > t_gap0)
    assert "vanished" in caplog.text
    after = [d for d in decisions if d["window_end"] > t_gap1]
    assert after, "no decision after the stream returned"
    # After the return, windows are contiguous samples: compare with the offline model.
    for d in after:
        stop = pusher.index_of(d["window_end"]) + 1
        window = data[stop - clf.n_times_raw : stop].T
        np.testing.assert_allclose(d["score"], model.decision_function(window[None])[0], 1e-8)


def test_loop_refuses_other_channels_or_rate(make_model, source_id):
    model = make_model()
    clf = OnlineClassifier(model)
    names = ["Cz", *clf.ch_names[1:]]
    eeg = EEGOutlet(name="loop-bad", ch_names=names, sfreq=clf.sfreq, source_id=source_id)
    with pytest.raises(ValueError, match=r"lacks 1 of the model's 6 channels: EEG000"):
        OnlineLoop.from_lsl(model, source_id=source_id, outlet=False, timeout=DEADLINE).start()
    del eeg
    other = f"{source_id}-rate"
    eeg = EEGOutlet(name="loop-bad", ch_names=clf.ch_names, sfreq=250.0, source_id=other)
    loop = OnlineLoop.from_lsl(model, source_id=other, outlet=False, timeout=DEADLINE)
    with pytest.raises(ValueError, match=r"runs at 250 Hz but the model was calibrated at 100"):
        loop.start()
    assert not loop.running
    del eeg


def test_worker_errors_are_raised_on_the_next_call(make_model, source_id, caplog):
    model = make_model()
    clf = OnlineClassifier(model)
    eeg = EEGOutlet(name="loop-err", ch_names=clf.ch_names, sfreq=clf.sfreq, source_id=source_id)
    loop = OnlineLoop.from_lsl(
        model, source_id=source_id, hop=0.05, outlet=False, timeout=DEADLINE
    )
    try:
        loop.start()
        assert eeg.wait_for_consumers(DEADLINE)

        def broken(*args, **kwargs):
            raise ZeroDivisionError("boom")

        loop._scheduler.state.decide = broken
        # noise: zeros are a flat (dead) signal, which gets no decision at all
        noise = np.random.default_rng(0).standard_normal((3 * clf.n_times_raw, 6))
        pusher = _Pusher(eeg, noise, clf.sfreq, speed=10.0)
        pusher.push_until(3 * clf.n_times_raw)
        _wait(lambda: not loop.running, "the worker to stop")
        with pytest.raises(RuntimeError, match="worker thread failed: ZeroDivisionError: boom"):
            loop.snapshot()
        assert "worker thread failed" in caplog.text
        loop.snapshot()  # raised once
    finally:
        loop.stop()
        del eeg


def test_snapshot_is_cheap_and_consistent_while_running(make_model, source_id):
    model = make_model(rank=3)
    clf = OnlineClassifier(model)
    eeg = EEGOutlet(name="loop-snap", ch_names=clf.ch_names, sfreq=clf.sfreq, source_id=source_id)
    loop = OnlineLoop.from_lsl(
        model,
        source_id=source_id,
        hop=0.05,
        outlet=False,
        timeout=DEADLINE,
        display_sfreq=50.0,
        display_seconds=2.0,
    )
    with pytest.raises(ValueError, match="'hop' must be > 0 in sliding mode"):
        OnlineLoop.from_lsl(model, hop=0)
    with pytest.raises(ValueError, match="'mode' must be 'sliding' or 'trial', got"):
        OnlineLoop.from_lsl(model, mode="live")
    data = np.random.default_rng(2).standard_normal((4 * clf.n_times_raw, 6))
    errors = []

    def poll():  # a GUI timer polling from another thread
        try:
            while loop.running:
                loop.snapshot(channels=["EEG002", 0])
                time.sleep(0.005)
        except Exception as exc:
            errors.append(exc)

    try:
        with loop:
            assert eeg.wait_for_consumers(DEADLINE)
            poller = threading.Thread(target=poll)
            poller.start()
            pusher = _Pusher(eeg, data, clf.sfreq, speed=4.0)
            pusher.push_until(len(data))
            _wait(lambda: loop.snapshot().n_decisions >= 10, "10 decisions")
            snap = loop.snapshot(channels=["EEG002", 0], n_decisions=3)
            assert loop.running
            blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
            assert all(i["num_threads"] == 1 for i in blas), blas  # limited while running
        poller.join(DEADLINE)
    finally:
        del eeg
    assert not errors and not loop.running
    raw = snap.raw
    assert raw.ch_names == ("EEG002", "EEG000") and raw.sfreq == 50.0
    assert raw.data.shape == (2, 100) and raw.times.shape == (100,)
    stride = round(clf.sfreq / 50.0)
    index = pusher.index_of(raw.times[-1])
    np.testing.assert_allclose(raw.data[:, -1], data[index, [2, 0]], rtol=1e-6)
    assert index % stride == 0
    assert len(snap.decisions) == 3
    assert snap.step_time.n >= 10 and snap.latency.n >= 10
    assert snap.step_time.p50 > 0 and snap.decisions_per_second > 0
    assert 0 < snap.stream.buffer_fill <= 1 and snap.stream.sfreq == clf.sfreq
    # CPU seconds of the worker thread per wall second: measured (it ran 10 decisions)
    # and one thread's, so never more than one.
    assert 0 < snap.worker_cpu <= 1


def test_early_trial_decisions_over_lsl_on_both_outlets(make_model, source_id):
    """Dynamic stopping end to end: cues in, early trial decisions out, JSON and numbers."""
    from sblr_rt.online import Smoothing

    model = make_model()
    clf = OnlineClassifier(model)
    n_total = 5 * clf.n_times_raw
    data = np.random.default_rng(1).standard_normal((n_total, len(clf.ch_names)))
    onsets = [clf.n_times_raw + 20, 3 * clf.n_times_raw]
    markers = [(i, model.classes[k % 2]) for k, i in enumerate(onsets)]
    eeg = EEGOutlet(name="early-eeg", ch_names=clf.ch_names, sfreq=clf.sfreq, source_id=source_id)
    cues = MarkerOutlet(name="early-cues", source_id=f"{source_id}-cues")
    pusher = _Pusher(eeg, data, clf.sfreq, markers=markers, marker_outlet=cues)
    loop = OnlineLoop.from_lsl(
        model,
        source_id=source_id,
        mode="trial",
        hop=0.05,
        marker_source_id=f"{source_id}-cues",
        outlet_source_id=f"{source_id}-pred",
        timeout=DEADLINE,
        smoothing=Smoothing("ema", tau=0.2, early=0.5001),  # every trial stops at once
    )
    inlet = numeric = None
    try:
        loop.start()
        inlet = _prediction_inlet(f"{source_id}-pred")
        numeric = _prediction_inlet(f"{source_id}-pred-numeric")
        assert numeric.info().channel_format() == pylsl.cf_float32
        assert eeg.wait_for_consumers(DEADLINE) and cues.wait_for_consumers(DEADLINE)
        pusher.push_until(n_total)
        _wait(lambda: loop.snapshot().n_trial_decisions >= 2, "2 trial decisions")
        decisions = loop.pop_decisions()
        received, rows, stamps = [], [], []

        def pulled():
            received.extend(inlet.pull_chunk(timeout=0.0)[0])
            chunk, ts = numeric.pull_chunk(timeout=0.0)
            rows.extend(chunk)
            stamps.extend(ts)
            return len(received) >= len(decisions) and len(rows) >= len(decisions)

        _wait(pulled, "every decision on both outlets")
    finally:
        inlet = numeric = None  # the inlets go before the outlets
        loop.stop()
        eeg.close()
        cues.close()
    trials = [d for d in decisions if d["trial"]]
    assert [d["cue"] for d in trials] == [v for _, v in markers]
    tmax = round(model.tmax * model.sfreq)
    for d, onset in zip(trials, onsets, strict=True):
        assert d["early"] and d["window_stop_index"] < onset + tmax
        # after its cue (to the dejittering of the received timestamps: half a sample)
        assert d["window_end"] >= pusher.t0 + (onset - 0.5) / pusher.rate
    # the loop ran on after the decisions were taken: its outlets carry them first, in order
    n_taken = len(decisions)
    public = [json.loads(s[0]) for s in received[:n_taken]]
    assert [p["early"] for p in public if p["trial"]] == [True, True]
    # the numeric outlet: the same decisions, stamped with their window's end
    rows, stamps = np.asarray(rows[:n_taken]), stamps[:n_taken]
    n = len(model.classes)
    np.testing.assert_allclose(stamps, [d["window_end"] for d in decisions], atol=1e-6)
    for row, d in zip(rows, decisions, strict=True):
        np.testing.assert_allclose(row[:n], [d["proba"][c] for c in model.classes], rtol=1e-6)
        np.testing.assert_allclose(
            row[n : 2 * n], [d["proba_smoothed"][c] for c in model.classes], rtol=1e-6
        )
        flags = [float(d["trial"]), float(d["early"]), float(d["model_version"])]
        assert row[2 * n :].tolist() == flags

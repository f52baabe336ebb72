"""One scheduling step at a time, on an in-memory source: no LSL, no thread.

Each test builds an :class:`OnlineLoop` on the fakes of ``conftest.py`` (a source serving
chunks of a numpy array with their timestamps, a marker queue, a strict-JSON sink and a
hand-moved clock), starts it without its worker and calls :meth:`OnlineLoop.step_once`.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier, OnlineLoop

SFREQ = 100.0


def _setup(fakes, model, n_total, *, seed=0, mode="sliding", hop=0.1, cues=None, ts=None):
    clf = OnlineClassifier(model)
    data = np.random.default_rng(seed).standard_normal((n_total, len(clf.ch_names)))
    times = 50.0 + np.arange(n_total) / SFREQ if ts is None else ts
    source = fakes.Source(data, times, clf.ch_names, SFREQ)
    markers = fakes.Markers() if mode == "trial" else None
    sink, clock = fakes.Sink(), fakes.Clock(times[0])
    loop = OnlineLoop(
        clf, source, markers=markers, sink=sink, clock=clock, mode=mode, hop=hop, cues=cues
    )
    return loop.start(thread=False), source, markers, sink, clock


def _run(loop, source, clock, chunk=7, until=None):
    until = len(source.data) if until is None else until
    while source.sent < until:
        source.send(min(chunk, until - source.sent))
        clock.t = source.timestamps[source.sent - 1] + 0.002
        loop.step_once()


def _check_offline(model, source, decisions):
    for d in decisions:
        stop = d["window_stop_index"]
        window = source.data[stop - model.n_times_raw : stop].T[None]
        np.testing.assert_allclose(d["score"], model.decision_function(window)[0], rtol=1e-9)
        assert d["window_end"] == source.timestamps[stop - 1]


def test_step_once_needs_a_started_loop(make_model, fakes):
    clf = OnlineClassifier(make_model())
    source = fakes.Source(np.zeros((10, 6)), np.arange(10) / SFREQ, clf.ch_names, SFREQ)
    loop = OnlineLoop(clf, source, clock=fakes.Clock())
    with pytest.raises(RuntimeError, match="Start the loop first"):
        loop.step_once()
    with pytest.raises(ValueError, match="'markers' must be a marker source in trial mode"):
        OnlineLoop(clf, source, mode="trial", clock=fakes.Clock())


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_sliding_decisions_every_hop_equal_the_offline_model(make_model, fakes, features):
    model = make_model(features=features)
    n_total = 3 * model.n_times_raw
    loop, source, _, sink, clock = _setup(fakes, model, n_total)
    _run(loop, source, clock, chunk=5)
    decisions = loop.pop_decisions()
    stops = [d["window_stop_index"] for d in decisions]
    assert stops[0] == -(-model.n_times_raw // 5) * 5  # the first chunk completing a window
    assert set(np.diff(stops)) == {10}  # one per hop of 0.1 s, counted in samples
    assert len(sink.sent) == len(decisions)
    _check_offline(model, source, decisions)
    snap = loop.snapshot()
    assert snap.n_decisions == len(decisions) and snap.dropped.total == 0
    assert snap.form == ("projected" if features == "waveform" else "filtered")
    assert snap.stream.n_samples == n_total and snap.latency.n == len(decisions)


def test_samples_of_several_hops_at_once_give_the_latest_window(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    loop, source, _, _, clock = _setup(fakes, model, 2 * n)
    _run(loop, source, clock, chunk=10, until=n)
    assert [d["window_stop_index"] for d in loop.pop_decisions()] == [n]
    source.send(45)  # four and a half hops arrive together
    loop.step_once()
    (d,) = loop.pop_decisions()
    assert d["window_stop_index"] == n + 45
    assert loop.snapshot().dropped.behind == 3  # hops at n + 10, 20, 30 were skipped
    source.send(5)
    loop.step_once()
    assert [d["window_stop_index"] for d in loop.pop_decisions()] == [n + 50]


def test_a_gap_is_one_rule_and_one_count(make_model, fakes):
    """Jitter below the stream layer's gap threshold is no gap; a real jump is one gap."""
    model = make_model()
    n = model.n_times_raw
    ts = 50.0 + np.arange(3 * n) / SFREQ
    ts[40:] += 0.03  # 3 sample periods of jitter: no gap by the stream layer's rule
    ts[n + 20 :] += 1.0  # a real gap
    loop, source, _, _, clock = _setup(fakes, model, 3 * n, ts=ts)
    _run(loop, source, clock)
    decisions = loop.pop_decisions()
    snap = loop.snapshot()
    assert snap.n_gaps == 1 and snap.gaps == ((ts[n + 19], ts[n + 20]),)
    assert snap.dropped.refilling >= 1 and snap.dropped.behind == snap.dropped.gap == 0
    stops = [d["window_stop_index"] for d in decisions]
    # No window straddles the gap; the first after it is a full window past it.
    assert not any(n + 20 < s < 2 * n + 20 for s in stops)
    assert any(s <= n + 20 for s in stops) and min(s for s in stops if s > n + 20) >= 2 * n + 20
    assert any(s < n + 20 and s - n < 40 for s in stops)  # the jitter did not break windows
    _check_offline(model, source, decisions)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_nonfinite_samples_give_no_decision_and_no_nan_on_the_wire(
    make_model, fakes, features, bad
):
    model = make_model(features=features)
    n = model.n_times_raw
    loop, source, _, sink, clock = _setup(fakes, model, 3 * n)
    source.data[n + 5 : n + 8, 2] = bad
    _run(loop, source, clock)
    decisions = loop.pop_decisions()
    snap = loop.snapshot()
    assert snap.n_nonfinite_samples == 3
    assert snap.dropped.nonfinite >= 1 and snap.dropped.gap == 0
    for d in decisions:  # no window holds a non-finite sample
        assert not (d["window_start_index"] <= n + 7 and d["window_stop_index"] > n + 5)
    assert any(d["window_start_index"] > n + 7 for d in decisions)  # decisions resume
    for text in sink.sent:
        decision = json.loads(text)
        assert decision["label"] is not None
        assert all(np.isfinite(p) for p in decision["proba"].values())
    _check_offline(model, source, decisions)


def test_no_decisions_while_the_rate_is_far_off(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    loop, source, _, _, clock = _setup(fakes, model, 4 * n)
    _run(loop, source, clock, until=n + 20)
    n_before = len(loop.pop_decisions())
    assert n_before == 3 and loop.snapshot().halted is None
    source.extra_status = {"rate_far_off": True, "effective_sfreq": 83.0}
    _run(loop, source, clock, until=2 * n)
    snap = loop.snapshot()
    assert loop.pop_decisions() == [] and "83 Hz" in snap.halted
    assert snap.dropped.halted >= 1
    source.extra_status = {}
    _run(loop, source, clock)
    assert loop.snapshot().halted is None and len(loop.pop_decisions()) > 0


def test_trials_on_cues_named_by_the_calibration_markers(make_model, fakes, caplog):
    model = make_model()
    model.metadata = {"config": {"classes": {"T1": "class0", "T2": "class1"}}}
    n = model.n_times_raw
    loop, source, markers, _, clock = _setup(fakes, model, 4 * n, mode="trial", hop=0.0)
    assert loop.cues == {"class0", "class1", "T1", "T2"}
    caplog.set_level(logging.WARNING, logger="sblr_rt.online")
    onsets = {n + 3: "T2", 2 * n: "junk", 2 * n + 9: "T1", 2 * n + 50: "other"}
    for onset, value in onsets.items():
        markers.add(source.timestamps[onset] + 0.001, value)
    _run(loop, source, clock)
    trials = loop.pop_decisions()
    assert [d["cue"] for d in trials] == ["T2", "T1"] and all(d["trial"] for d in trials)
    stop_offset = round(model.preprocessor.tmax * SFREQ)
    assert [d["window_stop_index"] for d in trials] == [n + 3 + stop_offset, 2 * n + 9 + 100]
    _check_offline(model, source, trials)
    warnings = [r for r in caplog.records if "match no class" in r.getMessage()]
    assert len(warnings) == 1 and "junk" in warnings[0].getMessage()
    # the hint names the option a user types, not only the Python keyword
    assert "sblr-rt run --cues, or OnlineLoop(cues=...)" in warnings[0].getMessage()
    assert loop.snapshot().n_cues == 4


def test_windows_scoring_non_finite_are_dropped_not_published(make_model, fakes, monkeypatch):
    """A finite burst that overflows the band power gives no decision, not a NaN one.

    Such a burst is beyond the bound of a measurement and never reaches the filters
    (:func:`test_samples_beyond_the_bound_are_counted_and_named`): the bound is lifted here
    to reach the net behind it, the scores' own check.
    """
    monkeypatch.setattr("sblr_rt.online.streaming.max_abs_sample", lambda unit: np.inf)
    model = make_model(features="bandpower")
    n = model.n_times_raw
    loop, source, _, sink, clock = _setup(fakes, model, 4 * n)
    source.data[n + 5 : n + 8, :] = 1e300
    _run(loop, source, clock)
    snap = loop.snapshot()
    assert snap.n_nonfinite_samples == 0 and snap.dropped.nonfinite >= 1
    assert len(sink.sent) == snap.n_decisions > 0
    for text in sink.sent:
        decision = json.loads(text)
        assert decision["label"] is not None
        assert all(np.isfinite(p) for p in decision["proba"].values())


@pytest.mark.parametrize("burst", [1e300, -1e30, 1.5e9])
def test_samples_beyond_the_bound_are_counted_and_named(make_model, fakes, caplog, burst):
    """An impossible sample counts as non-finite, with one warning naming its channel."""
    model = make_model(features="bandpower")  # no unit: the bound is 1e9 (1 V in nV)
    n = model.n_times_raw
    loop, source, _, _, clock = _setup(fakes, model, 4 * n)
    source.data[n + 5 : n + 8, 4] = burst
    with caplog.at_level(logging.WARNING, logger="sblr_rt.online"):
        _run(loop, source, clock)
    decisions = loop.pop_decisions()
    snap = loop.snapshot()
    assert snap.n_nonfinite_samples == 3 and snap.dropped.nonfinite >= 1
    for d in decisions:
        assert not (d["window_start_index"] <= n + 7 and d["window_stop_index"] > n + 5)
    assert any(d["window_start_index"] > n + 7 for d in decisions)
    _check_offline(model, source, decisions)
    warned = [r.getMessage() for r in caplog.records if "beyond ±1e+09" in r.getMessage()]
    assert len(warned) == 1 and "EEG004" in warned[0] and f"{abs(burst):.3g}" in warned[0]

"""The loop's telemetry: bounded statistics, counters and the frozen snapshot."""

from __future__ import annotations

import dataclasses
import math

import pytest

from sblr_rt.online.decision import Decision
from sblr_rt.online.telemetry import Dropped, RecentValues, Telemetry, TelemetryRecorder


def test_recent_values_keep_only_the_horizon():
    values = RecentValues(horizon=10.0)
    assert values.summary(0.0).n == 0 and math.isnan(values.summary(0.0).p50)
    for t in range(30):
        values.add(float(t), float(t))
    summary = values.summary(29.0)
    assert summary.n == 11  # t = 19 .. 29
    assert summary.max == 29.0 and summary.p50 == 24.0
    assert 1.0 <= values.rate(29.0) <= 1.2
    assert values.summary(100.0).n == 0


def test_recorder_freezes_counts_into_a_frozen_telemetry():
    rec = TelemetryRecorder(history_seconds=10.0, max_history=3)
    for k in range(5):
        decision = Decision("a", {"a": 1.0}, 0.0, trial=k % 2 == 1, step_time=0.001 * (k + 1))
        rec.decision(decision, published=float(k), latency=0.01)
    rec.drop("nonfinite", 2)
    rec.drop("behind")
    rec.gap(1.0, 2.0)
    rec.count("nonfinite_samples", 7)
    rec.set_halted("the rate is off")
    snap = rec.freeze(5.0, n_decisions=2, mode="trial")
    assert isinstance(snap, Telemetry) and snap.mode == "trial"
    assert snap.n_decisions == 5 and snap.n_trial_decisions == 2
    assert len(snap.decisions) == 2 and len(snap.trials) == 2
    assert snap.dropped == Dropped(nonfinite=2, behind=1) and snap.dropped.total == 3
    assert snap.n_gaps == 1 and snap.gaps == ((1.0, 2.0),)
    assert snap.n_nonfinite_samples == 7 and snap.halted == "the rate is off"
    assert snap.latency.n == 5 and snap.step_time.max == pytest.approx(0.005)
    assert len(rec.pop_pending()) == 5 and rec.pop_pending() == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.n_decisions = 0


def test_a_lost_stream_whose_return_was_refused_says_why():
    from sblr_rt.online.telemetry import StreamTelemetry

    status = {"state": "lost", "refused": "channel units changed (...)"}
    stream = StreamTelemetry(**StreamTelemetry.state_of(status, connected=False))
    assert stream.summary == "lost (back but refused: channel units changed (...))"
    assert StreamTelemetry(**StreamTelemetry.state_of({"state": "lost"}, False)).summary == "lost"

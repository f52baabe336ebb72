"""The stream's timeline without LSL: clock jumps, samples held back, gaps."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest

from sblr_rt.io.gaps import GAP_PERIODS
from sblr_rt.stream.timeline import StreamTimeline

SFREQ = 100.0
THRESHOLD = 0.1
JUMP_AT = 300


def _stream(step: float, n: int = 600):
    """Values 0..n-1, the times liblsl gives them when the sender's clock steps at JUMP_AT,
    and the sender's own times (those a fresh inlet gives).

    A step back holds the times still (liblsl's monotonic post-processing) until the new
    timeline passes the old one; a step forward is a step.
    """
    sent = 1000.0 + np.arange(n) / SFREQ
    sent[JUMP_AT:] += step
    values = np.arange(n, dtype=np.float64)[:, None]
    return values, np.maximum.accumulate(sent), sent


def _read(timeline, values, times, cuts, restart=None):
    """Feed the chunks ``values[a:b]`` for consecutive cuts; return what was kept, jumps."""
    kept, jumps, gaps = [], [], []
    n_kept = 0
    edges = [0, *cuts, len(times)]
    for a, b in itertools.pairwise(edges):
        chunk, t, jumped = timeline.admit(values[a:b], times[a:b])
        if jumped:
            jumps.append(b)
            (restart or timeline.new_inlet)()
        if len(t):
            gaps += [n_kept + int(i) for i in timeline.record(t, first_index=n_kept)]
            kept.append((chunk, t))
            n_kept += len(t)
    chunk = np.concatenate([c for c, _ in kept])[:, 0]
    return chunk, np.concatenate([t for _, t in kept]), jumps, gaps


def _fresh():
    timeline = StreamTimeline(SFREQ, THRESHOLD, "jumpy")
    timeline.new_inlet()
    return timeline


def test_a_steady_stream_is_kept_whole_in_any_chunks():
    values, times, _ = _stream(0.0)
    got, t, jumps, gaps = _read(_fresh(), values, times, [7, 8, 150, 151, 599])
    np.testing.assert_array_equal(got, values[:, 0])
    np.testing.assert_array_equal(t, times)
    assert jumps == [] and gaps == []


@pytest.mark.parametrize("held", range(int(GAP_PERIODS) + 2))
def test_a_step_back_across_two_chunks_is_the_step_inside_one(held, caplog):
    # The first chunk ends `held` samples after the step: those hold the old time and
    # wait for the next chunk, which completes the jump (or the first chunk holds the
    # whole jump). The samples from the step on are dropped (the source reopens its
    # inlet); the fresh inlet's samples, on the sender's new timeline, follow one gap. No
    # kept sample carries the held time.
    values, times, sent = _stream(-5.0)
    restart_at = JUMP_AT + 40  # the fresh inlet's first sample (the dropped ones are lost)
    caplog.set_level(logging.WARNING, "sblr_rt.stream")
    timeline = _fresh()
    kept = []
    for a, b in ((0, 100), (100, JUMP_AT + held), (JUMP_AT + held, restart_at)):
        chunk, t, jumped = timeline.admit(values[a:b], times[a:b])
        if len(t):
            timeline.record(t, first_index=sum(len(k) for k in kept))
            kept.append(chunk[:, 0])
        if jumped:
            break
    assert jumped
    timeline.new_inlet()
    chunk, t, jumped = timeline.admit(values[restart_at:], sent[restart_at:])
    assert not jumped and chunk[0, 0] == restart_at
    assert timeline.record(t, first_index=JUMP_AT).tolist() == [0]
    np.testing.assert_array_equal(np.concatenate(kept), np.arange(JUMP_AT))  # the old, whole
    assert timeline.gap_indices == [JUMP_AT]
    assert timeline.gaps == [(times[JUMP_AT - 1], sent[restart_at])]
    logged = [r.getMessage() for r in caplog.records if "Gap of" in r.getMessage()]
    assert len(logged) == 1 and "timestamps jumped" in logged[0]


def test_samples_held_still_briefly_are_kept_when_time_moves_on():
    # A few samples whose time does not advance (fewer than a jump's) are no jump: held
    # back one chunk, then kept in order with the next one, nothing lost.
    values, times, _ = _stream(0.0)
    times[100:104] = times[99]  # four samples held still, then time goes on
    got, t, jumps, gaps = _read(_fresh(), values, times, [102, 300])
    np.testing.assert_array_equal(got, values[:, 0])
    np.testing.assert_array_equal(t, times)
    assert jumps == [] and gaps == []


def test_a_step_forward_drops_the_samples_from_it_and_asks_for_a_new_inlet():
    values, times, _ = _stream(60.0)
    timeline = _fresh()
    chunk, t, jumped = timeline.admit(values[:200], times[:200])
    timeline.record(t, first_index=0)
    chunk, t, jumped = timeline.admit(values[200:400], times[200:400])
    assert jumped and chunk[:, 0].tolist() == list(range(200, JUMP_AT))


def test_a_reconnection_puts_one_gap_before_the_next_sample(caplog):
    caplog.set_level(logging.WARNING, "sblr_rt.stream")
    values, times, _ = _stream(0.0)
    timeline = _fresh()
    _, t, _ = timeline.admit(values[:100], times[:100])
    timeline.record(t, first_index=0)
    timeline.reconnected()
    timeline.new_inlet()
    _, t, _ = timeline.admit(values[101:200], times[101:200])  # one sample missed
    assert timeline.record(t, first_index=100).tolist() == [0]
    assert timeline.gap_indices == [100] and timeline.gaps == [(times[99], times[101])]
    assert "stream was lost" in caplog.records[-1].getMessage()


def test_a_fresh_inlet_drops_samples_held_from_the_old_one():
    values, times, sent = _stream(-5.0)
    timeline = _fresh()
    _, t, _ = timeline.admit(values[:100], times[:100])  # a fresh inlet's first chunk
    timeline.record(t, first_index=0)
    _, t, _ = timeline.admit(values[100 : JUMP_AT + 3], times[100 : JUMP_AT + 3])
    assert len(t) == JUMP_AT - 100  # three held back
    timeline.record(t, first_index=100)
    timeline.new_inlet()  # e.g. reopened after a stall
    chunk, t, jumped = timeline.admit(values[JUMP_AT + 20 :], sent[JUMP_AT + 20 :])
    assert not jumped and chunk[0, 0] == JUMP_AT + 20

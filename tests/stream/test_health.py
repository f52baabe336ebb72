"""RateMonitor and stream_state without LSL: the verdicts the online loop acts on."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.stream._health import RateMonitor, check_tolerance, stall_threshold, stream_state


def _feed(monitor, rate, seconds, *, start=0, t0=0.0, chunks=(1, 7, 32)):
    """Feed ``seconds`` of a ``rate`` Hz stream in irregular chunks; return the sample count."""
    n, k = start, 0
    while n - start < rate * seconds:
        n += chunks[k % len(chunks)]
        k += 1
        monitor.update(n, t0 + (n - start - 1) / rate)
    return n


@pytest.mark.parametrize(
    ("rate", "rate_ok", "far_off"),
    [(500.0, True, False), (520.0, True, False), (470.0, False, False), (390.0, False, True)],
)
def test_verdict_follows_the_deviation(rate, rate_ok, far_off):
    monitor = RateMonitor(500.0)
    _feed(monitor, rate, 12.0)
    assert monitor.effective_sfreq == pytest.approx(rate, rel=1e-3)
    assert monitor.span <= 10.5  # a sliding window, not everything since the start
    assert (monitor.rate_ok, monitor.rate_far_off) == (rate_ok, far_off)


def test_no_verdict_before_the_window_spans_a_few_seconds():
    monitor = RateMonitor(500.0)
    assert monitor.effective_sfreq is None and monitor.rate_ok is None
    _feed(monitor, 100.0, 3.0)  # five times too slow, but only 3 s of it
    assert monitor.effective_sfreq == pytest.approx(100.0, rel=1e-2)
    assert monitor.rate_ok is None and monitor.rate_far_off is False
    assert monitor.news() is None


def test_reset_forgets_the_rate_and_the_window_slides_back_to_normal():
    monitor = RateMonitor(250.0)
    n = _feed(monitor, 200.0, 6.0)
    assert monitor.rate_far_off is False and monitor.rate_ok is False
    monitor.reset()
    assert monitor.effective_sfreq is None
    _feed(monitor, 250.0, 20.0, start=n, t0=100.0)
    assert monitor.rate_ok is True


def test_news_reports_each_level_once():
    monitor = RateMonitor(100.0)
    _feed(monitor, 90.0, 5.0)
    assert [monitor.news(), monitor.news()] == ["drift", None]
    _feed(monitor, 50.0, 15.0, start=10_000, t0=100.0)
    assert [monitor.news(), monitor.news()] == ["far_off", None]


def test_unchecked_tolerance_gives_no_verdict():
    monitor = RateMonitor(100.0, tolerance=None)
    _feed(monitor, 400.0, 8.0)  # a replay at x4
    assert monitor.effective_sfreq == pytest.approx(400.0, rel=1e-3)
    assert (monitor.rate_ok, monitor.rate_far_off, monitor.news()) == (None, False, None)


def test_tolerance_is_checked():
    assert check_tolerance(None) is None
    assert check_tolerance([0.1, 0.3]) == (0.1, 0.3)
    with pytest.raises(TypeError, match="'rate_tolerance' must be None or a pair"):
        check_tolerance(0.05)
    with pytest.raises(ValueError, match=r"0 < warn <= far, got \(0.3, 0.1\)"):
        check_tolerance((0.3, 0.1))


@pytest.mark.parametrize(
    ("connected", "connected_at", "last_arrival", "now", "expected"),
    [
        (False, None, None, 5.0, "lost"),
        (False, 1.0, 4.0, 5.0, "lost"),
        (True, 4.5, None, 5.0, "connecting"),
        (True, 3.5, None, 5.0, "stalled"),  # opened 1.5 s ago, nothing since
        (True, 1.0, 4.5, 5.0, "streaming"),
        (True, 1.0, 3.9, 5.0, "stalled"),
        (True, 4.8, 3.0, 5.0, "connecting"),  # reconnected: older samples do not count
    ],
)
def test_stream_state(connected, connected_at, last_arrival, now, expected):
    state = stream_state(
        connected=connected,
        connected_at=connected_at,
        last_arrival=last_arrival,
        now=now,
        sfreq=100.0,
    )
    assert state == expected


def test_stall_threshold_is_twenty_periods_or_one_second():
    assert stall_threshold(1000.0) == 1.0
    assert stall_threshold(10.0) == 2.0
    assert np.isclose(stall_threshold(0.5), 40.0)

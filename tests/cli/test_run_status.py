"""The status line of ``sblr-rt run`` names every reason a window or a cue got no decision."""

from __future__ import annotations

from sblr_rt.cli.run import _status_line

from sblr_rt.online.telemetry import Dropped, RefusedCues, Telemetry


def test_the_status_line_counts_bad_windows_and_refused_cues():
    snap = Telemetry(
        dropped=Dropped(flat=3, clipped=1, amplitude=2),
        refused_cues=RefusedCues(far=2, unavailable=1, expired=4),
    )
    line = _status_line(snap)
    assert "dropped 6 (" in line and "flat 3, clipped 1, amplitude 2)" in line
    assert "cues refused 7 (far 2, unavailable 1, expired 4)" in line
    assert "cues refused" not in _status_line(Telemetry())


def test_a_negative_latency_says_the_streams_clock_runs_ahead():
    from sblr_rt.online.telemetry import Stats

    ahead = _status_line(Telemetry(latency=Stats(n=20, p50=-0.095, p99=-0.07)))
    assert "latency p50 -95.00 ms p99 -70.00 ms (the stream's timestamps run ahead" in ahead
    assert "run ahead" not in _status_line(Telemetry(latency=Stats(n=20, p50=0.004, p99=0.02)))
    assert "run ahead" not in _status_line(Telemetry())  # no decision yet

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

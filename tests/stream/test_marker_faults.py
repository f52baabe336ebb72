"""Markers a broken or hostile sender may push: not UTF-8, stamped far from now."""

from __future__ import annotations

import logging

import pylsl
import pytest

from sblr_rt.stream import MarkerSource

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


def _string_outlet(source_id):
    return pylsl.StreamOutlet(pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id))


@pytest.mark.lsl
@pytest.mark.parametrize(
    "bad",
    [b"\xff\xfe", b"left\xc3", b"\xed\xa0\x80", b"\x80" * 300],
    ids=["ff", "cut", "surrogate", "long"],
)
def test_a_marker_that_is_not_utf8_is_logged_counted_and_skipped(source_id, wait, caplog, bad):
    outlet = _string_outlet(source_id)
    caplog.set_level(logging.WARNING, "sblr_rt.stream")
    with MarkerSource(source_id=source_id, timeout=5.0) as markers:
        assert outlet.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        outlet.push_sample(["left"], t0)
        outlet.push_sample([bad], t0 + 1)
        outlet.push_sample([bad], t0 + 2)
        outlet.push_sample(["right"], t0 + 3)
        got = []
        wait(lambda: got.extend(markers.pop()) or len(got) >= 2, "the two good markers")
        assert [v for _, v in got] == ["left", "right"]
        status = markers.status()  # re-raises a failed reader
        assert status["running"] and status["n_undecodable"] == 2
        assert status["n_markers"] == 2
    assert sum("not valid UTF-8" in r.getMessage() for r in caplog.records) == 2
    del outlet


@pytest.mark.lsl
def test_a_far_stamped_marker_does_not_move_the_later_ones(source_id, wait):
    outlet = _string_outlet(source_id)
    with MarkerSource(source_id=source_id, timeout=5.0) as markers:
        assert outlet.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        outlet.push_sample(["future"], t0 + 1e6)
        outlet.push_sample(["past"], t0 - 1e5)
        outlet.push_sample(["now"], t0)
        got = []
        wait(lambda: got.extend(markers.pop()) or len(got) >= 3, "3 markers")
    stamps = {v: t - t0 for t, v in got}
    assert stamps["future"] == pytest.approx(1e6, abs=1.0)
    assert stamps["past"] == pytest.approx(-1e5, abs=1.0)
    assert stamps["now"] == pytest.approx(0.0, abs=1e-2)
    del outlet

"""A device whose clock jumps, forward or back: one gap, and exact timestamps after it."""

from __future__ import annotations

import logging
import time

import numpy as np
import pylsl
import pytest

from sblr_rt.stream import LSLSource

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings
SFREQ = 100.0


@pytest.mark.lsl
@pytest.mark.parametrize("step", [3600.0, 60.0, -5.0, -600.0])
def test_a_clock_jump_is_one_gap_logged_once(source_id, wait, caplog, step):
    info = pylsl.StreamInfo("jumpy", "EEG", 2, SFREQ, "float32", source_id)
    outlet = pylsl.StreamOutlet(info)
    caplog.set_level(logging.WARNING, "sblr_rt.stream")
    with LSLSource(source_id=source_id, timeout=5.0, stall_timeout=None) as source:
        assert outlet.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        n, offset, jump_at = 0, 0.0, 300
        while n < 1000:  # pushed when due, 10 samples at a time, the clock steps once
            if n == jump_at:
                offset = step
            stamps = t0 + np.arange(n, n + 10) / SFREQ + offset
            outlet.push_chunk(np.arange(n, n + 10, dtype=np.float32)[:, None].repeat(2, 1),
                              stamps.tolist())  # fmt: skip
            n += 10
            time.sleep(max(0.0, t0 + n / SFREQ - pylsl.local_clock()))
        wait(lambda: source.buffer.n_pushed >= jump_at and
             source.buffer.get(source.buffer.n_pushed - 1, source.buffer.n_pushed)[0][0, 0]
             == 999, "the last sample")  # fmt: skip
        status = source.status()
        window, ts = source.buffer.get(source.buffer.first_index, source.buffer.n_pushed)
    assert status["n_gaps"] == 1, status["gaps"]
    (t_before, t_after) = status["gaps"][0]
    index = source.gap_indices()[0]
    assert ts[index - 1] == t_before and ts[index] == t_after
    # the values are the sample numbers: the gap is where the clock stepped, and the
    # timestamps after it are the sender's, exactly (no smearing by the dejitter); before
    # it, every kept sample is on the old timeline: those whose time stood still after a
    # step back are dropped with the jump, however the chunks fell (tests/stream/
    # test_timeline.py); a sample or two the dejitter bent at the step may remain
    assert window[0, index - 1] < jump_at + 3 and jump_at <= window[0, index]
    after = window[0, index:]
    expected = t0 + after / SFREQ + step
    np.testing.assert_allclose(ts[index:], expected, atol=2e-3)
    before = window[0, :index] < jump_at
    np.testing.assert_allclose(ts[:index][before], t0 + window[0, :index][before] / SFREQ,
                               atol=2e-3)  # fmt: skip
    np.testing.assert_allclose(ts[:index], t0 + window[0, :index] / SFREQ, atol=1.5 / SFREQ)
    assert not status["rate_far_off"]
    gaps = [r for r in caplog.records if "Gap of" in r.getMessage()]
    assert len(gaps) == 1 and "timestamps jumped" in gaps[0].getMessage()
    del outlet

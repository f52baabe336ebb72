"""Replay: the reader loops and marks; accelerated replay puts each marker on its sample."""

from __future__ import annotations

import time

import numpy as np
import pytest

from sblr_rt.io import Recording, read_recording
from sblr_rt.playback.stream_player import RecordingReader

SFREQ = 250.0
N_TIMES = 1000
MARKER_SAMPLES = [0, 137, 500, 501, 999]


def test_recording_reader_loops_and_marks():
    rec = Recording(data=np.arange(10.0)[None], sfreq=10.0, ch_names=["x"],
                    marker_times=[0.0, 0.5], marker_values=["s", "m"])  # fmt: skip
    reader = RecordingReader(rec, loop=True)
    d, m = reader.read(7)
    assert d[:, 0].tolist() == list(range(7)) and m == [(0, "s"), (5, "m")]
    d, m = reader.read(16)
    assert d[:, 0].tolist() == [7, 8, 9, *range(10), 0, 1, 2]
    assert m == [(10, "s"), (15, "m"), (20, "s")]
    once = RecordingReader(rec)
    assert once.read(25)[0].shape == (10, 1) and once.read(5)[0].shape == (0, 1)


@pytest.mark.lsl
def test_accelerated_replay_of_shipped_epochs_aligns_markers(bcicomp2003_path, source_id):
    """At x20, LSLSource + align_markers put every trial marker on its first sample."""
    from sblr_rt.playback.stream_player import replay
    from sblr_rt.stream import LSLSource, MarkerSource, align_markers

    rec = read_recording(bcicomp2003_path)
    n = 40 * rec.epoch_length  # 40 trials, 20 s of data, 1 s at x20
    player = replay(rec, source_id=source_id, speed=20.0, duration=n / rec.sfreq,
                    dtype="float64", wait_for_consumers=60.0)  # fmt: skip
    eeg = LSLSource(source_id=source_id, timeout=30.0)
    markers = MarkerSource(source_id=source_id + "-markers", timeout=30.0)
    try:
        eeg.start()
        markers.start()
        player.start()
        deadline = time.monotonic() + 60
        got = []
        while (eeg.buffer.n_pushed < n or len(got) < 40) and time.monotonic() < deadline:
            got += markers.pop()
            time.sleep(0.05)
        assert eeg.buffer.n_pushed == n and len(got) == 40
        assert eeg.ch_names == rec.ch_names and eeg.sfreq == rec.sfreq
        assert rec.unit == "uV" and eeg.ch_units == ["microvolts"] * len(rec.ch_names)
        window, stamps = eeg.buffer.get(0, n)
        # each marker carries the timestamp of its sample (to dejitter/clock-sync noise)
        period = 1 / (rec.sfreq * 20.0)
        for (t, value), sample, expected in zip(
            got, rec.marker_samples[:40], rec.marker_values[:40], strict=True
        ):
            assert abs(stamps[sample] - t) < 0.25 * period and value == expected
        # the stream helper's alignment agrees (a marker on the very first sample may be
        # dropped as "older than the oldest sample" when its stamp is a hair earlier)
        aligned, pending = align_markers(got[1:], eeg.buffer)
        assert pending == []
        assert [m.index for m in aligned] == rec.marker_samples[1:40].tolist()
        assert [m.value for m in aligned] == rec.marker_values[1:40]
        np.testing.assert_array_equal(window, rec.data[:, :n])
    finally:
        markers.stop()
        eeg.stop()
        player.stop()

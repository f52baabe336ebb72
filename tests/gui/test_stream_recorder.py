"""The dashboard records with the one Recorder: a FIF on disk, data back in stream units."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.lsl


def _microvolt_stream(name, source_id, stop):
    from sblr_rt.stream import EEGOutlet, MarkerOutlet, local_clock

    eeg = EEGOutlet(name=name, ch_names=["Samples", "Cz"], sfreq=100.0, source_id=source_id,
                    dtype="float64", unit="microvolts")  # fmt: skip
    mk = MarkerOutlet(name=name + "-Markers", source_id=source_id + "-markers")
    try:
        eeg.wait_for_consumers(20.0)
        t0, n_sent = local_clock(), 0
        while not stop.is_set():
            n_due = int((local_clock() - t0) * 100.0)
            if n_due > n_sent:
                index = np.arange(n_sent, n_due)
                for i in index[index % 50 == 25]:
                    mk.push("left" if i % 100 == 25 else "right", t0 + i / 100.0)
                eeg.push_chunk(np.c_[index, np.full(len(index), 7.0)], t0 + index / 100.0)
                n_sent = n_due
            time.sleep(0.01)
    finally:
        mk.close()
        eeg.close()


def test_stream_recorder_writes_a_fif_and_returns_stream_units(tmp_path, source_id):
    from sblr_rt.gui.stream_recorder import StreamRecorder, default_recording_path

    from sblr_rt.io import read_recording

    name = f"GuiUnits-{source_id[-12:]}"
    stop = threading.Event()
    thread = threading.Thread(target=_microvolt_stream, args=(name, source_id, stop), daemon=True)
    thread.start()
    recorder = StreamRecorder(default_recording_path(tmp_path), name=name, source_id=source_id,
                              marker_source_id=source_id + "-markers", timeout=10.0)  # fmt: skip
    try:
        recorder.start()
        assert recorder.recorder.sidecar.is_dir()  # crash-safe while it runs
        deadline = time.monotonic() + 30
        while recorder.poll()["n_markers"] < 4:
            assert time.monotonic() < deadline, recorder.poll()
            time.sleep(0.05)
        state = recorder.poll()
        assert set(state["counts"]) <= {"left", "right"} and state["seconds"] > 0
        last_cue = recorder.last_marker_timestamp
        while recorder.last_timestamp <= last_cue:
            time.sleep(0.05)
        recording = recorder.stop()
    finally:
        stop.set()
        thread.join(10)
    assert not recorder.recorder.sidecar.exists()
    assert recording.unit == "microvolts"
    index = np.round(recording.data[0])  # volts and back: equal to rounding
    np.testing.assert_allclose(recording.data[0], index, atol=1e-9)
    np.testing.assert_array_equal(np.diff(index), 1)  # nothing lost or doubled
    np.testing.assert_allclose(recording.data[1], 7.0)  # the stream's values, not volts
    in_file = read_recording(recorder.out)
    np.testing.assert_allclose(in_file.data, recording.data * 1e-6)  # the FIF holds volts
    assert in_file.marker_values == recording.marker_values and len(recording.marker_values) >= 4
    np.testing.assert_array_equal(
        index[recording.marker_samples] % 50, 25
    )  # each cue on its own sample

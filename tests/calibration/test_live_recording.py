"""Calibration from a live LSL stream: recorded to disk while it runs, then calibrated."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.lsl


def _stream(name, source_id, stop, sfreq=100.0):
    from pylsl import local_clock

    from sblr_rt.stream import EEGOutlet, MarkerOutlet

    ch = ["C3", "Cz", "C4"]
    eeg = EEGOutlet(name=name, ch_names=ch, sfreq=sfreq, source_id=source_id)
    mk = MarkerOutlet(name=name + "-Markers", source_id=source_id + "-m")
    rng = np.random.default_rng(0)
    try:
        eeg.wait_for_consumers(10.0)
        t_start = local_clock()
        n_sent = 0
        k = 0
        next_cue = 0.5
        while not stop.is_set():
            elapsed = local_clock() - t_start
            n_due = int(elapsed * sfreq)
            if n_due > n_sent:
                chunk = rng.standard_normal((n_due - n_sent, 3)) * 1e-6
                stamps = t_start + np.arange(n_sent, n_due) / sfreq
                for j, t in enumerate(stamps - t_start):
                    # the class shows as a positive or negative deflection after each cue
                    since = t - (next_cue - 0.5)
                    if k > 0 and 0 <= since < 0.3:
                        chunk[j, 0] += (1 if (k - 1) % 2 else -1) * 5e-6
                eeg.push_chunk(chunk, stamps)
                n_sent = n_due
            if elapsed >= next_cue:
                mk.push("a" if k % 2 else "b", t_start + next_cue)
                k += 1
                next_cue += 0.5
            time.sleep(0.01)
    finally:
        mk.close()
        eeg.close()


def test_record_then_calibrate(tmp_path, source_id):
    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.live_recording import record_session

    from sblr_rt.io import read_recording

    name = f"eeg-{source_id}"
    stop = threading.Event()
    thread = threading.Thread(target=_stream, args=(name, source_id, stop), daemon=True)
    thread.start()
    try:
        rec = record_session(
            name,
            marker_stream=name + "-Markers",
            path=tmp_path / "session",
            duration=30.0,
            n_trials=10,
            tail=1.0,
            timeout=10.0,
        )
    finally:
        stop.set()
        thread.join(10.0)
    assert not (tmp_path / "session_raw.fif.rec").exists()  # the sidecar became the FIF
    assert rec.ch_names == ["C3", "Cz", "C4"] and rec.sfreq == 100.0
    assert sum(v in ("a", "b") for v in rec.marker_values) >= 10
    back = read_recording(tmp_path / "session_raw.fif")
    assert back.marker_values == rec.marker_values
    np.testing.assert_array_equal(back.data, rec.data)
    model = calibrate(rec, tmin=0.0, tmax=0.4, cv=2, search="none", ranks=(1,), n_jobs=1)
    assert model.classes == ["a", "b"]
    assert model.metadata["epochs"]["used"] >= 8

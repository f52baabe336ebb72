"""Recording: replay -> record -> FIF equals the file; a killed recorder loses <= 1 s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import mne
import numpy as np
import pytest

from sblr_rt.io import Recording, read_recording
from sblr_rt.playback.replay import RecordingReader, StreamPlayer, replay
from sblr_rt.recording.recorder import Recorder, read_sidecar, recover, sidecar_path
from sblr_rt.stream import local_clock

SFREQ = 250.0


def _indexed_recording(n_times, marker_every):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, n_times)) * 1e-5
    data[0] = np.arange(n_times)
    samples = np.arange(7, n_times, marker_every)
    return Recording(data=data, sfreq=SFREQ, ch_names=["Samples", "C3", "Cz", "C4"],
                     marker_times=samples / SFREQ,
                     marker_values=[f"cue{i % 3}" for i in range(len(samples))],
                     source="indexed")  # fmt: skip


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.lsl
def test_replay_record_round_trip(tmp_path, source_id):
    rec = _indexed_recording(1500, 200)
    player = StreamPlayer(RecordingReader(rec), name="rt-replay", source_id=source_id,
                          speed=4.0, dtype="float64", wait_for_consumers=60.0)  # fmt: skip
    out = tmp_path / "session_raw.fif"
    recorder = Recorder(out, source_id=source_id, marker_source_id=source_id + "-markers")
    try:
        recorder.start()
        player.start()
        _wait(lambda: recorder.n_samples >= 1500 and recorder.n_markers >= len(rec.marker_values),
              60, "the recorded samples")  # fmt: skip
        assert recorder.sidecar.is_dir()
        assert recorder.stop() == out
    finally:
        player.stop()
    assert not sidecar_path(out).exists()
    raw = mne.io.read_raw_fif(out, preload=True, verbose="error")
    assert raw.ch_names == rec.ch_names and raw.info["sfreq"] == SFREQ
    description = json.loads(raw.info["description"])
    assert description["source_id"] == source_id
    assert description["effective_sfreq"] == pytest.approx(4 * SFREQ, rel=0.01)
    back = read_recording(out)
    np.testing.assert_array_equal(back.data, rec.data)
    np.testing.assert_array_equal(back.marker_samples, rec.marker_samples)
    assert back.marker_values == rec.marker_values
    # and the recorded file replays (a second pass through LSL) to the same thing again
    again_out = tmp_path / "again_raw.fif"
    player = replay(out, source_id=source_id + "-2", speed=8.0, dtype="float64",
                    wait_for_consumers=60.0)  # fmt: skip
    recorder = Recorder(again_out, source_id=source_id + "-2",
                        marker_source_id=source_id + "-2-markers")  # fmt: skip
    try:
        recorder.start()
        player.start()
        _wait(lambda: recorder.n_samples >= 1500 and recorder.n_markers >= len(rec.marker_values),
              60, "the recorded samples of the second pass")  # fmt: skip
        recorder.stop()
    finally:
        player.stop()
    again = read_recording(again_out)
    np.testing.assert_array_equal(again.data, rec.data)
    assert list(zip(again.marker_samples, again.marker_values, strict=True)) == list(
        zip(rec.marker_samples, rec.marker_values, strict=True)
    )


@pytest.mark.lsl
def test_killed_recorder_recovers_and_sigterm_closes(tmp_path, source_id):
    rec = _indexed_recording(250 * 60, 250)
    player = StreamPlayer(RecordingReader(rec, loop=True), name="rt-live",
                          source_id=source_id, dtype="float64")  # fmt: skip
    player.start()
    killed, closed = tmp_path / "killed_raw.fif", tmp_path / "closed_raw.fif"
    procs = []
    try:
        for out in (killed, closed):
            cmd = [sys.executable, "-m", "sblr_rt.cli", "record", "--out", str(out),
                   "--source-id", source_id,
                   "--markers-source-id", source_id + "-markers"]  # fmt: skip
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        ts_files = [sidecar_path(p) / "eeg_ts.bin" for p in (killed, closed)]

        def recorded():
            for proc in procs:
                if proc.poll() is not None:
                    raise AssertionError(f"recorder exited: {proc.stderr.read().decode()}")
            return all(f.exists() and f.stat().st_size >= 8 * 600 for f in ts_files)

        _wait(recorded, 90, "2.4 s of recorded samples")
        procs[0].send_signal(signal.SIGKILL)
        t_kill = local_clock()
        procs[1].send_signal(signal.SIGTERM)
        assert procs[0].wait(timeout=30) == -signal.SIGKILL
        assert procs[1].wait(timeout=60) == 0, procs[1].stderr.read().decode()[-2000:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        player.stop()
    # SIGTERM: the CLI wrote the FIF and removed its sidecar
    assert closed.is_file() and not sidecar_path(closed).exists()
    # SIGKILL: the sidecar holds all but the last second; recover() converts it
    contents = read_sidecar(sidecar_path(killed))
    assert contents["timestamps"][-1] > t_kill - 1.5
    out = recover(sidecar_path(killed))
    assert out == killed
    for path in (killed, closed):
        got = read_recording(path)
        index = got.data[0]
        np.testing.assert_array_equal(np.diff(index), 1)  # contiguous, nothing lost inside
        first = int(index[0])
        np.testing.assert_array_equal(got.data, rec.data[:, first : first + got.n_samples])
        expected = [(s - first, v) for s, v in zip(rec.marker_samples, rec.marker_values,
                    strict=True) if first <= s < first + got.n_samples]  # fmt: skip
        assert list(zip(got.marker_samples.tolist(), got.marker_values, strict=True)) == expected
        assert len(expected) >= 2


def test_recover_errors(tmp_path):
    with pytest.raises(ValueError, match="not a recording sidecar"):
        recover(tmp_path)
    with pytest.raises(ValueError, match=r"'out' must be a \.fif"):
        Recorder(tmp_path / "x.edf")
    side = sidecar_path(tmp_path / "y_raw.fif")
    side.mkdir()
    with pytest.raises(RuntimeError, match="--recover"):
        Recorder(tmp_path / "y_raw.fif")
    # a truncated last row is dropped
    header = {"out": str(tmp_path / "y_raw.fif"), "name": "x", "source_id": "x",
              "ch_names": ["a", "b"], "units": ["microvolts"] * 2, "sfreq": 100.0,
              "dtype": "<f4", "lsl_start": 0.0,
              "utc_start": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (side / "header.json").write_text(json.dumps(header))
    data = np.arange(20, dtype="<f4").reshape(10, 2)
    (side / "eeg.bin").write_bytes(data.tobytes()[:-3])
    (side / "eeg_ts.bin").write_bytes((10 + np.arange(10) / 100.0).tobytes())
    (side / "markers.jsonl").write_text('{"t": 10.031, "value": "go"}\n{"t": 10.0')
    contents = read_sidecar(side)
    assert contents["data"].shape == (9, 2) and contents["markers"] == [(10.031, "go")]
    got = read_recording(recover(side))
    np.testing.assert_allclose(got.data, data[:9].T * 1e-6)  # microvolts -> volts
    assert got.marker_values == ["go"] and got.marker_samples.tolist() == [3]
    os.remove(tmp_path / "y_raw.fif")

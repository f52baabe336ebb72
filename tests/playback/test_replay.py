"""Replay: what arrives at an inlet equals the file, sample for sample, markers included."""

from __future__ import annotations

import subprocess
import sys
import time

import mne
import numpy as np
import pylsl
import pytest

from sblr_rt.io import Recording, read_recording
from sblr_rt.playback.replay import RecordingReader

SFREQ = 250.0
N_TIMES = 1000
MARKER_SAMPLES = [0, 137, 500, 501, 999]


@pytest.fixture
def indexed_fif(tmp_path):
    """A FIF file whose first channel holds the sample index, with annotations."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((5, N_TIMES)) * 1e-5
    data[0] = np.arange(N_TIMES)
    info = mne.create_info(["Samples", "C3", "Cz", "C4", "Pz"], SFREQ, "eeg")
    raw = mne.io.RawArray(data, info, verbose="error")
    onsets = np.array(MARKER_SAMPLES) / SFREQ
    raw.set_annotations(mne.Annotations(onsets, 0.0, ["a", "b", "c", "d", "e"]))
    path = tmp_path / "indexed_raw.fif"
    raw.save(path, verbose="error")
    return path


def _collect(eeg, mrk, n_expected, n_markers, proc, timeout=60.0):
    samples, stamps, markers = [], [], []
    deadline = time.monotonic() + timeout
    while (len(stamps) < n_expected or len(markers) < n_markers) and time.monotonic() < deadline:
        if len(stamps) < n_expected:
            chunk, ts = eeg.pull_chunk(timeout=0.1, max_samples=4096)
            samples += chunk
            stamps += ts
        m, mts = mrk.pull_chunk(timeout=0.0 if len(stamps) < n_expected else 0.1)
        markers += [(t, v[0]) for v, t in zip(m, mts, strict=True)]
    proc.wait(timeout=30)
    return np.array(samples), np.array(stamps), markers


def _start_replay(path, source_id, *extra):
    cmd = [sys.executable, "-m", "sblr_rt.cli", "replay", str(path), "--source-id",
           source_id, "--name", "test-replay", "--dtype", "float64",
           "--wait-for-consumers", "60", *extra]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    eeg_info = pylsl.resolve_byprop("source_id", source_id, 1, 60.0)
    mrk_info = pylsl.resolve_byprop("source_id", source_id + "-markers", 1, 30.0)
    if not (eeg_info and mrk_info):
        proc.kill()
        raise AssertionError(f"replay streams not found: {proc.communicate()[1]}")
    eeg = pylsl.StreamInlet(eeg_info[0], processing_flags=pylsl.proc_ALL)
    mrk = pylsl.StreamInlet(mrk_info[0], processing_flags=pylsl.proc_ALL)
    mrk.open_stream(timeout=10.0)
    eeg.open_stream(timeout=10.0)
    return proc, eeg, mrk


@pytest.mark.lsl
@pytest.mark.parametrize("speed", [1.0, 5.0])
def test_replay_equals_file_sample_for_sample(indexed_fif, source_id, speed):
    rec = read_recording(indexed_fif)
    proc, eeg, mrk = _start_replay(indexed_fif, source_id, "--speed", str(speed))
    try:
        assert eeg.info().get_channel_labels() == rec.ch_names
        assert rec.unit == "V" and eeg.info().get_channel_units() == ["volts"] * 5
        assert eeg.info().nominal_srate() == SFREQ
        data, stamps, markers = _collect(eeg, mrk, N_TIMES, 5, proc)
    finally:
        del eeg, mrk
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    # every sample, in order, none lost or repeated
    np.testing.assert_array_equal(data[:, 0], np.arange(N_TIMES))
    np.testing.assert_array_equal(data, rec.data.T)
    # regular spacing of 1 / (sfreq * speed)
    np.testing.assert_allclose(np.diff(stamps), 1 / (SFREQ * speed), atol=2e-4)
    # markers keep their values and sit exactly on the timestamp of their sample
    assert [v for _, v in markers] == rec.marker_values
    for (t, _), sample in zip(markers, MARKER_SAMPLES, strict=True):
        nearest = int(np.argmin(np.abs(stamps - t)))
        assert data[nearest, 0] == sample
        assert abs(stamps[nearest] - t) < 0.1 / (SFREQ * speed)


@pytest.mark.lsl
def test_replay_loop_and_duration(indexed_fif, source_id):
    proc, eeg, mrk = _start_replay(indexed_fif, source_id, "--speed", "10", "--loop",
                                   "--duration", str(2.5 * N_TIMES / SFREQ))  # fmt: skip
    try:
        data, _, markers = _collect(eeg, mrk, int(2.5 * N_TIMES), 12, proc)
    finally:
        del eeg, mrk
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    np.testing.assert_array_equal(data[:, 0], np.arange(int(2.5 * N_TIMES)) % N_TIMES)
    assert [v for _, v in markers] == list("abcde") * 2 + ["a", "b"]


@pytest.mark.lsl
def test_replay_holds_its_streams_open_until_the_consumer_has_closed(indexed_fif, source_id):
    proc, eeg, mrk = _start_replay(indexed_fif, source_id, "--speed", "10", "--hold", "120")
    try:
        lines = [proc.stdout.readline() for _ in range(2)]  # "replaying ...", "pushed ..."
        assert lines[1].startswith(f"pushed {N_TIMES} samples and 5 markers"), lines
        stamps = []
        while len(stamps) < N_TIMES:
            stamps += eeg.pull_chunk(timeout=1.0, max_samples=4096)[1]
        assert len(stamps) == N_TIMES
        # The data has ended, yet the streams are still there for the consumer to close.
        assert proc.poll() is None
        assert pylsl.resolve_byprop("source_id", source_id, 1, 10.0)
    finally:
        del eeg, mrk
        proc.terminate()
        proc.wait(30)
    assert proc.returncode != 0  # ended by the signal, not by the end of the hold


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


def test_replay_cli_errors(tmp_path, capsys):
    from sblr_rt.cli import main

    assert main(["replay", str(tmp_path / "missing.edf")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("x")
    assert main(["replay", str(tmp_path / "x.txt")]) == 1
    assert "extensions" in capsys.readouterr().err


@pytest.mark.lsl
def test_accelerated_replay_of_shipped_epochs_aligns_markers(bcicomp2003_path, source_id):
    """At x20, LSLSource + align_markers put every trial marker on its first sample."""
    from sblr_rt.playback.replay import replay
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

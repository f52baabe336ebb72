"""``sblr-rt replay``: what arrives at an inlet equals the file, sample for sample."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import mne
import numpy as np
import pylsl
import pytest
from sblr_rt.cli import main

from sblr_rt.io import read_recording

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


def _collect(eeg, mrk, n_expected, n_markers, timeout=60.0):
    samples, stamps, markers = [], [], []
    deadline = time.monotonic() + timeout
    while (len(stamps) < n_expected or len(markers) < n_markers) and time.monotonic() < deadline:
        if len(stamps) < n_expected:
            chunk, ts = eeg.pull_chunk(timeout=0.1, max_samples=4096)
            samples += chunk
            stamps += ts
        m, mts = mrk.pull_chunk(timeout=0.0 if len(stamps) < n_expected else 0.1)
        markers += [(t, v[0]) for v, t in zip(m, mts, strict=True)]
    return np.array(samples), np.array(stamps), markers


def _start_replay(path, source_id, *extra):
    """Start ``sblr-rt replay`` holding its streams after the data (for the inlets to close
    first); return the process and open inlets on the EEG and marker streams."""
    cmd = [sys.executable, "-m", "sblr_rt.cli", "replay", str(path), "--source-id",
           source_id, "--name", "test-replay", "--dtype", "float64",
           "--wait-for-consumers", "60", "--hold", "120", *extra]  # fmt: skip
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


def _interrupt(proc):
    """Read what the replay printed up to its hold, then Ctrl-C it; return that output."""
    lines = [proc.stdout.readline() for _ in range(2)]  # "replaying ...", "pushed ..."
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    return "".join(lines)


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.mark.lsl
@pytest.mark.parametrize("speed", [1.0, 5.0])
def test_replay_equals_file_sample_for_sample(indexed_fif, source_id, speed):
    rec = read_recording(indexed_fif)
    proc, eeg, mrk = _start_replay(indexed_fif, source_id, "--speed", str(speed))
    try:
        assert eeg.info().get_channel_labels() == rec.ch_names
        assert rec.unit == "V" and eeg.info().get_channel_units() == ["volts"] * 5
        assert eeg.info().nominal_srate() == SFREQ
        data, stamps, markers = _collect(eeg, mrk, N_TIMES, 5)
        del eeg, mrk  # the inlets close while the replay holds its outlets
        out = _interrupt(proc)
    finally:
        _stop(proc)
    assert proc.returncode == 130  # Ctrl-C during the hold
    assert f"pushed {N_TIMES} samples and 5 markers" in out
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
        data, _, markers = _collect(eeg, mrk, int(2.5 * N_TIMES), 12)
        del eeg, mrk
        out = _interrupt(proc)
    finally:
        _stop(proc)
    assert f"pushed {int(2.5 * N_TIMES)} samples and 12 markers" in out and "looping" in out
    np.testing.assert_array_equal(data[:, 0], np.arange(int(2.5 * N_TIMES)) % N_TIMES)
    assert [v for _, v in markers] == list("abcde") * 2 + ["a", "b"]


@pytest.mark.lsl
def test_replay_holds_its_streams_open_until_the_consumer_has_closed(indexed_fif, source_id):
    proc, eeg, mrk = _start_replay(indexed_fif, source_id, "--speed", "10")
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


@pytest.mark.lsl
def test_replay_without_hold_exits_0_after_the_last_sample(indexed_fif, source_id, capsys):
    args = ["replay", str(indexed_fif), "--source-id", source_id, "--speed", "50"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"as 'indexed_raw' (source_id '{source_id}') and 'indexed_raw-Markers' at x50" in out
    assert f"pushed {N_TIMES} samples and 5 markers" in out


def test_replay_refuses_a_missing_or_unknown_file(tmp_path, capsys, one_line_error):
    assert main(["replay", str(tmp_path / "missing.edf")]) == 1
    assert "does not exist" in one_line_error(capsys.readouterr().err, "replay")
    (tmp_path / "x.abc").write_text("x")  # .txt is a format MNE reads (BOXY)
    assert main(["replay", str(tmp_path / "x.abc")]) == 1
    assert "extensions" in one_line_error(capsys.readouterr().err, "replay")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--chunk-ms", "0"], "'--chunk-ms' must be > 0, got 0.0"),
        (["--hold", "-1"], "'--hold' must be >= 0 seconds, got -1.0"),
    ],
)
def test_replay_refuses_bad_arguments_in_one_line(
    extra, message, indexed_fif, capsys, one_line_error
):
    assert main(["replay", str(indexed_fif), *extra]) == 1
    assert message in one_line_error(capsys.readouterr().err, "replay")

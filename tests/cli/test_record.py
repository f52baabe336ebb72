"""``sblr-rt record``: a killed recorder loses <= 1 s, SIGTERM closes, --recover, refusals."""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest
from sblr_rt.cli import main

from sblr_rt.io import read_recording
from sblr_rt.playback.stream_player import RecordingReader, StreamPlayer
from sblr_rt.recorder import read_sidecar, recover, sidecar_path
from sblr_rt.stream import local_clock


@pytest.mark.lsl
def test_killed_recorder_recovers_and_sigterm_closes(tmp_path, source_id, indexed_recording, wait):
    rec = indexed_recording(250 * 60, 250)
    player = StreamPlayer(RecordingReader(rec, loop=True), name="rt-live",
                          source_id=source_id, dtype="float64")  # fmt: skip
    player.start()
    killed, closed = tmp_path / "killed_raw.fif", tmp_path / "closed_raw.fif"
    procs = []
    try:
        for out in (killed, closed):
            cmd = [sys.executable, "-m", "sblr_rt.cli", "record", "--out", str(out),
                   "--source-id", source_id,
                   "--marker-source-id", source_id + "-markers"]  # fmt: skip
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        ts_files = [sidecar_path(p) / "eeg_ts.bin" for p in (killed, closed)]

        def recorded():
            for proc in procs:
                if proc.poll() is not None:
                    raise AssertionError(f"recorder exited: {proc.stderr.read().decode()}")
            return all(f.exists() and f.stat().st_size >= 8 * 600 for f in ts_files)

        wait(recorded, "2.4 s of recorded samples", 90)
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


def test_recover_cli_names_overwrite_not_a_python_argument(tmp_path, capsys, write_sidecar):
    out = tmp_path / "z_raw.fif"
    side, _ = write_sidecar(out)
    assert main(["record", "--recover", str(side)]) == 0
    code = main(["record", "--recover", str(side)])  # e.g. run twice after a kill
    err = capsys.readouterr().err
    assert code != 0 and "--overwrite" in err
    assert "overwrite=True" not in err and "Traceback" not in err
    assert main(["record", "--recover", str(side), "--overwrite"]) == 0


def test_record_refuses_an_existing_out_naming_overwrite(tmp_path, capsys, one_line_error):
    out = tmp_path / "taken_raw.fif"
    out.write_bytes(b"a recording")
    assert main(["record", "--out", str(out), "--timeout", "0.1"]) == 1
    line = one_line_error(capsys.readouterr().err, "record")
    assert "exists: pass --overwrite to replace it" in line
    assert out.read_bytes() == b"a recording"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "'--out' is required to record, got none"),
        (["--out", "x_raw.fif", "--duration", "0"], "'--duration' must be > 0 seconds"),
    ],
)
def test_record_refuses_bad_arguments_in_one_line(
    argv, message, tmp_path, monkeypatch, capsys, one_line_error
):
    monkeypatch.chdir(tmp_path)
    assert main(["record", *argv]) == 1
    assert message in one_line_error(capsys.readouterr().err, "record")
    assert not list(tmp_path.iterdir())


@pytest.mark.lsl
def test_record_refuses_a_stream_declaring_an_absurd_rate_in_one_line(
    tmp_path, source_id, capsys, one_line_error
):
    import pylsl

    info = pylsl.StreamInfo("fast", "EEG", 8, 1e8, "float32", source_id)
    outlet = pylsl.StreamOutlet(info, 8, 1)
    out = tmp_path / "fast_raw.fif"
    try:
        code = main(["record", "--out", str(out), "--source-id", source_id,
                     "--duration", "1", "--timeout", "5"])  # fmt: skip
    finally:
        del outlet
    assert code == 1
    line = one_line_error(capsys.readouterr().err, "record")
    assert "declares a sampling rate of 1e+08 Hz: expected a rate in (0, 100000] Hz" in line
    assert "did not answer" not in line
    assert not list(tmp_path.iterdir())  # no output, no sidecar, no lock left

"""``sblr-rt simulate``: the process streams the generator on LSL; clean refusals."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pylsl
import pytest
from sblr_rt.cli import main

from sblr_rt.playback.simulator import Simulator, simulator_channels

from .conftest import DEADLINE


@pytest.mark.lsl
def test_simulate_process_streams_the_generator(source_id):
    args = dict(sfreq=500.0, n_channels=16, seed=5, first_cue=0.3, trial_duration=0.5,
                iti=(0.3, 0.3))  # fmt: skip
    expected, expected_cues = Simulator(**args).read(1000)
    cmd = [sys.executable, "-m", "sblr_rt.cli", "simulate", "--source-id", source_id,
           "--name", "test-sim", "--sfreq", "500", "--n-channels", "16", "--seed", "5",
           "--first-cue", "0.3", "--trial-duration", "0.5", "--iti", "0.3", "0.3",
           "--duration", "2", "--wait-for-consumers", "60", "--hold", "60"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        eeg_info = pylsl.resolve_byprop("source_id", source_id, 1, 60.0)
        mrk_info = pylsl.resolve_byprop("source_id", source_id + "-markers", 1, DEADLINE)
        assert eeg_info and mrk_info, proc.stderr.read() if proc.poll() is not None else ""
        eeg = pylsl.StreamInlet(eeg_info[0], processing_flags=pylsl.proc_ALL)
        mrk = pylsl.StreamInlet(mrk_info[0], processing_flags=pylsl.proc_ALL)
        info = eeg.info(timeout=10.0)
        assert info.get_channel_labels() == simulator_channels(16)
        assert info.get_channel_units() == ["volts"] * 16  # Simulator.read() gives volts
        assert info.nominal_srate() == 500.0 and info.type() == "EEG"
        mrk.open_stream(timeout=10.0)
        eeg.open_stream(timeout=10.0)
        samples, stamps, cues = [], [], []
        deadline = time.monotonic() + 60
        # --hold keeps the outlets open, so every cue can be waited for
        while (len(stamps) < 1000 or len(cues) < len(expected_cues)) and (
            time.monotonic() < deadline
        ):
            chunk, ts = eeg.pull_chunk(timeout=0.1)
            samples += chunk
            stamps += ts
            m, mts = mrk.pull_chunk(timeout=0.0)
            cues += [(t, v[0]) for v, t in zip(m, mts, strict=True)]
        del eeg, mrk
        # the data has ended: the summary line comes before the hold
        assert proc.stdout.readline().startswith("simulating 16 channels at 500 Hz")
        assert proc.stdout.readline().strip() == "streamed 1000 samples"
        proc.send_signal(signal.SIGINT)  # Ctrl-C ends the hold
        assert proc.wait(30) == 130, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(stamps) == 1000
    np.testing.assert_allclose(np.array(samples), expected.astype(np.float32), rtol=1e-6)
    stamps = np.array(stamps)
    np.testing.assert_allclose(np.diff(stamps), 1 / 500.0, atol=1e-4)
    assert [v for _, v in cues] == [v for _, v in expected_cues]
    for (t, _), (index, _) in zip(cues, expected_cues, strict=True):
        assert abs(t - stamps[index]) < 1e-3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--chunk-ms", "0"], "'--chunk-ms' must be > 0, got 0.0"),
        (["--hold", "-1"], "'--hold' must be >= 0 seconds, got -1.0"),
        (["--classes", "left"], "'classes'"),
        (["--sfreq", "10"], "'sfreq'"),
    ],
)
def test_simulate_refuses_bad_arguments_in_one_line(
    extra, message, source_id, capsys, one_line_error
):
    assert main(["simulate", "--source-id", source_id, "--duration", "1", *extra]) == 1
    assert message in one_line_error(capsys.readouterr().err, "simulate")


@pytest.mark.parametrize("given", [["left,right,feet"], ["left", "right", "feet"],
                                   ["left,", "right", "feet"]])  # fmt: skip
def test_simulate_takes_classes_with_commas_as_every_command_does(given, monkeypatch):
    from sblr_rt.playback import simulator

    seen = {}

    def capture(**kwargs):
        seen.update(kwargs)
        raise RuntimeError("captured")

    monkeypatch.setattr(simulator, "run_simulator", capture)
    assert main(["simulate", "--duration", "1", "--classes", *given]) == 1
    assert seen["classes"] == ["left", "right", "feet"]

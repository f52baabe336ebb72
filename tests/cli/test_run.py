"""``sblr-rt run``: classify a live LSL stream, print trial decisions, refuse cleanly."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from sblr_rt.cli import main

from .conftest import CH_NAMES, DEADLINE, SFREQ

#: (sample index, cue) of the markers sent with the EEG; each trial window ends 0.5 s later.
CUES = [(60, "left"), (140, "right"), (220, "left")]
N_SAMPLES = 300


def _feed(eeg, markers, stop, speed=4.0):
    """Push N_SAMPLES random samples at ``speed`` x real time, each cue with its sample."""
    from sblr_rt.stream import local_clock

    if not (eeg.wait_for_consumers(DEADLINE) and markers.wait_for_consumers(DEADLINE)):
        return
    data = np.random.default_rng(4).standard_normal((N_SAMPLES, len(CH_NAMES)))
    rate = SFREQ * speed
    t0 = local_clock()
    n = 0
    while n < N_SAMPLES and not stop.is_set():
        k = min(5, N_SAMPLES - n)
        stamps = t0 + np.arange(n, n + k) / rate
        for index, value in CUES:
            if n <= index < n + k:
                markers.push(value, t0 + index / rate)
        eeg.push_chunk(data[n : n + k], stamps)
        n += k
        stop.wait(max(0.0, t0 + n / rate - local_clock()))


def _session_run(source_id, sessions, *options, on_end=None):
    """Run ``run`` in trial mode on a stream fed with the CUES; return (code, stream name).

    ``on_end(feeder, stop)``, if given, runs on a thread of its own meanwhile.
    """
    from sblr_rt.stream import EEGOutlet, MarkerOutlet

    name = f"cli-session-{source_id[-12:]}"
    eeg = EEGOutlet(name=name, ch_names=CH_NAMES, sfreq=SFREQ, source_id=source_id)
    markers = MarkerOutlet(name=name + "-Markers", source_id=source_id + "-markers")
    stop = threading.Event()
    feeder = threading.Thread(target=_feed, args=(eeg, markers, stop))
    feeder.start()
    ender = None
    if on_end is not None:  # once the feed is over and the session runs
        ender = threading.Thread(target=on_end, args=(feeder, stop))
        ender.start()
    try:
        code = main(["run", "--stream", name, "--source-id", source_id,
                     "--marker-source-id", source_id + "-markers", "--mode", "trial",
                     "--status-every", "0", "--outlet-name", name + "-Pred",
                     "--timeout", str(DEADLINE), "--sessions", str(sessions),
                     *options])  # fmt: skip
    finally:
        stop.set()
        feeder.join(DEADLINE)
        if ender is not None:
            ender.join(DEADLINE)
        del markers, eeg  # inlets were deleted by the loop's stop
    return code, name


#: A trial line: number, cue, its class, the decision, right or wrong, running accuracy.
TRIAL = (
    r"^trial (\d+): cue '(\w+)' \((\w+)\) -> (\w+), (correct|wrong); (\d+)/(\d+) correct "
    r"\((\d+)%\); p left ([\d.]+), right ([\d.]+); smoothed .*; at tmax"
)


@pytest.mark.lsl
def test_run_classifies_a_stream_and_prints_each_trial(model_path, source_id, tmp_path,
                                                       capsys):  # fmt: skip
    code, name = _session_run(source_id, tmp_path, "--model", str(model_path),
                              "--hop", "0.2", "--duration", "3")  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"classifying '{name}' (3 channels at 100 Hz)" in out
    assert f"decisions on '{name}-Pred'" in out
    trials = re.findall(TRIAL, out, re.MULTILINE)
    assert [t[1] for t in trials] == [value for _, value in CUES], out
    n_correct = 0
    for k, (index, cue, true, label, word, correct, scored, pct, left, right) in enumerate(trials):
        assert int(index) == k + 1 and true == cue and label in ("left", "right")
        assert word == ("correct" if label == true else "wrong")
        n_correct += label == true
        assert (int(correct), int(scored)) == (n_correct, k + 1)  # the running accuracy
        assert int(pct) == round(100 * n_correct / (k + 1))
        assert float(left) + float(right) == pytest.approx(1.0, abs=0.011)
    status = [x for x in out.splitlines() if x.startswith("[")][-1]
    n_decisions = int(re.search(r"\] (\d+) decisions", status).group(1))
    assert n_decisions > len(CUES), status  # sliding decisions as well as the trials
    assert "3 trials" in status
    # the sender stopped pushing after the last trial: the truthful state is "stalled"
    assert status.split("]")[0] in ("[streaming", "[stalled")


def test_run_refuses_a_missing_model_in_one_line(tmp_path, capsys, one_line_error):
    assert main(["run", "--model", str(tmp_path / "missing.npz")]) == 1
    line = one_line_error(capsys.readouterr().err, "run")
    assert "'--model' file not found" in line and "missing.npz" in line


def test_run_refuses_a_non_positive_duration(model_path, capsys, one_line_error):
    assert main(["run", "--model", str(model_path), "--duration", "0"]) == 1
    assert "'--duration' must be > 0" in one_line_error(capsys.readouterr().err, "run")


@pytest.mark.lsl
def test_run_says_when_the_sessions_timing_differs_from_the_models(model_path, source_id, capsys):
    args = ["run", "--model", str(model_path), "--source-id", source_id, "--timeout", "0.2"]
    assert main(args) == 1  # no stream: the check comes before the connection
    assert "timing differs" not in capsys.readouterr().out  # [0, 0.5) s within 4.25 s
    assert main([*args, "--trial-duration", "0.3"]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "timing" in x]
    assert line == (
        "WARNING: timing differs: the model reads [0, 0.5) s after each cue, but the class "
        "lasts 0.3 s after its cue here (--trial-duration 0.3): the last 0.2 s of each window "
        "hold the rest after the task; calibrate with --tmax 0.3 or lengthen the task to 0.5 s"
    )


@pytest.mark.lsl
def test_run_says_when_the_stream_is_not_found(model_path, source_id, capsys):
    args = ["run", "--model", str(model_path), "--source-id", source_id, "--timeout", "0.5"]
    assert main(args) == 1
    err = capsys.readouterr().err
    # the error line, then what LSL does show (a list, so more lines), never a traceback
    assert err.startswith("sblr-rt run: error: No LSL EEG stream") and "Traceback" not in err
    assert source_id in err.splitlines()[0] and "Streams visible from this machine" in err


@pytest.mark.lsl
def test_run_adapt_names_the_model_version_and_shows_the_adaptation(
    model_path, source_id, tmp_path, capsys, caplog
):
    code, _ = _session_run(source_id, tmp_path, "--init", str(model_path), "--hop", "0",
                           "--duration", "3")  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    (session,) = tmp_path.iterdir()
    versions = session / "versions"
    assert f"versions in {versions} from v0" in out
    trial_line = r"^trial \d+: cue '(\w+)' .*; at tmax \[model v(\d+)\]$"
    trials = re.findall(trial_line, out, re.MULTILINE)
    # Three trials (2 left, 1 right) never make a refit with 3 per class: version 0 decides.
    assert trials == [(value, "0") for _, value in CUES], out
    status = [x for x in out.splitlines() if x.startswith("[")][-1]
    # the warm-up waits for trials: a status, neither an ERROR nor a failure
    assert "; model v0 (3 trials, refit waiting for 3 trials per class" in status, status
    assert "failed" not in status and "ERROR" not in caplog.text
    assert (versions / "v0000.sblr.npz").is_file()  # the starting model, version 0
    assert f"model versions: v0 to v0 (0 refits, 0 failed); last: {versions}" in out


def test_run_adapt_needs_trial_mode_and_an_existing_init(model_path, tmp_path, capsys,
                                                       one_line_error):  # fmt: skip
    assert main(["run", "--model", str(model_path), "--adapt"]) == 1
    assert "'--adapt' needs '--mode trial'" in one_line_error(capsys.readouterr().err, "run")
    assert main(["run", "--init", str(tmp_path / "old.npz"), "--mode", "trial"]) == 1
    assert "'--init' file not found" in one_line_error(capsys.readouterr().err, "run")
    assert main(["run", "--model", str(model_path), "--mode", "trial", "--adapt",
                 "--adapt-every", "-1"]) == 1  # fmt: skip
    assert "'--adapt-every' must be >= 0" in one_line_error(capsys.readouterr().err, "run")


def test_smoothing_comes_from_the_calibration_toml_and_the_options_win(model_path, tmp_path):
    # [online] of the calibration TOML is stored with the model (metadata["config"]) and
    # read back as the classifier's run_info; run's options override it field by field,
    # and --early off turns early decisions off.
    from sblr_rt.calibration.config import load_config
    from sblr_rt.cli import build_parser
    from sblr_rt.cli.run import smoothing_of

    from sblr_rt import load_model
    from sblr_rt.online import OnlineClassifier
    from sblr_rt.online.evidence import Smoothing

    toml = tmp_path / "calibration.toml"
    toml.write_text('[online]\nsmoothing = "ema"\ntau = 2.0\nearly = 0.9\nearly_after = 0.5\n')
    model = load_model(model_path)
    model.metadata = {**(model.metadata or {}), "config": load_config(toml).to_dict()}
    clf = OnlineClassifier(model)
    parser = build_parser()

    def smoothing(*options):
        return smoothing_of(parser.parse_args(["run", "--model", "m", *options]), clf)

    assert smoothing() == Smoothing("ema", 2.0, 0.9, 0.5)
    assert smoothing("--tau", "0.25") == Smoothing("ema", 0.25, 0.9, 0.5)
    assert smoothing("--smoothing", "mean", "--early", "0.7") == Smoothing("mean", 2.0, 0.7, 0.5)
    assert smoothing("--early", "off") == Smoothing("ema", 2.0, None, 0.5)
    assert smoothing("--early-after", "0") == Smoothing("ema", 2.0, 0.9, 0.0)
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--early", "soon"])


@pytest.mark.lsl
def test_a_session_ends_when_its_stream_is_gone_and_sums_up(model_path, source_id, tmp_path,
                                                            capsys):  # fmt: skip
    import json

    # No --duration: the feed stops after the third cue and the session ends by itself.
    code, _ = _session_run(source_id, tmp_path, "--model", str(model_path), "--hop", "0.2",
                           "--grace", "1")  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    (session,) = tmp_path.iterdir()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d", session.name), session.name
    assert f"session folder: {session}" in out
    assert re.search(r"^session ended \(the EEG stream was (stalled|lost) for more than 1 s\)",
                     out, re.MULTILINE), out  # fmt: skip
    trials = re.findall(TRIAL, out, re.MULTILINE)
    n_correct = sum(t[4] == "correct" for t in trials)
    summary = json.loads((session / "summary.json").read_text())
    assert summary["ended_by"] == "stream gone" and summary["mode"] == "trial"
    score = summary["score"]
    assert (score["n_trials"], score["n_correct"]) == (3, n_correct)
    assert score["guessing"] == 0.5 and score["chance_level"] == 1.0  # 3 trials: too few
    assert sum(map(sum, score["confusion"])) == 3
    assert f"trials: 3 decided, {n_correct} correct" in out
    assert "3 trial(s) are too few to beat chance at p < 0.05" in out
    assert "confusion matrix:" in out and "early decisions: 0 of 3 trials" in out
    assert summary["latency"]["n"] == summary["n_decisions"] > 3
    assert re.search(r"^latency \(window end to publication\) p50 [\d.]+ ms, p99 [\d.]+ ms",
                     out, re.MULTILINE)  # fmt: skip
    lines = (session / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == summary["n_decisions"]
    decided = [json.loads(x) for x in lines]
    assert [d["cue"] for d in decided if d["trial"]] == [cue for _, cue in CUES]
    assert summary["paths"]["summary"] == str(session / "summary.json")
    assert f"wrote in {session}: decisions.jsonl, summary.json" in out


@pytest.mark.lsl
def test_a_second_session_leaves_the_first_unchanged_and_sigterm_sums_up(
    model_path, source_id, tmp_path, capsys
):
    import json
    import os
    import signal

    sessions = tmp_path / "sessions"
    args = ("--init", str(model_path), "--hop", "0.2", "--grace", "30")  # versions too
    assert _session_run(source_id, sessions, *args, "--duration", "3")[0] == 0
    (first,) = sessions.iterdir()
    before = {p: p.read_bytes() for p in first.rglob("*") if p.is_file()}
    assert {p.relative_to(first).as_posix() for p in before} == {
        "decisions.jsonl", "summary.json", "versions/v0000.sblr.npz"
    }  # fmt: skip
    capsys.readouterr()

    def terminate(feeder, stop):  # SIGTERM once the trials were fed and the session runs
        feeder.join(DEADLINE)
        deadline = threading.Event()
        while len(list(sessions.iterdir())) < 2 and not deadline.wait(0.05):
            pass
        deadline.wait(1.0)  # the last trial window is decided
        os.kill(os.getpid(), signal.SIGTERM)

    code, _ = _session_run(source_id + "-2", sessions, *args, on_end=terminate)
    out = capsys.readouterr().out
    assert code == 128 + signal.SIGTERM, out
    second = next(p for p in sessions.iterdir() if p != first)
    assert {p: p.read_bytes() for p in first.rglob("*") if p.is_file()} == before
    assert (second / "versions" / "v0000.sblr.npz").is_file()
    summary = json.loads((second / "summary.json").read_text())
    assert summary["ended_by"] == "SIGTERM" and "session ended (SIGTERM received)" in out
    assert summary["versions"]["final_file"] == str(second / "versions" / "v0000.sblr.npz")


@pytest.mark.lsl
def test_run_renames_the_streams_labels_before_matching(model_path, source_id, tmp_path,
                                                        capsys):  # fmt: skip
    # The stream publishes C3, Cz, C4; renamed C3 <-> C4 (both labels there, none left twice:
    # MNE's rules), the model's C3 reads the stream's C4 and its C4 the stream's C3.
    code, _ = _session_run(source_id, tmp_path, "--model", str(model_path), "--hop", "0.2",
                           "--grace", "1", "--rename-channels", "C3=C4,C4=C3")  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "channels: 3 of 3 model channels found in 3: 1 exactly, 2 by rename_channels " \
        "(stream -> model: C4 -> C3, C3 -> C4)" in out  # fmt: skip

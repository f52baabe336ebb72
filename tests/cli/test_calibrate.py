"""``sblr-rt calibrate`` on a real recording: model, report, and clean errors."""

from __future__ import annotations

from sblr_rt.cli import main


def test_calibrate_writes_model_and_report(bcicomp2003_path, tmp_path):
    out = tmp_path / "m.sblr.npz"
    args = ["calibrate", "--recording", str(bcicomp2003_path), "--out", str(out)]
    code = main([*args, "--cv", "3", "--search", "none", "--n-jobs", "1", "--no-progress"])
    assert code == 0 and out.exists()
    assert (tmp_path / "m.report.txt").exists() and (tmp_path / "m.report.png").exists()


def test_calibrate_refuses_a_missing_recording(tmp_path, capsys):
    out = tmp_path / "m.sblr.npz"
    missing = tmp_path / "none.edf"
    assert main(["calibrate", "--recording", str(missing), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "sblr-rt calibrate: error:" in err and "none.edf" in err
    assert not out.exists()


def _bids_tree(root, physionet_dir):
    """Two PhysioNet runs in BIDS (EDF, cues in events.tsv only); run 1 marks Cz bad and
    types Fc5. as EOG in channels.tsv."""
    import mne
    from mne_bids import BIDSPath, write_raw_bids

    for run, name in ((1, "S001R06.edf"), (2, "S001R10.edf")):
        raw = mne.io.read_raw_edf(physionet_dir / name, preload=True, verbose="error")
        events, event_id = mne.events_from_annotations(raw, verbose="error")
        raw.set_annotations(None)
        if run == 1:
            raw.set_channel_types({"Fc5.": "eog"})
            raw.info["bads"] = ["Cz.."]
        path = BIDSPath(subject="01", task="motor", run=run, datatype="eeg", root=root)
        write_raw_bids(
            raw,
            path,
            events=events,
            event_id=event_id,
            format="EDF",
            allow_preload=True,
            verbose="error",
        )


def test_calibrate_on_bids_entities(physionet_dir, tmp_path, capsys):
    from sblr_rt.io.model_file import load_model

    root = tmp_path / "bids"
    _bids_tree(root, physionet_dir)
    out = tmp_path / "b.sblr.npz"
    args = ["calibrate", "--bids-root", str(root), "--subject", "01", "--task", "motor"]
    args += ["--run", "1", "--run", "2", "--classes", "T1=fists,T2=feet", "--tmin", "0.5"]
    args += ["--tmax", "3.5", "--features", "bandpower", "--search", "none", "--cv", "3"]
    code = main([*args, "--n-jobs", "1", "--no-progress", "--no-report", "--out", str(out)])
    assert code == 0 and out.exists()
    stdout = capsys.readouterr().out
    assert "BIDS: 2 recording(s): sub-01_task-motor_run-1_eeg.edf" in stdout
    model = load_model(out)
    names = list(model.preprocessor.ch_names)
    # bad in run 1 / typed EOG in run 1: out of both runs' data, so out of the model
    assert len(names) == 62 and "Cz" not in names and "FC5" not in names
    assert names[:2] == ["FC3", "FC1"]
    assert model.metadata["excluded_channels"] == {"FC5": "type eog", "Cz": "bad"}
    assert model.metadata["epochs"]["found"] == 30  # 15 T1/T2 cues per run from events.tsv
    assert [s.rsplit("/", 1)[-1] for s in model.metadata["sources"]] == [
        "sub-01_task-motor_run-1_eeg.edf",
        "sub-01_task-motor_run-2_eeg.edf",
    ]
    assert main(["inspect", str(out), "--channels"]) == 0
    assert "left out:     FC5 (type eog), Cz (bad)" in capsys.readouterr().out


def test_calibrate_bids_options_need_a_root(tmp_path, capsys):
    out = tmp_path / "m.sblr.npz"
    code = main(["calibrate", "--recording", "x.edf", "--subject", "01", "--out", str(out)])
    assert code == 1
    assert "--subject select BIDS recordings: give --bids-root too" in capsys.readouterr().err
    assert main(["calibrate", "--bids-root", str(tmp_path), "--out", str(out)]) == 1
    assert "--bids-root needs --subject" in capsys.readouterr().err


def test_calibrate_help_names_the_formats_and_the_bids_recipe(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "BrainVision .vhdr" in text and "EEGLAB .set" in text
    assert "--bids-root ROOT --subject 01 --task motor --run 1 --run 2" in text


def test_calibrate_runs_one_job_on_a_small_machine_unless_told(
    bcicomp2003_path, tmp_path, monkeypatch
):
    import sblr_rt.calibration as calibration
    from sblr_rt.calibration.parallel import one_off_n_jobs

    assert one_off_n_jobs(1) == one_off_n_jobs(2) == 1 and one_off_n_jobs(4) == -1
    seen = []

    def spy(recordings, *, config=None, progress=None, **overrides):
        seen.append(overrides.get("n_jobs"))
        raise ValueError("stop here")  # the CLI reports it; no calibration needed

    monkeypatch.setattr(calibration, "calibrate", spy)
    args = ["calibrate", "--recording", str(bcicomp2003_path), "--out", str(tmp_path / "m")]
    assert main([*args, "--no-progress"]) == 1
    assert main([*args, "--no-progress", "--n-jobs", "2"]) == 1
    config = tmp_path / "c.toml"
    config.write_text("n_jobs = 2\n")
    assert main([*args, "--no-progress", "--config", str(config)]) == 1
    # no option: the one-off rule; an option wins; a configuration file keeps its own
    assert seen == [one_off_n_jobs(), 2, None]


def test_an_ascii_terminal_and_a_non_ascii_path_do_not_fail_after_the_model(
    bcicomp2003_path, tmp_path
):
    # With PYTHONIOENCODING=ascii, printing "model written to .../é/..." raised once the
    # model was written, and the command exited 1: characters the terminal cannot show
    # are escaped instead.
    import os
    import subprocess
    import sys

    folder = tmp_path / "séance"
    folder.mkdir()
    out = folder / "m.sblr.npz"
    args = ["--recording", str(bcicomp2003_path), "--out", str(out), "--cv", "3",
            "--features", "waveform"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "sblr_rt.cli", "calibrate", *args, "--search", "none",
         "--n-jobs", "1", "--no-progress", "--no-report"],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert out.exists()
    assert b"model written to " in done.stdout and b"s\\xe9ance" in done.stdout


def test_a_cap_with_other_labels_is_calibrated_and_scored_with_rename_channels(
    physionet_dir, tmp_path, capsys, one_line_error
):
    import mne

    raw = mne.io.read_raw_edf(physionet_dir / "S001R06.edf", preload=True, verbose="error")
    mne.datasets.eegbci.standardize(raw)
    standard = list(raw.ch_names)
    raw.rename_channels({c: f"EEG {c.upper()}-REF" for c in standard})
    recording = tmp_path / "cap_raw.fif"
    raw.save(recording, verbose="error")
    mapping = tmp_path / "cap.txt"
    mapping.write_text("# our cap -> 10-10\n" + "".join(
        f"EEG {c.upper()}-REF = {c}\n" for c in standard))  # fmt: skip
    out = tmp_path / "m.sblr.npz"
    common = ["--recording", str(recording), "--out", str(out), "--classes", "T1,T2",
              "--tmin", "0.5", "--tmax", "3.5", "--features", "bandpower", "--cv", "3",
              "--search", "none", "--n-jobs", "1", "--no-progress", "--no-report"]  # fmt: skip
    code = main(["calibrate", *common, "--rename-channels", str(mapping)])
    assert code == 0, capsys.readouterr()
    from sblr_rt.io import load_model

    assert load_model(out).ch_names == standard
    capsys.readouterr()
    assert main(["evaluate", str(recording), "--model", str(out), "--rename-channels",
                 str(mapping)]) == 0  # fmt: skip
    assert "scores:" in capsys.readouterr().out
    # the model's labels are not the file's: refused, naming what to pass
    assert main(["-q", "evaluate", str(recording), "--model", str(out)]) == 1
    assert "--rename-channels 'EEG FC5-REF=FC5," in one_line_error(capsys.readouterr().err,
                                                                   "evaluate")  # fmt: skip


def test_a_bad_channel_renaming_is_refused_in_one_line(tmp_path, capsys, one_line_error):
    bad = ["--rename-channels", "EEG C3-REF"]
    for command, args in (
        ("calibrate", ["--recording", str(tmp_path), "--out", str(tmp_path / "m.sblr.npz")]),
        ("prior", ["--recording", "a.edf", "--recording", "b.edf", "--classes", "T1,T2",
                   "--out", str(tmp_path / "p.sblr.npz")]),
        ("evaluate", ["a.edf", "--model", "m.sblr.npz"]),
        ("run", ["--model", "m.sblr.npz"]),
    ):  # fmt: skip
        assert main([command, *args, *bad]) == 1, command
        line = one_line_error(capsys.readouterr().err, command)
        assert line.endswith("'--rename-channels' must be OLD=NEW pairs separated by commas (e.g."
                             " 'EEG C3-REF=C3,EEG C4-REF=C4'), a file of them (one or more a "
                             "line; # starts a comment), or a table of old -> new labels, got "
                             "'EEG C3-REF' (no '=' and no such file)"), line  # fmt: skip

"""Numbers from the command line: refused before any work when the machine cannot hold them."""

from __future__ import annotations

import pytest
from sblr_rt.cli import main


@pytest.mark.parametrize(
    ("argv", "limit"),
    [
        (["simulate", "--sfreq", "1e9"], "<= 100000 Hz"),
        (["simulate", "--sfreq", "nan"], "<= 100000 Hz"),
        (["simulate", "--sfreq", "0"], "> 0"),
        (["simulate", "--n-channels", "100000"], "<= 4096 channels"),
        (["simulate", "--n-channels", "0"], ">= 1"),
        (["simulate", "--duration", "inf"], "<= 1e+07 seconds"),
        (["simulate", "--chunk-ms", "1e9"], "<= 10000 ms"),
        (["replay", "x.fif", "--chunk-ms", "1e9"], "<= 10000 ms"),
        (["replay", "x.fif", "--chunk-ms", "-5"], "> 0"),
        (["replay", "x.fif", "--speed", "1e12"], "<= 1000 x"),
        (["streams", "--timeout", "nan"], "<= 1e+07 seconds"),
        (["demo", "--speed", "1e9"], "<= 1000 x"),
        (["demo", "--duration", "-3"], "> 0 seconds"),
        (["run", "--model", "m.npz", "--status-every", "nan"], "<= 1e+07 seconds"),
        (["run", "--model", "m.npz", "--hop", "-1"], ">= 0 seconds"),
        (["record", "--out", "x.fif", "--duration", "inf"], "<= 1e+07 seconds"),
        (["calibrate", "--out", "m.npz", "--recording", "x.fif", "--tmax", "1e9"], "<= 60 s"),
        (["calibrate", "--out", "m.npz", "--recording", "x.fif", "--tmin=-1e9"], ">= -60"),
        (["calibrate", "--out", "m.npz", "--stream", "S", "--n-trials", "-1"], ">= 1"),
        (["calibrate", "--out", "m.npz", "--stream", "S", "--n-trials", "100000000"], "<= 1e+07"),
    ],
)
def test_numbers_out_of_range_are_refused_naming_the_limit(capsys, one_line_error, argv, limit):
    assert main(argv) == 1
    line = one_line_error(capsys.readouterr().err, argv[0])
    option = argv[-1].split("=")[0] if "=" in argv[-1] else argv[-2]
    assert f"'{option}' must be" in line and limit in line


def test_simulated_values_per_second_are_bounded(capsys, one_line_error):
    assert main(["simulate", "--sfreq", "20000", "--n-channels", "4096"]) == 1
    line = one_line_error(capsys.readouterr().err, "simulate")
    assert "values per second" in line and "at most 1e+07" in line


def test_n_jobs_is_bounded_on_the_command_line(capsys, one_line_error):
    argv = ["calibrate", "--out", "m.npz", "--recording", "x.fif", "--n-jobs", "100000"]
    assert main(argv) == 1
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "'--n-jobs' must be an integer from 1 to" in line and "got 100000" in line


def test_a_configuration_file_gets_the_command_lines_error(tmp_path, capsys, one_line_error):
    # tmin = -1e5, tmax = 1e5 in TOML once ended in a MemoryError traceback.
    (tmp_path / "c.toml").write_text("tmin = -1e5\ntmax = 1e5\n")
    (tmp_path / "x.fif").write_bytes(b"")
    argv = ["calibrate", "--out", str(tmp_path / "m.npz"), "--recording", str(tmp_path / "x.fif")]
    assert main([*argv, "--config", str(tmp_path / "c.toml")]) == 1
    from_file = one_line_error(capsys.readouterr().err, "calibrate")
    assert main([*argv, "--tmin=-1e5"]) == 1
    from_option = one_line_error(capsys.readouterr().err, "calibrate")
    assert from_file.endswith(from_option.split("'--tmin' ")[1])
    assert from_file.endswith("'tmin' must be >= -60 seconds, got -100000.0")

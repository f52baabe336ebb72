"""--stream-type and --marker-type on the command line: parsed, passed on, refused cleanly."""

from __future__ import annotations

import pytest
from sblr_rt.cli import main


def test_calibrate_needs_one_source(tmp_path, capsys, one_line_error):
    out = str(tmp_path / "m.sblr.npz")
    assert main(["calibrate", "--out", out]) == 1
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "--stream NAME, --stream-type TYPE or --source-id ID" in line and "got none" in line
    rec = str(tmp_path / "x.edf")
    assert main(["calibrate", "--out", out, "--recording", rec, "--stream-type", "eeg"]) == 1
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "--stream-type selects a live stream: not with --recording" in line


@pytest.mark.lsl
def test_run_by_type_says_which_type_it_looked_for(model_path, capsys):
    # a type nobody publishes: the error names it as given (the match ignores case)
    code = main(["run", "--model", str(model_path), "--stream-type", "NoSuchType-9f3c",
                 "--timeout", "0.5", "--duration", "1"])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "stype='NoSuchType-9f3c'" in err.splitlines()[0]


@pytest.mark.parametrize("command", ["run", "record", "calibrate", "gui"])
def test_every_command_takes_the_type_options(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "--marker-type" in text
    assert "--stream-type" in text


def _subcommands():
    import argparse

    from sblr_rt.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices.items())


@pytest.mark.parametrize("command", [name for name, _ in _subcommands()])
def test_source_id_is_taken_wherever_stream_is(command):
    options = {o for a in dict(_subcommands())[command]._actions for o in a.option_strings}
    if "--stream" in options:
        assert "--source-id" in options, f"'{command}' takes --stream but not --source-id"


@pytest.mark.lsl
def test_calibrate_passes_source_id_to_the_recorder(tmp_path, capsys, one_line_error):
    out = str(tmp_path / "m.sblr.npz")
    code = main(["calibrate", "--out", out, "--source-id", "no-such-source-9f3c",
                 "--timeout", "0.5", "--duration", "1", "--no-progress"])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "source_id='no-such-source-9f3c'" in err.splitlines()[0] and "Traceback" not in err
    assert main(["calibrate", "--out", out, "--recording", "x.edf", "--source-id", "a"]) == 1
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "--source-id selects a live stream: not with --recording" in line

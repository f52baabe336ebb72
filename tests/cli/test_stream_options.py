"""--stream-type and --marker-type on the command line: parsed, passed on, refused cleanly."""

from __future__ import annotations

import pytest
from sblr_rt.cli import main


def test_calibrate_needs_one_source(tmp_path, capsys, one_line_error):
    out = str(tmp_path / "m.sblr.npz")
    assert main(["calibrate", "--out", out]) == 1
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "--stream NAME or --stream-type TYPE" in line and "got none" in line
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

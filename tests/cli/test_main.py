"""The ``sblr-rt`` entry point: sub-commands, logging options, help texts."""

from __future__ import annotations

import logging

import pytest
from sblr_rt.cli import COMMANDS, build_parser, main


def test_every_command_is_registered():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["-v", "inspect", "m"], logging.DEBUG),
        (["inspect", "m", "-v"], logging.DEBUG),
        (["inspect", "-q", "m"], logging.ERROR),
        (["-q", "inspect", "m", "-v"], logging.DEBUG),  # after the command wins
        (["-v", "inspect", "m", "-q"], logging.ERROR),
        (["inspect", "m"], logging.INFO),
    ],
)
def test_logging_options_before_or_after_the_command(argv, level):
    args = build_parser().parse_args(argv)
    assert (args.log_level, args.command) == (level, "inspect")


def test_log_file_receives_the_log(tmp_path):
    log = tmp_path / "run.log"
    assert main(["inspect", str(tmp_path / "absent.sblr.npz"), "--log-file", str(log)]) == 1
    logging.getLogger("sblr_rt").warning("a line for the file")
    logging.shutdown()
    assert "a line for the file" in log.read_text()


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_defaults_and_no_markup(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "`" not in text
    assert "--log-file" in text


def test_help_shows_a_default_of_zero(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "random seed (default: 0)" in text


def test_run_help_explains_mode_and_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sliding: decide on the latest window every hop" in text
    from sblr_rt.online import DEFAULT_OUTLET_NAME

    assert f"(default: {DEFAULT_OUTLET_NAME})" in text  # the help names the library's default


@pytest.mark.parametrize(
    ("argv", "dest", "old", "new"),
    [
        (["record", "--markers", "M"], "marker_stream", "--markers", "--marker-stream"),
        (
            ["record", "--markers-source-id", "M"],
            "marker_source_id",
            "--markers-source-id",
            "--marker-source-id",
        ),
        (["gui", "--markers", "M"], "marker_stream", "--markers", "--marker-stream"),
    ],
)
def test_old_marker_spellings_warn_and_name_the_new_one(argv, dest, old, new, capsys):
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == "M"
    assert f"{old} is renamed {new}" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "record", "calibrate", "gui", "streams"])
def test_marker_options_have_one_spelling(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "--markers " not in text and "--markers-source-id" not in text
    if command == "streams":
        return
    assert "--marker-stream NAME" in text and "--marker-source-id ID" in text
    required = {"run": ["--model", "m"], "calibrate": ["--out", "m", "--stream", "S"]}.get(
        command, []
    )
    args = build_parser().parse_args([command, *required, "--marker-stream", "M"])
    assert args.marker_stream == "M"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("folder", "'--log-file' must be a file, got the folder"),
        ("missing/x.log", "'--log-file' must be in an existing folder, got {path}"),
    ],
)
def test_a_log_file_that_cannot_be_opened_is_one_line(tmp_path, capsys, one_line_error,
                                                      where, message):  # fmt: skip
    path = tmp_path / where
    if where == "folder":
        path.mkdir()
    assert main(["inspect", "m.npz", "--log-file", str(path)]) == 1
    line = one_line_error(capsys.readouterr().err, "inspect")
    assert message.format(path=path) in line


def test_a_log_file_in_a_read_only_folder_is_one_line(tmp_path, capsys, one_line_error,
                                                      monkeypatch):  # fmt: skip
    # As root a read-only folder is still writable: the refusal is simulated.
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.log"))

    monkeypatch.setattr(logging.FileHandler, "_open", refuse)
    assert main(["--log-file", str(tmp_path / "x.log"), "inspect", "m.npz"]) == 1
    line = one_line_error(capsys.readouterr().err, "inspect")
    assert "'--log-file' cannot be opened for writing" in line
    assert "Permission denied" in line

"""The ``sblr-rt`` command line.

Each sub-command lives in its own module of this package, named after the command, and
exposes ``add_parser(subparsers)`` which registers its arguments and sets ``func`` (a
callable taking the parsed namespace and returning an exit code). Heavy imports (LSL, Qt,
calibration) happen inside ``func``, so ``sblr-rt --help`` stays fast. The ``sblr-rt``
script and ``python -m sblr_rt.cli`` run :func:`console`, which exits with the command's
code. The parser class the commands register on (defaults in ``--help``, the logging
options) is in :mod:`sblr_rt.cli._parser`: this module imports the commands, and they never
call back into it.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from pathlib import Path
from typing import NoReturn

from sblr_rt.cli._parser import SubcommandParser, add_logging_options

from sblr_rt import __version__

#: Sub-commands in the order ``--help`` lists them; each is ``sblr_rt.cli.<name>``.
COMMANDS = (
    "streams",
    "simulate",
    "replay",
    "record",
    "calibrate",
    "prior",
    "inspect",
    "evaluate",
    "run",
    "gui",
    "demo",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every available sub-command.

    Returns
    -------
    parser : argparse.ArgumentParser
        The top-level parser.
    """
    parser = argparse.ArgumentParser(
        prog="sblr-rt",
        description="Real-time BCI classification with sparse bilinear logistic regression.",
    )
    parser.add_argument("--version", action="version", version=f"sblr-rt {__version__}")
    add_logging_options(parser, default=None)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=SubcommandParser
    )
    for name in COMMANDS:
        module = importlib.import_module(f"sblr_rt.cli.{name}")
        module.add_parser(subparsers)
    return parser


def configure_logging(args: argparse.Namespace) -> None:
    """Set the ``sblr_rt`` log level and handlers from ``-v``, ``-q`` and ``--log-file``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Raises
    ------
    OSError
        If ``--log-file`` is a folder, is in a folder that does not exist, or cannot be
        opened for writing; the message names the option and the path.
    """
    level = args.log_level
    handlers = [logging.StreamHandler()]
    if args.log_file:
        handlers.append(_log_file_handler(args.log_file))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )


def _escape_unencodable_output() -> None:
    r"""Make the standard streams escape what their encoding cannot show, never raise.

    Under ``PYTHONIOENCODING=ascii`` or a C locale a non-ASCII path is printed escaped
    (``s\xe9ance``), as Python does on standard error, so that a command whose work is
    done does not fail on its last message.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or detached stream: left as it is
                pass


def _log_file_handler(path: str) -> logging.FileHandler:
    """Open ``--log-file`` for appending, or raise an OSError that names it in one line."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"'--log-file' must be a file, got the folder {path}")
    if not target.parent.is_dir():
        raise FileNotFoundError(
            f"'--log-file' must be in an existing folder, got {path} ({target.parent} does "
            "not exist)"
        )
    try:
        return logging.FileHandler(path, encoding="utf-8")
    except OSError as exc:
        raise OSError(
            f"'--log-file' cannot be opened for writing ({exc.strerror or exc}), got {path}"
        ) from exc


def _command_parser(parser: argparse.ArgumentParser, command: str):
    """Return the parser of sub-command ``command``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise ValueError(f"no sub-command {command!r}")  # pragma: no cover


def main(argv: list[str] | None = None) -> int:
    """Run the ``sblr-rt`` command line.

    Parameters
    ----------
    argv : list of str | None
        Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    code : int
        The process exit code.
    """
    from sblr_rt.lifetime import Terminated, sigterm_as_interrupt, watch_parent_from_env

    _escape_unencodable_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        configure_logging(args)
    except OSError as exc:  # --log-file: one line, before any work
        prog = f"sblr-rt {args.command}" if args.command else "sblr-rt"
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    if args.command is None:
        parser.print_help()
        return 2
    from sblr_rt.cli._numbers import check_bounds

    watch_parent_from_env()  # a source process started by ``sblr-rt demo``
    # SIGTERM stops a command as Ctrl-C does: its workers and streams are closed.
    previous = sigterm_as_interrupt()
    try:
        check_bounds(_command_parser(parser, args.command), args)
        return int(args.func(args) or 0)
    except Terminated:
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        return 130
    except (ValueError, TypeError, RuntimeError, OSError, TimeoutError) as exc:
        print(f"sblr-rt {args.command}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def console() -> NoReturn:
    """Run :func:`main` as the ``sblr-rt`` script does, and exit with its code."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    console()

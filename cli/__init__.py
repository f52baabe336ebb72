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
    "inspect",
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
    """
    level = args.log_level
    handlers = [logging.StreamHandler()]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file, encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )


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

    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args)
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

"""The ``sblr-rt`` command line.

Each sub-command lives in its own module of this package, named after the command, and
exposes ``add_parser(subparsers)`` which registers its arguments and sets ``func`` (a
callable taking the parsed namespace and returning an exit code). Heavy imports (LSL, Qt,
calibration) happen inside ``func``, so ``sblr-rt --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from sblr_rt import __version__

#: Sub-commands in the order ``--help`` lists them; each is ``sblr_rt.cli.<name>``.
COMMANDS = (
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
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"sblr_rt.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"sblr_rt.cli.{name}":
                raise
            continue
        module.add_parser(subparsers)
    return parser


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
    parser = build_parser()
    args = parser.parse_args(argv)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose + 1, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (ValueError, TypeError, RuntimeError, FileNotFoundError, TimeoutError) as exc:
        print(f"sblr-rt {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The options every LSL player command shares (``replay`` and ``simulate``): one place."""

from __future__ import annotations

import argparse

from sblr_rt.cli._numbers import bounded

__all__ = ["add_player_options", "check_player_options"]


def add_player_options(parser: argparse.ArgumentParser, *, end: str) -> None:
    """Add ``--chunk-ms``, ``--wait-for-consumers`` and ``--hold`` to a player command.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    end : str
        What ends the stream, for the help of ``--hold`` ("the last sample", ...).
    """
    parser.add_argument(
        "--chunk-ms", type=bounded("chunk_ms"), default=10.0, help="push period in ms"
    )
    parser.add_argument(
        "--wait-for-consumers",
        type=bounded("seconds", low_open=False),
        nargs="?",
        const=30.0,
        default=0.0,
        metavar="S",
        help="wait up to S seconds (30 if no value) for inlets before starting",
    )
    parser.add_argument(
        "--hold",
        type=bounded("seconds", low_open=False),
        default=0.0,
        metavar="S",
        help=f"after {end}, keep the streams open up to S seconds (until stopped), so that "
        "consumers can close their inlets first",
    )


def check_player_options(args: argparse.Namespace) -> None:
    """Refuse player options out of range, naming the option.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of a command that called :func:`add_player_options`.
    """
    if not args.chunk_ms > 0:
        raise ValueError(f"'--chunk-ms' must be > 0, got {args.chunk_ms}")
    if not args.hold >= 0:
        raise ValueError(f"'--hold' must be >= 0 seconds, got {args.hold}")
    if not args.wait_for_consumers >= 0:
        raise ValueError(
            f"'--wait-for-consumers' must be >= 0 seconds, got {args.wait_for_consumers}"
        )

"""The adaptation options of ``run`` and ``gui``, spelled one way for both."""

from __future__ import annotations

import argparse


def add_adapt_options(parser: argparse.ArgumentParser, *, folder: bool = True) -> None:
    """Add ``--adapt``, ``--adapt-every``, ``--adapt-dir`` and ``--calibration``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    folder : bool
        Add ``--adapt-dir`` (``run`` keeps its versions in its session folder instead).
    """
    adapt = parser.add_argument_group("adaptation (trial mode)")
    adapt.add_argument(
        "--adapt",
        action="store_true",
        help="every trial whose cue names a class joins the calibration set; a background "
        "process refits the model (warm, same path and penalties) and the loop switches to "
        "each new version between two decisions",
    )
    adapt.add_argument(
        "--adapt-every",
        type=int,
        default=10,
        metavar="N",
        help="re-select the feature path and penalties every N trials (0: never)",
    )
    if folder:
        adapt.add_argument(
            "--adapt-dir",
            default=None,
            help="folder of the model versions v0000.sblr.npz, ..., holding no other "
            "session's (default: versions/ in a new folder sessions/DATE_TIME)",
        )
    adapt.add_argument(
        "--calibration",
        nargs="+",
        default=None,
        metavar="FILE",
        help="calibration recordings kept in the calibration set (default: the model's "
        "own calibration files that still exist)",
    )


def check_adapt_options(args: argparse.Namespace) -> None:
    """Refuse a negative ``--adapt-every``.

    Raises
    ------
    ValueError
        If ``--adapt-every`` is negative.
    """
    if args.adapt_every < 0:
        raise ValueError(f"'--adapt-every' must be >= 0 trials, got {args.adapt_every}")

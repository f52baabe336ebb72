"""``sblr-rt streams``: list the LSL streams in sight."""

from __future__ import annotations

import argparse

from sblr_rt.cli._numbers import bounded

from sblr_rt.utils._docs import fill_doc


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``streams`` sub-command.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The top-level sub-parsers.

    Returns
    -------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    """
    parser = subparsers.add_parser(
        "streams",
        help="list the LSL streams in sight",
        description=(
            "List every LSL stream this machine can see, with name, type, channel count, "
            "nominal rate, source_id and channel unit, so that the --stream and --marker-stream "
            "options of the other commands can name one."
        ),
    )
    parser.add_argument("--type", dest="stype", default=None, help="only streams of this type")
    parser.add_argument(
        "--timeout", type=bounded("seconds"), default=1.0, help="seconds to listen for streams"
    )
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Print one line per stream.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 when at least one stream was found, 1 otherwise.
    """
    from sblr_rt.stream import resolve_streams, stream_channel_info

    found = resolve_streams(stype=args.stype, timeout=args.timeout)
    if not found:
        print("no LSL stream in sight" + (f" of type {args.stype!r}" if args.stype else ""))
        return 1
    header = f"{'name':24} {'type':10} {'channels':>8} {'rate':>9}  {'source_id':28} unit"
    print(header)
    for s in found:
        unit = ""
        if s.sfreq > 0 and s.source_id:
            try:
                info = stream_channel_info(source_id=s.source_id, name=s.name)
                units = {c["unit"] for c in info}
            except TimeoutError:
                units = {"?"}
            unit = ",".join(sorted(u for u in units if u)) or "(none)"
        rate = f"{s.sfreq:g} Hz" if s.sfreq > 0 else "irregular"
        print(f"{s.name:24} {s.stype:10} {s.n_channels:8d} {rate:>9}  {s.source_id:28} {unit}")
    return 0

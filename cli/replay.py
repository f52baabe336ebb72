"""``sblr-rt replay FILE``: play a recording as LSL EEG + marker streams."""

from __future__ import annotations

import argparse

from sblr_rt.cli._numbers import bounded
from sblr_rt.cli._player import add_player_options, check_player_options

from sblr_rt.utils._docs import fill_doc


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``replay`` sub-command.

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
        "replay",
        help="play a recording as LSL streams",
        description=(
            "Play a recording (any format MNE reads: FIF, EDF, BDF, GDF, BrainVision .vhdr, "
            "EEGLAB .set, ...; XDF; BCI-competition .mat; a file inside a BIDS tree, with its "
            "events.tsv) as an EEG stream NAME of its good EEG channels and a marker stream "
            "NAME-Markers, in real time or faster. Sample "
            "timestamps follow the LSL clock, spaced 1/(sfreq*speed); each marker carries "
            "the timestamp of its sample."
        ),
    )
    parser.add_argument("file", help="the recording")
    parser.add_argument(
        "--speed", type=bounded("speed"), default=1.0, help="playback speed factor"
    )
    parser.add_argument("--loop", action="store_true", help="start again after the end")
    parser.add_argument("--name", default=None, help="EEG stream name (default: file stem)")
    parser.add_argument("--source-id", default="sblr-replay", help="EEG stream source_id")
    parser.add_argument(
        "--duration",
        type=bounded("seconds"),
        default=None,
        help="stop after this many seconds of data",
    )
    parser.add_argument(
        "--dtype", choices=("float32", "float64"), default="float32", help="sample format"
    )
    add_player_options(parser, end="the last sample")
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Replay the file with the parsed arguments.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    from sblr_rt.io import read_recording
    from sblr_rt.playback.stream_player import hold_outlets, replay

    check_player_options(args)
    recording = read_recording(args.file)
    player = replay(
        recording,
        name=args.name,
        source_id=args.source_id,
        speed=args.speed,
        loop=args.loop,
        duration=args.duration,
        chunk_seconds=args.chunk_ms / 1000.0,
        dtype=args.dtype,
        wait_for_consumers=args.wait_for_consumers,
    )
    print(
        f"replaying {recording!r} as {player.name!r} (source_id {args.source_id!r}) and "
        f"{player.name + '-Markers'!r} at x{args.speed:g}" + (", looping" if args.loop else ""),
        flush=True,
    )
    try:
        n = player.run()
        print(f"pushed {n} samples and {player.n_markers} markers", flush=True)
        hold_outlets(args.hold)
    finally:
        player.stop()
    return 0

"""``sblr-rt simulate``: stream simulated 118-channel motor-imagery EEG and cues on LSL."""

from __future__ import annotations

import argparse

from sblr_rt.cli._numbers import bounded
from sblr_rt.cli._player import add_player_options, check_player_options

from sblr_rt.timing import DEFAULT_TIMING
from sblr_rt.utils._docs import fill_doc

#: Values the simulator computes per second at most (channels x rate).
MAX_VALUES_PER_SECOND = 1e7


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``simulate`` sub-command.

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
        "simulate",
        help="stream simulated EEG and cue markers on LSL",
        description=(
            "Stream a simulated EEG source (Berlin 118-channel cap by default) with a cue "
            "paradigm: an EEG stream NAME (type EEG, volts) and a marker stream "
            "NAME-Markers (type Markers, one class name per cue). Runs until --duration or "
            "Ctrl-C."
        ),
    )
    parser.add_argument("--name", default="SBLR-Sim", help="EEG stream name")
    parser.add_argument("--source-id", default="sblr-sim", help="EEG stream source_id")
    parser.add_argument(
        "--sfreq", type=bounded("sfreq"), default=1000.0, help="sampling rate in Hz"
    )
    parser.add_argument(
        "--n-channels",
        type=bounded("channels", integer=True, low_open=False),
        default=118,
        help="number of channels",
    )
    parser.add_argument(
        "--classes",
        nargs="+",
        default=["left", "right"],
        help="class names (2 or more), comma- or space-separated: left,right or left right",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--duration",
        type=bounded("seconds"),
        default=None,
        help="seconds to stream (default: forever)",
    )
    parser.add_argument(
        "--first-cue",
        type=bounded("seconds", low_open=False),
        default=2.0,
        help="time of the first cue (s)",
    )
    parser.add_argument(
        "--trial-duration",
        type=bounded("seconds"),
        default=DEFAULT_TIMING.task,
        help="the class's period after its cue (s; default: the cue paradigm's cue and imagery)",
    )
    parser.add_argument(
        "--iti",
        type=bounded("seconds", low_open=False),
        nargs=2,
        default=DEFAULT_TIMING.gap,
        metavar=("MIN", "MAX"),
        help="time from the end of a trial to the next cue, drawn uniformly (s; default: the "
        "cue paradigm's rest and fixation)",
    )
    add_player_options(parser, end="the end of --duration")
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Run the simulator with the parsed arguments.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    from sblr_rt.playback.simulator import run_simulator
    from sblr_rt.playback.stream_player import hold_outlets

    check_player_options(args)
    rate = args.sfreq * args.n_channels
    if rate > MAX_VALUES_PER_SECOND:
        raise ValueError(
            f"'--sfreq' x '--n-channels' is {rate:.4g} values per second; the simulator "
            f"computes at most {MAX_VALUES_PER_SECOND:.0e} in real time (e.g. 256 channels "
            "at 20 kHz, 4096 at 2 kHz)"
        )
    print(
        f"simulating {args.n_channels} channels at {args.sfreq:g} Hz on LSL stream "
        f"{args.name!r} (source_id {args.source_id!r}), cues on {args.name + '-Markers'!r}; "
        "Ctrl-C to stop",
        flush=True,
    )
    player = run_simulator(
        background=True,
        name=args.name,
        source_id=args.source_id,
        duration=args.duration,
        chunk_seconds=args.chunk_ms / 1000.0,
        wait_for_consumers=args.wait_for_consumers,
        sfreq=args.sfreq,
        n_channels=args.n_channels,
        classes=[c.strip() for v in args.classes for c in v.split(",") if c.strip()],
        seed=args.seed,
        first_cue=args.first_cue,
        trial_duration=args.trial_duration,
        iti=tuple(args.iti),
    )
    try:
        while not player.wait(0.5):
            pass
        print(f"streamed {player.n_pushed} samples", flush=True)
        hold_outlets(args.hold)
    finally:
        player.stop()
    return 0

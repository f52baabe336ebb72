"""``sblr-rt gui``: the Qt dashboard (Live, Model, Calibrate tabs and the cue window)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sblr_rt.cli._adapt import add_adapt_options, check_adapt_options
from sblr_rt.cli._markers import add_marker_options, add_stream_type_option
from sblr_rt.cli._numbers import bounded
from sblr_rt.cli._parser import add_outlet_option, add_rename_option, renaming_of

from sblr_rt.utils._docs import help_text


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``gui`` sub-command.

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
        "gui",
        help="open the dashboard: live traces and decisions, learned factors, calibration",
        description=(
            "Open one window with three tabs. Live: scrolling traces, the decision "
            "timeline and the loop's status (latency, gaps, dropped windows). Model: each "
            "rank component's spatial factor as a scalp map and a channel bar chart, its "
            "temporal factor, W = U V^T, the CV grid and the objective trace; for an "
            "ensemble, a table of its members where a click on a row draws that member. "
            "Calibrate: "
            "record a stream (the cue window publishes the markers) or pick files, "
            "calibrate with a progress bar, then classify live with the new model. "
            "With --adapt (and --model, --stream, --marker-stream) the model adapts during "
            "the session as 'sblr-rt run --adapt' does, and the Live tab shows the model "
            "version, the refits and their failures. With --screenshot, render every tab "
            "to PNG and exit."
        ),
    )
    parser.add_argument("--model", default=None, help="model file to show and classify with")
    parser.add_argument(
        "--stream", default=None, help="EEG stream name to connect to when LSL shows it"
    )
    parser.add_argument("--source-id", default=None, help=help_text("source_id"))
    add_stream_type_option(parser)
    add_marker_options(
        parser,
        stream_help="marker stream name: trial mode, a decision at each cue as well (with "
        "--stream)",
        old=("--markers",),
    )
    parser.add_argument(
        "--hop",
        type=bounded("seconds", low_open=False),
        default=0.05,
        help="seconds between sliding-window decisions",
    )
    parser.add_argument(
        "--screenshot",
        metavar="FILE.png",
        default=None,
        help="render each tab offscreen to FILE-live.png, FILE-model.png, "
        "FILE-calibrate.png and FILE-paradigm.png (and for an ensemble FILE-model-K.png "
        "per member K), then exit",
    )
    parser.add_argument(
        "--settle",
        type=bounded("seconds", low_open=False),
        default=4.0,
        help="with --screenshot and --stream: seconds of live data before the shot",
    )
    add_rename_option(
        parser, where="the stream's labels before they are matched to the model's (as run)"
    )
    add_outlet_option(parser)
    add_adapt_options(parser)
    parser.set_defaults(func=main)
    return parser


def main(args: argparse.Namespace) -> int:
    """Run the command.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    code : int
        Exit code.
    """
    import os

    if args.model is not None:
        from sblr_rt.priors import resolve_model_path

        args.model = str(resolve_model_path(args.model))
    if args.model is not None and not Path(args.model).is_file():
        raise FileNotFoundError(f"--model: no such file: {args.model}")
    if args.screenshot is not None:
        if not Path(args.screenshot).parent.resolve().is_dir():
            raise FileNotFoundError(
                f"--screenshot: the folder does not exist: {Path(args.screenshot).parent}"
            )
        # render without a display unless the user chose a platform
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif _no_display(os.environ):
        raise RuntimeError(
            "the dashboard needs a display, and none is set (no DISPLAY or WAYLAND_DISPLAY): "
            "run it on a desktop, over 'ssh -X', under xvfb-run, or write its tabs to PNG "
            "files with --screenshot out.png (no display needed)"
        )
    if (args.marker_stream or args.marker_type) and not (
        args.stream or args.stream_type or args.source_id
    ):
        raise ValueError(
            "--marker-stream needs --stream, --stream-type or --source-id (the EEG stream "
            "the cues belong to), and so does --marker-type"
        )
    if not args.hop > 0:
        raise ValueError(f"--hop must be > 0 seconds, got {args.hop}")
    rename = renaming_of(args)
    check_adapt_options(args)
    adapt = None
    if args.adapt:
        if args.model is None or not (args.marker_stream or args.marker_type):
            raise ValueError(
                "'--adapt' needs --model and --marker-stream (labelled trials come from the "
                "cues of the marker stream)"
            )
        adapt = {"folder": args.adapt_dir, "calibration": args.calibration}
        adapt["every"] = args.adapt_every

    from sblr_rt.gui.app import run

    from sblr_rt.online import DEFAULT_OUTLET_NAME

    return run(
        model=args.model,
        stream=args.stream,
        source_id=args.source_id,
        markers=args.marker_stream,
        markers_source_id=args.marker_source_id,
        stream_type=args.stream_type,
        marker_type=args.marker_type,
        screenshot=args.screenshot,
        hop=args.hop,
        settle=args.settle,
        adapt=adapt,
        rename_channels=rename,
        outlet_name=args.outlet_name or DEFAULT_OUTLET_NAME,
    )


def _no_display(environ) -> bool:
    """Return whether Qt would find no screen: no display and no headless platform chosen.

    On Linux without ``DISPLAY`` or ``WAYLAND_DISPLAY``, Qt's default platform aborts the
    process (exit 134, "could not connect to display") and suggests reinstalling; a user
    who chose a platform (``QT_QPA_PLATFORM=offscreen``, ``vnc``, ...) gets what they chose.
    """
    import sys

    if not sys.platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return False
    return not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))

"""``sblr-rt run``: classify an LSL EEG stream in real time and publish the decisions."""

from __future__ import annotations

import argparse
import math


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``run`` sub-command.

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
        "run",
        help="classify an EEG stream online and publish decisions on SBLR-Predictions",
        description=(
            "Connect to an LSL EEG stream, check its channels and rate against the model, "
            "and every HOP seconds classify the latest window; in trial mode also classify "
            "the window ending at each cue's tmax (cues from the marker stream). Decisions "
            'go to the LSL stream SBLR-Predictions (type Markers) as JSON {"label", '
            '"proba", "window_end", "trial", "cue"}. Runs until --duration or Ctrl-C.'
        ),
    )
    parser.add_argument("--model", required=True, help="model file (sblr-rt calibrate --out)")
    parser.add_argument(
        "--stream", default=None, help="EEG stream name (default: the only stream of type EEG)"
    )
    parser.add_argument("--source-id", default=None, help="EEG stream source_id")
    parser.add_argument(
        "--hop",
        type=float,
        default=0.05,
        help="seconds of stream time between sliding decisions (default 0.05; 0 in trial "
        "mode: trial decisions only)",
    )
    parser.add_argument(
        "--mode",
        choices=("sliding", "trial"),
        default="sliding",
        help="sliding: decide on the latest window every hop; trial: also decide once per "
        "cue on the window that ends at the cue's tmax (needs the marker stream)",
    )
    parser.add_argument(
        "--marker-stream",
        default=None,
        help="marker stream name in trial mode (default: STREAM-Markers when --stream is "
        "given, else the only stream of type Markers)",
    )
    parser.add_argument("--marker-source-id", default=None, help="marker stream source_id")
    parser.add_argument(
        "--cues",
        default=None,
        help="comma-separated marker values that start a trial (default: the model's classes)",
    )
    parser.add_argument("--outlet-name", default="SBLR-Predictions", help="prediction stream")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to find streams")
    parser.add_argument(
        "--duration", type=float, default=None, help="stop after this many seconds"
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="use the plain pipeline instead of the folded/projected fast path (checking)",
    )
    parser.add_argument(
        "--unit-mismatch",
        choices=("rescale", "refuse"),
        default="rescale",
        help="when the stream's declared unit (e.g. microvolts) differs from the unit the "
        "model was calibrated in (e.g. V): rescale the samples as they arrive (default) "
        "or refuse to start",
    )
    parser.add_argument(
        "--status-every", type=float, default=5.0, help="seconds between status lines (0: off)"
    )
    parser.set_defaults(func=run)
    return parser


def _status_line(snap) -> str:
    lat, step, dropped = snap.latency, snap.step_time, snap.dropped
    state = snap.stream.summary
    if snap.halted and not snap.stream.rate_far_off:
        state += f", HALTED: {snap.halted}"

    def ms(x):
        return "-" if x is None or not math.isfinite(x) else f"{1e3 * x:.2f}"

    return (
        f"[{state}] {snap.n_decisions} decisions ({snap.decisions_per_second:.1f}/s, "
        f"{snap.n_trial_decisions} trials); latency p50 {ms(lat.p50)} ms p99 "
        f"{ms(lat.p99)} ms; step p99 {ms(step.p99)} ms; dropped {dropped.total} (gap "
        f"{dropped.gap}, refilling {dropped.refilling}, nonfinite {dropped.nonfinite}, behind "
        f"{dropped.behind}, halted {dropped.halted}); gaps "
        f"{snap.n_gaps}"
    )


def run(args: argparse.Namespace) -> int:
    """Run the online loop with the parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    code : int
        0 on success.
    """
    import time
    from pathlib import Path

    from sblr_rt.io.model_file import load_model
    from sblr_rt.online import OnlineClassifier, OnlineLoop

    if not Path(args.model).exists():
        raise FileNotFoundError(f"'--model' file not found: {args.model}")
    if args.duration is not None and not args.duration > 0:
        raise ValueError(f"'--duration' must be > 0 seconds, got {args.duration}")
    model = load_model(args.model)
    marker_stream = args.marker_stream
    if args.mode == "trial" and marker_stream is None and args.stream is not None:
        marker_stream = f"{args.stream}-Markers"
    clf = OnlineClassifier(model, fast=not args.plain)
    loop = OnlineLoop.from_lsl(
        clf,
        stream=args.stream,
        source_id=args.source_id,
        mode=args.mode,
        hop=args.hop,
        marker_stream=marker_stream,
        marker_source_id=args.marker_source_id,
        cues=args.cues,
        outlet_name=args.outlet_name,
        timeout=args.timeout,
        unit_mismatch=args.unit_mismatch,
    )
    print(f"model: {clf!r}", flush=True)
    with loop:
        snap = loop.snapshot()
        stream = snap.stream
        print(
            f"classifying {stream.name!r} ({stream.n_channels} channels at "
            f"{stream.sfreq:g} Hz) with the {snap.path} path, {args.mode} mode, hop "
            f"{args.hop:g} s; decisions on {args.outlet_name!r}; Ctrl-C to stop",
            flush=True,
        )
        t_end = math.inf if args.duration is None else time.monotonic() + args.duration
        t_status = time.monotonic() + args.status_every
        while time.monotonic() < t_end:
            time.sleep(0.05)
            for d in loop.pop_decisions():
                if d["trial"]:
                    proba = ", ".join(f"{k}: {v:.2f}" for k, v in d["proba"].items())
                    print(f"trial cue {d['cue']!r} -> {d['label']!r} ({proba})", flush=True)
            if args.status_every > 0 and time.monotonic() >= t_status:
                t_status += args.status_every
                print(_status_line(loop.snapshot()), flush=True)
        print(_status_line(loop.snapshot()), flush=True)
    return 0

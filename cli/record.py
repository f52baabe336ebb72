"""``sblr-rt record``: record an LSL EEG stream and its markers to a FIF file."""

from __future__ import annotations

import argparse

from sblr_rt.cli._markers import add_marker_options, add_stream_type_option
from sblr_rt.cli._numbers import bounded

from sblr_rt.utils._docs import fill_doc, help_text


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``record`` sub-command.

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
        "record",
        help="record an LSL EEG stream and markers to FIF",
        description=(
            "Record an EEG stream and a marker stream with their LSL timestamps. Data go to "
            "a sidecar folder OUT.rec as they arrive (flushed every second, so a killed "
            "process loses at most the last second); on Ctrl-C, SIGTERM or --duration the "
            "recording is written as OUT (FIF, markers as annotations). Convert the sidecar "
            "of a killed recording with --recover OUT.rec."
        ),
    )
    parser.add_argument("--out", help="output .fif file")
    parser.add_argument("--stream", default=None, help=help_text("stream"))
    parser.add_argument("--source-id", default=None, help=help_text("source_id"))
    add_stream_type_option(parser)
    add_marker_options(
        parser,
        stream_help="marker stream name (default: STREAM-Markers, else the only Markers "
        "stream that is not a decision outlet of sblr-rt)",
        old=("--markers", "--markers-source-id"),
    )
    parser.add_argument("--no-markers", action="store_true", help="record EEG only")
    parser.add_argument(
        "--duration", type=bounded("seconds"), default=None, help="seconds to record"
    )
    parser.add_argument(
        "--timeout", type=bounded("seconds"), default=10.0, help=help_text("timeout")
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing OUT")
    parser.add_argument(
        "--recover",
        metavar="SIDECAR",
        default=None,
        help="convert SIDECAR (OUT.rec) to FIF, next to it unless --out says where",
    )
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Record (or recover) with the parsed arguments.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    import signal
    import time

    if args.recover is not None:
        out = _existing_out_as_value_error(_recover, args)
        print(f"wrote {out}", flush=True)
        return 0
    if args.out is None:
        raise ValueError("'--out' is required to record, got none")
    if args.duration is not None and not args.duration > 0:
        raise ValueError(f"'--duration' must be > 0 seconds, got {args.duration}")

    def _terminate(signum, frame):
        raise KeyboardInterrupt

    recorder = _existing_out_as_value_error(_recorder, args)
    if recorder.note:
        print(recorder.note, flush=True)
    recorder.start()
    previous = signal.signal(signal.SIGTERM, _terminate)
    print(f"recording to {recorder.sidecar} (Ctrl-C to stop)", flush=True)
    try:
        deadline = None if args.duration is None else time.monotonic() + args.duration
        while deadline is None or time.monotonic() < deadline:
            time.sleep(
                0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic()))
            )
            recorder.status()  # re-raises a failure of the writer
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        out = recorder.stop()
    print(f"wrote {out}: {recorder.n_samples} samples, {recorder.n_markers} markers", flush=True)
    return 0


def _existing_out_as_value_error(make, args):
    """Call ``make(args)``; an existing output becomes an error naming ``--overwrite``."""
    try:
        return make(args)
    except FileExistsError as exc:
        raise ValueError(
            f"'{exc.filename or args.out}' exists: pass --overwrite to replace it "
            "(or --out to write elsewhere)"
        ) from None


def _recover(args):
    from sblr_rt.recorder import recover

    return recover(args.recover, args.out, overwrite=args.overwrite)


def _recorder(args):
    from sblr_rt.recorder import Recorder

    return Recorder(
        args.out,
        name=args.stream,
        stype=args.stream_type,
        source_id=args.source_id,
        marker_name=args.marker_stream,
        marker_source_id=args.marker_source_id,
        marker_stype=args.marker_type,
        markers=not args.no_markers,
        timeout=args.timeout,
        overwrite=args.overwrite,
    )

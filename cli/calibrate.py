"""``sblr-rt calibrate``: labelled epochs -> selected, trained, saved model and report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sblr_rt.cli._markers import add_marker_options, add_stream_type_option, parse_classes
from sblr_rt.cli._numbers import bounded, n_jobs
from sblr_rt.cli._parser import add_rename_option, renaming_of

from sblr_rt.utils._docs import fill_doc, help_text


def _cv(value: str):
    if value.lower() == "loo":
        return "loo"
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--cv must be an integer >= 2 or 'loo', got {value!r}"
        ) from None
    if k < 2:
        raise argparse.ArgumentTypeError(f"--cv must be an integer >= 2 or 'loo', got {value!r}")
    return k


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``calibrate`` sub-command.

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
        "calibrate",
        help="calibrate a model from a stream or recordings",
        description=(
            "Cut labelled epochs around the cues of a live stream (recorded to disk while it "
            "runs) or of recordings (several files are concatenated runs), reject bad epochs, "
            "select rank and penalties by cross-validation as in the paper, train, and save "
            "the model file plus a report (text and PNG). Recordings: any format MNE reads "
            "(FIF, EDF, BDF, GDF, BrainVision .vhdr, EEGLAB .set, ...), XDF, "
            "BCI-competition .mat; only EEG channels not marked bad are used. A BIDS "
            "recording is named by its file (--recording ROOT/sub-01/eeg/sub-01_task-motor_"
            "run-1_eeg.edf) or by entities (--bids-root ROOT --subject 01 --task motor --run "
            "1 --run 2); either way its events.tsv gives the cues and its channels.tsv the "
            "channel types and bad channels."
        ),
    )
    # not required: --stream-type alone also names a live stream (checked in run)
    src = parser.add_mutually_exclusive_group()
    src.add_argument(
        "--stream", metavar="NAME", help="LSL EEG stream to record from (whatever its type)"
    )
    src.add_argument(
        "--recording",
        metavar="FILE",
        action="append",
        help="recording file (repeat for several runs); a file inside a BIDS tree is read "
        "with its events.tsv and channels.tsv",
    )
    src.add_argument(
        "--bids-root",
        metavar="ROOT",
        help="BIDS root (holds dataset_description.json): calibrate on the recordings that "
        "--subject, --task, --session and --run select",
    )
    parser.add_argument("--out", required=True, metavar="MODEL", help="model file to write")
    parser.add_argument("--config", metavar="FILE.toml", help="calibration configuration")
    add_rename_option(
        parser, where="every recording as it is read, before anything else (wins over "
        "rename_channels in --config); the model names the new labels"
    )  # fmt: skip
    parser.add_argument(
        "--classes",
        type=parse_classes,
        help="marker values that are classes, A,B,... or A=label,B=label (default: all)",
    )
    parser.add_argument(
        "--tmin",
        type=bounded("epoch", low_open=False),
        help="window start after the cue (s; default 0, or the trial's start for epoched files)",
    )
    parser.add_argument(
        "--tmax",
        type=bounded("epoch", low_open=False),
        help="window end after the cue (s; default 3.5, or the trial's end for epoched files)",
    )
    parser.add_argument(
        "--features",
        choices=("auto", "waveform", "bandpower", "spectral", "covariance"),
        help="feature path; auto (the default) cross-validates every path with every spatial "
        "stage on the calibration epochs and averages the four best",
    )
    parser.add_argument(
        "--spatial",
        choices=("none", "car", "csd"),
        help="spatial stage of a fixed feature path: none, common average reference, or "
        "surface Laplacian (auto chooses it)",
    )
    parser.add_argument(
        "--eog",
        metavar="CHANNELS",
        type=lambda text: [c.strip() for c in text.split(",") if c.strip()],
        help="comma-separated channels regressed out of the others and not read by the "
        "model (EOG channels, or Fp1,Fp2 as a proxy); the same regression runs online",
    )
    parser.add_argument("--cv", type=_cv, help="folds (K) or 'loo' (default 5)")
    parser.add_argument(
        "--search",
        choices=("fast", "paper", "none"),
        help="penalty grid: fast (6x6x5, default), paper (6x5x6x5), none",
    )
    parser.add_argument(
        "--n-jobs",
        type=n_jobs,
        help="parallel workers, 1 to 4 per CPU or -1 for all CPUs (default: the "
        "configuration file's n_jobs; without one, 1 on "
        "machines of 2 cores or fewer, where the workers' start-up outweighs the search, "
        "else all cores)",
    )
    parser.add_argument(
        "--report",
        metavar="PREFIX",
        help="report files PREFIX.txt and PREFIX.png (default: next to the model)",
    )
    parser.add_argument(
        "--prior",
        metavar="PRIOR",
        help="a prior across people (sblr-rt prior, or shipped:NAME): with few trials the "
        "prior refitted with this person's trials is the model; from the prior's "
        "auto_min_trials on the person's own model joins it, each weighed by its evidence on "
        "the trials it did not train on; the window is the prior's",
    )
    parser.add_argument(
        "--max-trials",
        type=bounded("count", integer=True),
        help="use only the first K class cues, in time order (the first recording first)",
    )
    parser.add_argument("--no-report", action="store_true", help="write no report")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    bids = parser.add_argument_group("BIDS (with --bids-root)")
    bids.add_argument("--subject", metavar="LABEL", help="subject label without sub- (required)")
    bids.add_argument("--task", metavar="LABEL", help="task label (default: any)")
    bids.add_argument("--session", metavar="LABEL", help="session label (default: any)")
    bids.add_argument(
        "--run",
        metavar="LABEL",
        action="append",
        help="run label, repeat for several runs (default: every run); 1 matches run-01",
    )
    bids.add_argument("--acquisition", metavar="LABEL", help="acquisition label (default: any)")
    bids.add_argument(
        "--datatype", choices=("eeg", "ieeg", "meg"), default="eeg", help="BIDS data type"
    )
    live = parser.add_argument_group("live stream")
    live.add_argument("--source-id", default=None, help=help_text("source_id"))
    add_stream_type_option(live)
    add_marker_options(
        live,
        stream_help="marker stream name (default: STREAM-Markers, else the only stream of "
        "type Markers (--marker-type) that is not a decision outlet of sblr-rt)",
    )
    live.add_argument(
        "--duration", type=bounded("seconds"), default=300.0, help="seconds to record"
    )
    live.add_argument(
        "--n-trials",
        type=bounded("count", integer=True, low_open=False),
        help="stop after this many class cues",
    )
    live.add_argument(
        "--record-to",
        metavar="FILE.fif",
        help="where to save the recording (default: <MODEL stem>_raw.fif next to MODEL)",
    )
    live.add_argument(
        "--timeout", type=bounded("seconds"), default=10.0, help=help_text("timeout")
    )
    parser.set_defaults(func=run)
    return parser


def _load_prior(args: argparse.Namespace, class_map: dict | None):
    """Return the ``--prior`` model, checked as a prior and against the other options."""
    from sblr_rt.calibration.prior import check_prior

    from sblr_rt.io.model_file import load_model
    from sblr_rt.priors import resolve_model_path

    prior = check_prior(
        load_model(resolve_model_path(args.prior)),
        source=f"'--prior' {args.prior}",
        class_map=class_map,
    )
    if args.tmin is not None or args.tmax is not None:
        raise ValueError(
            f"--prior fixes the window to the prior's [{prior.tmin:g}, {prior.tmax:g}) s: "
            f"drop --tmin/--tmax, got {args.tmin}, {args.tmax}"
        )
    return prior


def _report_prefix(out: Path) -> Path:
    name = out.name
    for suffix in (".npz", ".sblr"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return out.with_name(name + ".report")


_BIDS_ENTITIES = ("subject", "task", "session", "run", "acquisition")
#: Free space a model file needs at least (a 118-channel rank-3 model takes under 1 MiB).
MODEL_BYTES = 8 << 20


def _check_source_options(args: argparse.Namespace) -> None:
    """Require one source: a live stream (by name or type), recordings or a BIDS root."""
    live = bool(args.stream or args.stream_type or args.source_id)
    given = (("--recording", args.recording), ("--bids-root", args.bids_root))
    offline = [option for option, value in given if value]
    if not live and not offline:
        raise ValueError(
            "calibrate needs a source: --stream NAME, --stream-type TYPE or --source-id ID "
            "(live), --recording FILE or --bids-root ROOT; got none"
        )
    if live and offline:
        option = "--source-id" if args.source_id else "--stream-type"
        raise ValueError(f"{option} selects a live stream: not with {offline[0]}")


def _check_bids_options(args: argparse.Namespace) -> None:
    """Refuse BIDS entities without --bids-root, and --bids-root without --subject."""
    given = [f"--{e}" for e in _BIDS_ENTITIES if getattr(args, e, None)]
    if not args.bids_root and given:
        raise ValueError(f"{', '.join(given)} select BIDS recordings: give --bids-root too")
    if args.bids_root and not args.subject:
        raise ValueError("--bids-root needs --subject (the label without sub-), got none")


def _bids_recordings(args: argparse.Namespace) -> list[str]:
    """Return the files of the BIDS recordings the entity options select, and say which."""
    from sblr_rt.io.readers import find_bids

    paths = find_bids(
        args.bids_root,
        subject=args.subject,
        task=args.task,
        session=args.session,
        runs=args.run,
        acquisition=args.acquisition,
        datatype=args.datatype,
    )
    print(f"BIDS: {len(paths)} recording(s): {', '.join(p.fpath.name for p in paths)}")
    return [str(p.fpath) for p in paths]


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Run calibration with the parsed arguments.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.config import load_config
    from sblr_rt.calibration.parallel import one_off_n_jobs
    from sblr_rt.calibration.progress import TerminalProgress
    from sblr_rt.calibration.report import report_text, write_report

    from sblr_rt.bci_model.verdict import model_verdict, prior_info
    from sblr_rt.io.model_file import remove_stale_temporaries
    from sblr_rt.io.outputs import check_output, write_or_rescue

    out = Path(args.out)
    _check_source_options(args)
    _check_bids_options(args)
    if not out.parent.is_dir():
        raise FileNotFoundError(f"--out: folder {out.parent} does not exist")
    remove_stale_temporaries(out.parent)  # of a save killed before
    # Every output checked before the search (a directory, a folder that cannot be written,
    # a full disk); a write that still fails afterwards is rescued, not lost.
    check_output(out, what="'--out'", need_bytes=MODEL_BYTES)
    prefix = Path(args.report) if args.report else _report_prefix(out)
    if not args.no_report:
        check_output(prefix.with_name(prefix.name + ".txt"), what="'--report'")
    overrides = {
        "classes": args.classes,
        "tmin": args.tmin,
        "tmax": args.tmax,
        "features": args.features,
        "spatial": args.spatial,
        "eog": args.eog,
        "cv": args.cv,
        "search": args.search,
        "n_jobs": args.n_jobs,
        "rename_channels": renaming_of(args),
    }
    if args.n_jobs is None and args.config is None:
        overrides["n_jobs"] = one_off_n_jobs()
    progress = None if args.no_progress else TerminalProgress(sys.stderr)
    # Every argument, the prior included, is checked before a live session is recorded.
    config = load_config(args.config, **overrides)
    prior = None if not args.prior else _load_prior(args, config.class_map)
    if args.stream or args.stream_type or args.source_id:
        from sblr_rt.calibration.live_recording import record_session

        record_to = (
            Path(args.record_to)
            if args.record_to
            else _report_prefix(out).with_name(_report_prefix(out).stem + "_raw.fif")
        )
        check_output(record_to, what="'--record-to'")
        recordings = [
            record_session(
                args.stream,
                stype=args.stream_type,
                source_id=args.source_id,
                marker_stream=args.marker_stream,
                marker_source_id=args.marker_source_id,
                marker_stype=args.marker_type,
                duration=args.duration,
                n_trials=args.n_trials,
                classes=args.classes,
                path=record_to,
                timeout=args.timeout,
                progress=sys.stderr if not args.no_progress else None,
            )
        ]
    elif args.bids_root:
        recordings = _bids_recordings(args)
    else:
        for f in args.recording:
            if not Path(f).exists():
                raise FileNotFoundError(f"--recording: file not found: {f}")
        recordings = args.recording
    model = calibrate(
        recordings,
        config=args.config,
        progress=progress,
        prior=prior,
        max_trials=None if args.max_trials is None else int(args.max_trials),
        **overrides,
    )
    from sblr_rt.io.model_file import save_model

    written = write_or_rescue(lambda path: save_model(model, path), out, what="the model")
    if written != out:
        print(f"could not write {out}: the model is in {written} instead", file=sys.stderr)
    print(f"model written to {written}")
    if not args.no_report:
        paths = []
        write_or_rescue(lambda p: paths.extend(write_report(model, p)), prefix, what="the report")
        print(report_text(model))
        print(f"report written to {paths[-2]} and {paths[-1]}")
    else:
        print(model.summary())
    weighed = prior_info(model)
    if "weight" in weighed:  # how the prior and the person's own model were weighed, and why
        print(f"prior's weight {float(weighed['weight']):.2f}: {weighed.get('reason', '')}")
    # The word again, last, where the eye lands when the command ends.
    print(model_verdict(model).lines()[0] + " (details at the top of the report)")
    return 0

"""``sblr-rt run``: classify an LSL EEG stream in real time and publish the decisions."""

from __future__ import annotations

import argparse
import contextlib
import math

from sblr_rt.cli._adapt import add_adapt_options, check_adapt_options
from sblr_rt.cli._markers import add_marker_options, add_stream_type_option
from sblr_rt.cli._numbers import bounded
from sblr_rt.cli._parser import add_outlet_option, add_rename_option, renaming_of

from sblr_rt.timing import DEFAULT_TIMING
from sblr_rt.utils._docs import fill_doc, help_text

#: Values of ``--smoothing`` (those of :data:`sblr_rt.online.evidence.SMOOTHING`; not
#: imported, so that ``--help`` stays fast).
SMOOTHING = ("none", "ema", "mean")


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
            '"proba", "window_end", "trial", "cue", "proba_smoothed", "early", '
            '"model_version"}, and to SBLR-Predictions-Numeric as numbers (float32: one '
            "channel per class, then the smoothed probability per class, then trial and "
            "early flags and the model version; each sample stamped with its window's end), "
            "for OpenViBE, Timeflux, mne-lsl or a feedback program. "
            "Each run is a session with a folder of its own (SESSIONS/date_time: "
            "decisions.jsonl, summary.json, versions/ when adapting). It ends at --duration, "
            "on Ctrl-C or SIGTERM, or when the EEG stream has been gone for --grace seconds, "
            "and prints its summary: trials, accuracy against chance, confusion matrix, "
            "latency, model versions."
        ),
    )
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument(
        "--model",
        help="model file (sblr-rt calibrate --out, sblr-rt prior --out), or shipped:NAME for a "
        "prior shipped with sblr-rt (shipped:physionet-eegmmidb-left-right)",
    )
    start.add_argument(
        "--init",
        metavar="MODEL",
        default=None,
        help="start from any model file, e.g. a version of an earlier session "
        "(sessions/DATE_TIME/versions/v0023.sblr.npz), and adapt from there: --model MODEL "
        "--adapt; the version counter continues from the file's, in this session's folder",
    )
    parser.add_argument("--stream", default=None, help=help_text("stream"))
    parser.add_argument("--source-id", default=None, help=help_text("source_id"))
    add_stream_type_option(parser)
    parser.add_argument(
        "--hop",
        type=bounded("seconds", low_open=False),
        default=0.05,
        help="seconds of stream time between sliding decisions, in either mode (default "
        "0.05); in trial mode, 0 gives the trial decisions only",
    )
    parser.add_argument(
        "--mode",
        choices=("sliding", "trial"),
        default="sliding",
        help="sliding: decide on the latest window every hop; trial: also decide once per "
        "cue on the window that ends at the cue's tmax (needs the marker stream)",
    )
    add_marker_options(
        parser,
        stream_help="marker stream name in trial mode (default: STREAM-Markers, or "
        "mne-lsl's STREAM-annotations, when --stream is given and no --marker-type, else "
        "the only stream of type Markers (--marker-type) that is not a decision outlet of "
        "sblr-rt)",
    )
    parser.add_argument(
        "--cues",
        default=None,
        help="comma-separated marker values that start a trial (default: the model's classes)",
    )
    add_outlet_option(parser)
    parser.add_argument(
        "--timeout", type=bounded("seconds"), default=10.0, help=help_text("timeout")
    )
    parser.add_argument(
        "--duration", type=bounded("seconds"), default=None, help="end after this many seconds"
    )
    parser.add_argument(
        "--grace",
        type=bounded("seconds"),
        default=10.0,
        metavar="SECONDS",
        help="end the session when the EEG stream has been stalled or lost for this long "
        "(a replay that ended, an amplifier switched off)",
    )
    parser.add_argument(
        "--sessions",
        default="sessions",
        metavar="DIR",
        help="folder of the session folders: this session writes to a new DIR/DATE_TIME "
        "folder, never into an earlier session's",
    )
    parser.add_argument(
        "--no-recentre",
        action="store_true",
        help="keep the calibration reference instead of re-estimating this run's mean from "
        "its trials (unsupervised run centring; on by default for run-centred models)",
    )
    parser.add_argument(
        "--recentre-warmup",
        type=bounded("trials"),
        default=None,
        metavar="TRIALS",
        help="weight of the calibration reference in the run's running mean, in trials "
        "(default: the model's, 1)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="use the plain pipeline instead of the folded/projected fast form (checking)",
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
        "--trial-duration",
        type=bounded("seconds"),
        default=None,
        metavar="SECONDS",
        help="seconds of the class after each cue in this session (the paradigm's cue and "
        "imagery, or simulate's --trial-duration), checked against the model's window: a "
        "window that ends after it reads the rest (default: the default timing's "
        f"{DEFAULT_TIMING.task:g})",
    )
    parser.add_argument(
        "--status-every",
        type=bounded("seconds", low_open=False),
        default=5.0,
        help="seconds between status lines (0: off)",
    )
    evidence = parser.add_argument_group(
        "smoothed evidence and early decisions",
        "A single window's probability is noisy. The loop accumulates the evidence of the "
        "sliding decisions over a trial and publishes the smoothed probability beside the "
        "raw one (proba_smoothed; the feedback bar shows it). A cue restarts it. Defaults: "
        "the model's run configuration ([online] in the calibration TOML), else none.",
    )
    evidence.add_argument(
        "--smoothing",
        choices=SMOOTHING,
        default=None,
        help="none: each window on its own; ema: exponential moving average of the "
        "log-odds with time constant --tau; mean: mean log-odds since the cue",
    )
    evidence.add_argument(
        "--tau",
        type=bounded("seconds"),
        default=None,
        metavar="SECONDS",
        help="time constant of --smoothing ema, in seconds of stream time (default: the "
        "model's run configuration, else the model's window length, tmax - tmin)",
    )
    evidence.add_argument(
        "--early",
        type=_early,
        default=None,
        metavar="P",
        help="trial mode: publish a trial's decision as soon as the smoothed probability "
        "of one class reaches P (dynamic stopping; its label is that class, early: true), "
        "else at tmax as usual (early: false); needs --hop > 0; 'off': never early, even "
        "when the model's run configuration sets it",
    )
    evidence.add_argument(
        "--early-after",
        type=bounded("seconds", low_open=False),
        default=None,
        metavar="SECONDS",
        help="no early decision before this many seconds after the cue: the windows that "
        "end just after it hold mostly the EEG from before it (model's, else 0)",
    )
    add_rename_option(
        parser, where="the stream's labels before they are matched to the model's (a cap "
        "that publishes 'EEG C3-REF' for the model's C3)"
    )  # fmt: skip
    add_adapt_options(parser, folder=False)
    parser.set_defaults(func=run)
    return parser


def smoothing_of(args: argparse.Namespace, classifier):
    """Return the loop's smoothing: the model's run configuration, then the options.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``run`` arguments (``--smoothing``, ``--tau``, ``--early``,
        ``--early-after``; None where not given).
    classifier : OnlineClassifier
        Its ``run_info.smoothing`` holds the calibration's ``[online]`` fields.

    Returns
    -------
    smoothing : sblr_rt.online.evidence.Smoothing
    """
    return classifier.run_info.smoothing.override(
        method=args.smoothing, tau=args.tau, early=args.early, early_after=args.early_after
    )


def session_timing(args: argparse.Namespace, model) -> str | None:
    """Return the line saying how the model's window differs from the session's trials.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``run`` arguments (``--trial-duration``; None: the default timing's).
    model : BCIModel
        The model (``tmin``, ``tmax``).

    Returns
    -------
    line : str | None
        :func:`sblr_rt.timing.timing_mismatch`'s line, None when the window fits.
    """
    from sblr_rt.timing import timing_mismatch

    if args.trial_duration is None:
        task = DEFAULT_TIMING.task
        source = (
            f"the default timing, cue {DEFAULT_TIMING.cue:g} s + imagery "
            f"{DEFAULT_TIMING.imagery:g} s; --trial-duration sets this session's"
        )
    else:
        task, source = args.trial_duration, f"--trial-duration {args.trial_duration:g}"
    return timing_mismatch(model.tmin, model.tmax, task, source=source)


def _early(value: str):
    """Parse ``--early``: a probability, or ``off``."""
    if value.strip().lower() == "off":
        return "off"
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a probability in (0, 1) or 'off', got {value!r}"
        ) from None


def _status_line(snap) -> str:
    lat, step, dropped = snap.latency, snap.step_time, snap.dropped
    state = snap.stream.summary
    if snap.halted and not snap.stream.rate_far_off:
        state += f", HALTED: {snap.halted}"

    def ms(x):
        return "-" if x is None or not math.isfinite(x) else f"{1e3 * x:.2f}"

    refused = snap.refused_cues
    cues = (
        f"; cues refused {refused.total} (far {refused.far}, unavailable "
        f"{refused.unavailable}, expired {refused.expired})"
        if refused.total
        else ""
    )
    adaptation = ""
    if snap.adaptation is not None:
        a = snap.adaptation
        adaptation = f"; model v{a['version']} ({a['n_trials']} trials, refit {a['refit']}"
        if a.get("n_unlabelled"):
            adaptation += f", {a['n_unlabelled']} cue(s) naming no class left out"
        adaptation += f", {a['n_failures']} failed: {a['last_error']})" if a["n_failures"] else ")"
    if snap.prior_share is not None:
        adaptation += f"; {100 * snap.prior_share:.0f}% of the decision still the prior's"
    caveat = f" ({lat.caveat})" if lat.caveat else ""
    return (
        f"[{state}] {snap.n_decisions} decisions ({snap.decisions_per_second:.1f}/s, "
        f"{snap.n_trial_decisions} trials); latency p50 {ms(lat.p50)} ms p99 "
        f"{ms(lat.p99)} ms{caveat}; step p99 {ms(step.p99)} ms; dropped {dropped.total} (gap "
        f"{dropped.gap}, refilling {dropped.refilling}, nonfinite {dropped.nonfinite}, behind "
        f"{dropped.behind}, halted {dropped.halted}, flat {dropped.flat}, clipped "
        f"{dropped.clipped}, amplitude {dropped.amplitude}); gaps {snap.n_gaps}{cues}"
        f"{adaptation}{_centring(snap.run_centring)}"
    )


def _companion_marker_stream(stream: str, timeout: float) -> str:
    """Return ``STREAM-Markers``, or mne-lsl's ``STREAM-annotations`` when only that is there."""
    from sblr_rt.stream import companion_marker_stream, resolve_streams

    found = companion_marker_stream(stream, resolve_streams(timeout=min(timeout, 1.0)))
    return f"{stream}-Markers" if found is None else found.name  # else: wait for it


def _centring(status: dict | None) -> str:
    """Return the run centring's part of the status line (empty when off)."""
    if status is None:
        return ""
    n, warmup = status["n_trials"], status["warmup"]
    if n == 0:
        return "; run centring: no trial yet, at the calibration reference"
    return f"; run centring: this run's mean from {n} trial(s) (reference weight {warmup:g})"


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Run the online loop with the parsed arguments, as one session with its own folder.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 when the session ended at ``--duration`` or when its stream was gone; a
        KeyboardInterrupt (SIGINT, or SIGTERM as :class:`~sblr_rt.lifetime.Terminated`) is
        raised again once the summary is written.
    """
    from pathlib import Path

    from sblr_rt.io.model_file import load_model
    from sblr_rt.online import DEFAULT_OUTLET_NAME, OnlineClassifier, OnlineLoop

    args.outlet_name = args.outlet_name or DEFAULT_OUTLET_NAME
    adapting = args.adapt or args.init is not None
    from sblr_rt.priors import PREFIX, resolve_model_path

    rename = renaming_of(args)

    model_file = args.model if args.init is None else args.init
    option = "--model" if args.init is None else "--init"
    if str(model_file).startswith(PREFIX):
        model_file = resolve_model_path(model_file)
    if not Path(model_file).exists():
        raise FileNotFoundError(f"'{option}' file not found: {model_file}")
    if adapting and args.mode != "trial":
        raise ValueError("'--adapt' needs '--mode trial' (labelled trials come from the cues)")
    check_adapt_options(args)
    if args.duration is not None and not args.duration > 0:
        raise ValueError(f"'--duration' must be > 0 seconds, got {args.duration}")
    if Path(args.sessions).exists() and not Path(args.sessions).is_dir():
        raise NotADirectoryError(f"'--sessions' must be a folder, got the file {args.sessions}")
    model = load_model(model_file)
    if adapting and model.prior_member is not None:  # a refit re-reads its settings
        from sblr_rt.calibration.prior import check_prior

        check_prior(model, source=f"'{option}' {model_file}")
    line = session_timing(args, model)
    if line is not None:
        print(f"WARNING: {line}", flush=True)
    marker_stream = args.marker_stream
    if (
        args.mode == "trial"
        and marker_stream is None
        and args.marker_source_id is None
        and args.marker_type is None
        and args.stream is not None
    ):
        marker_stream = _companion_marker_stream(args.stream, args.timeout)
    clf = OnlineClassifier(
        model,
        fast=not args.plain,
        recentre=not args.no_recentre,
        recentre_warmup=args.recentre_warmup,
    )
    smoothing = smoothing_of(args, clf)
    loop = OnlineLoop.from_lsl(
        clf,
        stream=args.stream,
        stype=args.stream_type,
        source_id=args.source_id,
        mode=args.mode,
        hop=args.hop,
        marker_stream=marker_stream,
        marker_stype=args.marker_type,
        marker_source_id=args.marker_source_id,
        cues=args.cues,
        outlet_name=args.outlet_name,
        timeout=args.timeout,
        unit_mismatch=args.unit_mismatch,
        smoothing=smoothing,
        keep_trials=adapting,
        rename_channels=rename,
    )
    print(f"model: {clf!r}", flush=True)
    with loop:
        return _session(args, loop, clf, model, model_file, adapting, smoothing)


def _session(args, loop, clf, model, model_file, adapting, smoothing) -> int:
    """Run a started loop as a session: its folder, its decisions, its end, its summary."""
    import datetime
    import time

    from sblr_rt.lifetime import Terminated
    from sblr_rt.online import freeze_heap
    from sblr_rt.online.cues import cue_classes
    from sblr_rt.online.session import SUMMARY_FILE, SessionLog, new_session_folder

    started = datetime.datetime.now()
    t0 = time.monotonic()
    folder = new_session_folder(args.sessions, now=started)
    print(f"session folder: {folder}", flush=True)
    log = SessionLog(folder, clf.classes, cue_classes(None, clf))
    share_start = loop.snapshot().prior_share
    ended_by, reason, raised = "error", "error", None
    adapter, end_snap = None, None
    try:
        with _adapter(args, loop, model, model_file, adapting, folder) as adapter:
            freeze_heap()  # no full garbage-collection pass over the startup objects mid-session
            snap = loop.snapshot()
            stream = snap.stream
            print(
                f"classifying {stream.name!r} ({stream.n_channels} channels at "
                f"{stream.sfreq:g} Hz) with the {snap.form} incremental form, {args.mode} mode, "
                f"hop {args.hop:g} s, {smoothing.describe()}; decisions on "
                f"{args.outlet_name!r} (JSON) and {args.outlet_name + '-Numeric'!r} (numbers); "
                f"ends after {args.grace:g} s without the stream, Ctrl-C to stop",
                flush=True,
            )
            print(f"channels: {snap.channels.summary}", flush=True)
            ended_by, reason = _follow(args, loop, log, adapter is not None)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM (Terminated): sum up, then end
        raised = exc
        ended_by = "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"
        reason = f"{ended_by} received"
    except Exception as exc:  # the loop or the adaptation failed: still sum up
        raised, reason = exc, f"error: {type(exc).__name__}: {exc}"
    try:
        _print_trials(loop, log, adapter is not None)  # the last ones
        end_snap = loop.snapshot()
    except Exception as exc:  # a failed worker says so once; it was raised above or now
        raised = raised or exc
    finally:
        log.close()
    summary = _summary(
        args, log, folder, started, time.monotonic() - t0, ended_by, reason, model_file,
        adapter, model, share_start, end_snap,
    )  # fmt: skip
    summary.write(folder / SUMMARY_FILE)
    for line in summary.lines():
        print(line, flush=True)
    if raised is not None:
        raise raised
    return 0


def _follow(args, loop, log, adapting) -> tuple[str, str]:
    """Print the trials and status lines until the session ends; return how it ended."""
    import time

    from sblr_rt.online.session import StreamGone

    gone = StreamGone(args.grace)
    start = time.monotonic()
    t_end = math.inf if args.duration is None else start + args.duration
    t_status = start + args.status_every
    t_state = start
    while True:
        time.sleep(0.05)
        _print_trials(loop, log, adapting)
        now = time.monotonic()
        if now >= t_end:
            print(_status_line(loop.snapshot()), flush=True)
            return "duration", f"--duration {args.duration:g} s reached"
        if now >= t_state:  # the stream's state, a few times a second
            t_state = now + 0.25
            snap = loop.snapshot()
            if gone.update(snap.stream.state, now):
                print(_status_line(snap), flush=True)
                return "stream gone", (
                    f"the EEG stream was {snap.stream.state} for more than {args.grace:g} s"
                )
        if args.status_every > 0 and now >= t_status:
            t_status += args.status_every
            print(_status_line(loop.snapshot()), flush=True)


def _print_trials(loop, log, adapting) -> None:
    """Log the new decisions and print a line per trial decision."""
    for d in loop.pop_decisions():
        outcome = log.add(d)
        if outcome is not None:
            print(trial_line(outcome, d, version=d.model_version if adapting else None),
                  flush=True)  # fmt: skip
    log.flush()


def trial_line(outcome, decision, *, version: int | None = None) -> str:
    """Return the line of a trial decision: its cue and class, the decision, right or wrong.

    Parameters
    ----------
    outcome : sblr_rt.online.session.TrialOutcome
        The trial scored (:meth:`SessionLog.add <sblr_rt.online.session.SessionLog.add>`).
    decision : Decision
        The trial decision (its probabilities).
    version : int | None
        The model version that decided, shown when not None.

    Returns
    -------
    line : str
        ``trial 3: cue 'T1' (left) -> left, correct; 2/3 correct (67%); p left 0.81, right
        0.19; smoothed ...; at tmax``.
    """
    cue = "no cue" if outcome.cue is None else f"cue {outcome.cue!r}"
    true = "names no class" if outcome.true is None else outcome.true
    decided = "no decision" if outcome.label is None else outcome.label
    line = f"trial {outcome.index}: {cue} ({true}) -> {decided}"
    if outcome.correct is not None:
        line += ", correct" if outcome.correct else ", wrong"
    if outcome.n_scored:
        line += (
            f"; {outcome.n_correct}/{outcome.n_scored} correct "
            f"({100 * outcome.n_correct / outcome.n_scored:.0f}%)"
        )
    proba = ", ".join(f"{k} {v:.2f}" for k, v in decision.proba.items())
    line += f"; p {proba}"
    if decision.proba_smoothed:
        smooth = ", ".join(f"{k} {v:.2f}" for k, v in decision.proba_smoothed.items())
        line += f"; smoothed {smooth}"
    line += "; early" if decision.early else "; at tmax"
    if version is not None:
        line += f" [model v{version}]"
    return line


def _summary(args, log, folder, started, seconds, ended_by, reason, model_file, adapter,
             model, share_start, snap):  # fmt: skip
    """Return the :class:`~sblr_rt.online.session.SessionSummary` of a session that ended."""
    import datetime

    from sblr_rt.online.session import DECISIONS_FILE, SUMMARY_FILE, SessionSummary

    versions = None
    paths = {"folder": str(folder), "decisions": str(folder / DECISIONS_FILE)}
    final_model = model
    if adapter is not None:
        from sblr_rt.calibration.refit import version_path

        status = adapter.status()
        final_model = adapter.model
        versions = {
            "start": adapter.start_version,
            "final": adapter.version,
            "n_refits": status["n_refits"],
            "n_failures": status["n_failures"],
            "final_file": str(version_path(adapter.folder, adapter.version)),
        }
        paths["versions"] = str(adapter.folder)
    paths["summary"] = str(folder / SUMMARY_FILE)
    prior = None
    if share_start is not None:
        from sblr_rt.bci_model.verdict import prior_info

        info = prior_info(final_model)
        prior = {
            "share_start": share_start,
            "share_end": None if snap is None else snap.prior_share,
            "weight": info.get("weight"),
            "reason": info.get("reason"),
        }
    return SessionSummary.of(
        log,
        folder=str(folder),
        started=started.isoformat(timespec="seconds"),
        ended=datetime.datetime.now().isoformat(timespec="seconds"),
        seconds=float(seconds),
        ended_by=ended_by,
        reason=reason,
        model=str(model_file),
        mode=args.mode,
        versions=versions,
        prior=prior,
        paths=paths,
    )


def _adapter(args, loop, model, model_file, adapting, folder):
    """Return the :class:`~sblr_rt.calibration.adapt.Adapter` of ``--adapt`` (or a no-op).

    Its versions go to ``folder / "versions"``, the session's own.
    """
    if not adapting:
        return contextlib.nullcontext()
    from sblr_rt.calibration.adapt import Adapter

    adapter = Adapter.for_model_file(
        loop,
        model,
        model_file,
        folder=folder / "versions",
        calibration=args.calibration,
        every=args.adapt_every,
    )
    print(
        f"adapting: {len(adapter.calibration)} calibration file(s) kept, re-selection every "
        f"{args.adapt_every} trials, versions in {adapter.folder} from v{adapter.version} "
        f"({model_file})",
        flush=True,
    )
    return adapter

"""``sblr-rt demo``: the whole product on real data, with no hardware and no arguments.

1. Calibrate on the first runs of a shipped recording (markers from the file), printing the
   search's progress, the selected hyper-parameters and the cross-validated accuracy.
2. Replay the remaining run as LSL streams from a separate process (accelerated), run the
   online loop on it in trial mode through LSL, and print every trial decision, the running
   accuracy and the latency.
3. Open the dashboard when a display is present; otherwise write its screenshots, the
   calibration report and a summary to a folder, and name it.

``--simulated`` does the same on the simulated 118-channel source: calibration on a
recording of the simulator (the same deterministic generator the LSL source runs), then the
online loop on the live simulator process.

``--prior`` needs no calibration at all: a session starts from the shipped prior across
people (:mod:`sblr_rt.priors`, built without S001) on S001 run 4 (imagined left vs right
fist), decides from the first trial, and refines the model with each labelled trial
(``--adapt``), printing how much of each decision is still the prior's.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
from sblr_rt.cli._numbers import bounded

from sblr_rt.lifetime import PARENT_ENV

#: The shipped PhysioNet runs: 5 and 9 executed, 6 and 10 imagined, both fists vs both feet.
PHYSIONET_CALIBRATION = ("S001R05.edf", "S001R06.edf", "S001R09.edf")
PHYSIONET_ONLINE = "S001R10.edf"
PHYSIONET_CLASSES = {"T1": "fists", "T2": "feet"}
#: The run ``--prior`` replays: imagined left (T1) vs right (T2) fist.
PHYSIONET_PRIOR_RUN = "S001R04.edf"
PRIOR_CLASSES = {"T1": "left", "T2": "right"}
#: The shipped prior ``--prior`` starts from.
PRIOR_NAME = "physionet-eegmmidb-left-right"
#: Seconds the ``--prior`` demo waits at its end for the refit over its last trials.
FINISH_SECONDS = 120.0


def _physionet_folder() -> Path:
    """Return a folder holding the demo's PhysioNet runs of S001.

    The shipped ``recordings/`` folder of a source checkout (or ``SBLR_RT_RECORDINGS``);
    without it (an installed wheel has none) the same runs are fetched from PhysioNet by
    :func:`mne.datasets.eegbci.load_data`, which checks their SHA-256 against MNE's list.
    """
    env = os.environ.get("SBLR_RT_RECORDINGS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1] / "recordings")
    candidates.append(Path.cwd() / "recordings")
    names = (*PHYSIONET_CALIBRATION, PHYSIONET_ONLINE, PHYSIONET_PRIOR_RUN)
    for path in candidates:
        folder = path / "physionet-eegmmidb-S001"
        if all((folder / name).is_file() for name in names):
            return folder
    import mne

    _say(
        "The sample recordings are not here (looked in "
        + ", ".join(str(p) for p in candidates)
        + "); fetching PhysioNet eegmmidb S001 runs 4, 5, 6, 9 and 10 with "
        "mne.datasets.eegbci (about 10 MB, checked against MNE's SHA-256 list)."
    )
    runs = sorted(int(name[5:7]) for name in names)
    try:
        files = mne.datasets.eegbci.load_data(1, runs, update_path=False)
    except Exception as exc:  # network, disk: say what to do instead
        raise FileNotFoundError(
            f"the demo needs PhysioNet eegmmidb S001 runs {runs}: fetching them failed "
            f"({exc}); set SBLR_RT_RECORDINGS to a folder holding physionet-eegmmidb-S001/"
        ) from exc
    return Path(files[0]).parent


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``sblr-rt demo``."""
    parser = subparsers.add_parser(
        "demo",
        help="calibrate and classify a real recording end to end (no hardware needed)",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--simulated", action="store_true", help="use the simulated 118-channel source"
    )
    parser.add_argument(
        "--prior",
        action="store_true",
        help="no calibration: start from the shipped prior across people on S001 run 4 "
        "(left vs right fist) and adapt with each labelled trial",
    )
    parser.add_argument(
        "--speed",
        type=bounded("speed"),
        default=None,
        help="replay speed factor (default 10; 3 with --prior, so that the refits after each "
        "trial keep up with the trials)",
    )
    parser.add_argument(
        "--features",
        choices=("auto", "waveform", "bandpower", "spectral", "covariance"),
        default="auto",
        help="feature path (default auto: every path and spatial stage cross-validated on "
        "the calibration runs, the best kept)",
    )
    parser.add_argument(
        "--search",
        choices=("fast", "paper"),
        default="fast",
        help="hyper-parameter search: the fast default or the paper's full grid",
    )
    parser.add_argument("--cv", default="5", help="folds, or 'loo'")
    parser.add_argument(
        "--out", default="demo-output", help="folder for the model, report and screenshots"
    )
    parser.add_argument(
        "--no-gui", action="store_true", help="never open a window; write screenshots instead"
    )
    parser.add_argument(
        "--duration",
        type=bounded("seconds"),
        default=None,
        help="seconds of the online run to stream (default: all of it)",
    )
    parser.set_defaults(func=run)
    return parser


def _say(text: str = "") -> None:
    print(text, flush=True)


def _calibrate_physionet(args, out: Path):
    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.progress import TerminalProgress

    folder = _physionet_folder()
    files = [folder / f for f in PHYSIONET_CALIBRATION]
    _say(
        "[1/3] Calibration on PhysioNet eegmmidb S001 runs 5, 6, 9 "
        "(executed and imagined: both fists vs both feet), markers from the EDF annotations"
    )
    model = calibrate(
        files,
        classes=PHYSIONET_CLASSES,
        features=args.features,
        search=args.search,
        cv=args.cv,
        progress=TerminalProgress(sys.stderr),
    )
    return model, folder / PHYSIONET_ONLINE


def _calibrate_simulated(args, out: Path):
    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.progress import TerminalProgress

    from sblr_rt.io.reading import Recording
    from sblr_rt.playback.simulator import Simulator, simulator_channels

    sfreq, seconds = 1000.0, 240.0
    _say(
        f"[1/3] Calibration on {seconds:.0f} s of the simulated 118-channel source at "
        f"{sfreq:.0f} Hz (seed 0, classes left/right), the generator the LSL simulator runs"
    )
    sim = Simulator(sfreq=sfreq, n_channels=118, classes=["left", "right"], seed=0)
    data, markers = sim.read(int(seconds * sfreq))
    recording = Recording(
        data=np.ascontiguousarray(data.T, dtype=np.float64),
        sfreq=sfreq,
        ch_names=simulator_channels(118),
        marker_times=np.array([m[0] / sfreq for m in markers]),
        marker_values=[m[1] for m in markers],
        source="simulator seed 0",
    )
    model = calibrate(
        recording,
        classes=["left", "right"],
        features=args.features,
        search=args.search,
        cv=args.cv,
        progress=TerminalProgress(sys.stderr),
    )
    return model, None


def _print_selection(model) -> None:
    from sblr_rt.calibration.outcome import CalibrationOutcome

    for line in CalibrationOutcome.from_model(model).lines():
        _say(f"      {line}")


def _start_source(args, recording_path, tag: str, *, speed: float | None = None):
    """Start the replay (or simulator) in its own process; return (proc, ended, name, id).

    ``speed``: the replay's (default ``args.speed``).
    """
    name = f"SBLR-Demo-{tag}"
    source_id = f"sblr-demo-{tag}"
    cmd = [sys.executable, "-m", "sblr_rt.cli"]
    if recording_path is not None:
        cmd += [
            "replay",
            str(recording_path),
            "--speed",
            str(args.speed if speed is None else speed),
            "--name",
            name,
            "--source-id",
            source_id,
            "--wait-for-consumers",
            "30",
            "--hold",
            "30",
        ]
        if args.duration is not None:
            cmd += ["--duration", str(args.duration)]
    else:
        duration = args.duration if args.duration is not None else 60.0
        cmd += [
            "simulate",
            "--name",
            name,
            "--source-id",
            source_id,
            "--seed",
            "1",
            "--duration",
            str(duration),
            "--wait-for-consumers",
            "30",
            "--hold",
            "30",
        ]
    # The source ends with the demo, even a killed one (sblr_rt.lifetime).
    env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, env=env
    )
    ended = threading.Event()

    def forward():
        # The source says when its data ended and then holds its streams open, so that
        # the demo closes its inlets first: a clean end instead of a "lost stream".
        for line in proc.stdout:
            print(f"      source: {line.rstrip()}", flush=True)
            if line.startswith(("pushed ", "streamed ")):
                ended.set()
        ended.set()

    threading.Thread(target=forward, name="demo-source-stdout", daemon=True).start()
    return proc, ended, name, source_id


def _online(args, model, recording_path, *, prior_file=None) -> dict:
    import contextlib

    from sblr_rt.calibration.adapt import Adapter

    from sblr_rt.online import OnlineLoop

    tag = uuid.uuid4().hex[:8]
    if prior_file is not None:
        what = (
            f"PhysioNet S001 run 4 (imagined left vs right fist), replayed at x{args.speed:g}, "
            "from the shipped prior, adapting with each labelled trial"
        )
    elif recording_path is not None:
        what = f"PhysioNet S001 run 10 (imagined fists vs feet), replayed at x{args.speed:g}"
    else:
        what = "the simulated source (live process)"
    _say(f"[2/3] Online classification through LSL of {what}")
    proc, ended, name, source_id = _start_source(args, recording_path, tag)
    results = {"correct": 0, "total": 0, "decisions": []}
    if prior_file is not None:
        class_map = PRIOR_CLASSES
    else:
        class_map = PHYSIONET_CLASSES if recording_path is not None else {}
    loop = OnlineLoop.from_lsl(
        model,
        stream=name,
        source_id=source_id,
        mode="trial",
        hop=0.25,
        marker_source_id=f"{source_id}-markers",
        cues=list(class_map) or None,
        outlet_name=f"SBLR-Predictions-{tag}",
        timeout=30.0,
        keep_trials=prior_file is not None,
    )
    adapter = contextlib.nullcontext()
    if prior_file is not None:
        from sblr_rt.online.session import new_session_folder

        session = new_session_folder(Path(args.out).resolve() / "sessions")
        adapter = Adapter.for_model_file(
            loop, model, prior_file, folder=session / "versions", every=0
        )
    try:
        with loop, adapter:
            while True:
                for d in loop.pop_decisions():
                    if not d.trial:
                        continue
                    truth = class_map.get(d.cue, d.cue)
                    ok = str(d.label) == str(truth)
                    results["total"] += 1
                    results["correct"] += ok
                    results["decisions"].append(d)
                    p = max(d.proba.values())
                    share = loop.snapshot().prior_share
                    prior = (
                        ""
                        if share is None
                        else f"   model v{d.model_version}, {100 * share:.0f}% prior"
                    )
                    _say(
                        f"      trial {results['total']:2d}: cue {truth!s:>6} -> "
                        f"{d.label!s:>6} (p={p:.2f}) {'ok' if ok else '--'}   running "
                        f"accuracy {results['correct'] / results['total']:.2f}{prior}"
                    )
                if ended.is_set():
                    time.sleep(0.3)  # the last windows: the hop is 0.25 s
                    for d in loop.pop_decisions():
                        if d.trial:
                            truth = class_map.get(d.cue, d.cue)
                            results["total"] += 1
                            results["correct"] += str(d.label) == str(truth)
                            results["decisions"].append(d)
                    break
                time.sleep(0.05)
            if prior_file is not None and not adapter.finish(timeout=FINISH_SECONDS):
                _say(f"      the last refit took over {FINISH_SECONDS:.0f} s: not waited for")
            snap = loop.snapshot()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    if prior_file is not None:  # the model the session ended with, named
        from sblr_rt.calibration.refit import version_path

        results["adapted"] = version_path(adapter.folder, adapter.version)
        results["version"] = adapter.version
    results["latency"] = dataclasses.asdict(snap.latency)
    results["step_time"] = dataclasses.asdict(snap.step_time)
    results["snapshot"] = {
        "n_decisions": snap.n_decisions,
        "gaps": list(snap.gaps),
        "dropped": {**dataclasses.asdict(snap.dropped), "total": snap.dropped.total},
    }
    return results


def _screenshots(args, model_path: Path, out: Path, recording_path) -> list[Path]:
    """Render the dashboard's tabs, the Live tab connected to a replay of the run."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    target = out / "dashboard.png"
    # in real time: the stream lasts while the dashboard starts and draws
    tag = uuid.uuid4().hex[:8]
    proc, _, name, source_id = _start_source(args, recording_path, tag, speed=1.0)
    cmd = [sys.executable, "-m", "sblr_rt.cli", "gui", "--model", str(model_path)]
    cmd += ["--stream", name, "--source-id", source_id, "--marker-stream", f"{name}-Markers"]
    cmd += ["--marker-source-id", f"{source_id}-markers", "--screenshot", str(target)]
    cmd += ["--outlet-name", f"SBLR-Predictions-{tag}"]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if done.returncode != 0:
        _say(f"      (dashboard screenshots failed: {done.stderr.strip()[-300:]})")
        return []
    if "no live data" in done.stderr:
        _say(f"      (the Live tab got no data from {name!r}: its screenshot shows no traces)")
    else:
        _say(f"      dashboard-live.png: the Live tab connected to {name!r}")
    return sorted(out.glob("dashboard*.png"))


def _local_quiet_lsl(out: Path) -> None:
    """Keep the demo's LSL streams on this machine and liblsl's log at warnings.

    The demo's streams are its own, so discovery need not reach the network, and liblsl's
    INFO lines would bury the demo's output. A user's ``LSLAPICFG`` is left alone.
    """
    if os.environ.get("LSLAPICFG"):
        return
    cfg = out / "lsl_api.cfg"
    cfg.write_text(
        "; Written by 'sblr-rt demo': its streams stay on this machine; liblsl logs warnings.\n"
        "[multicast]\nResolveScope = machine\n\n[log]\nlevel = -1\n"
    )
    os.environ["LSLAPICFG"] = str(cfg)  # read by liblsl here and in the source process


def run(args: argparse.Namespace) -> int:
    """Run the demo with the parsed arguments."""
    from sblr_rt.calibration.report import write_report

    from sblr_rt.io.jsonable import dumps

    t0 = time.perf_counter()
    if args.speed is None:
        args.speed = 3.0 if args.prior else 10.0
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    _local_quiet_lsl(out)
    from sblr_rt.io.model_file import load_model, save_model

    prior_file = None
    if args.prior:
        from sblr_rt.bci_model.verdict import prior_info
        from sblr_rt.priors import SHIPPED, shipped_prior_path

        prior_file = shipped_prior_path(PRIOR_NAME)
        model = load_model(prior_file)
        recording_path = _physionet_folder() / PHYSIONET_PRIOR_RUN
        info = prior_info(model)
        lopo = info.get("lopo") or {}
        _say(
            f"[1/3] No calibration: the shipped prior {PRIOR_NAME} ({SHIPPED[PRIOR_NAME]}); "
            f"{len(info['people'])} people, leave-one-person-out accuracy "
            f"{lopo.get('mean', float('nan')):.2f} (worst {lopo.get('worst', float('nan')):.2f})"
        )
    elif args.simulated:
        model, recording_path = _calibrate_simulated(args, out)
    else:
        model, recording_path = _calibrate_physionet(args, out)
    if prior_file is None:
        _print_selection(model)
    model_path = out / "model.sblr.npz"
    save_model(model, model_path)
    text_path, png_path = write_report(model, out / "calibration")

    results = _online(args, model, recording_path, prior_file=prior_file and model_path)
    adapted = results.get("adapted")
    if adapted is not None:  # the demo's model is the adapted one, its report its own
        shutil.copyfile(adapted, model_path)
        model = load_model(model_path)
        text_path, png_path = write_report(model, out / "calibration")
        _say(
            f"      adapted model: version {results['version']} ({adapted}), copied to "
            f"{model_path.name}"
        )
    total, correct = results["total"], results["correct"]
    accuracy = correct / total if total else float("nan")
    n_classes = len(model.classes)
    _say(f"      {total} trial decisions, {_against_chance(correct, total, n_classes)}")
    lat = results.get("latency") or {}
    step = results.get("step_time") or {}
    if lat:
        _say(
            "      end-to-end latency (window end -> decision) "
            + ", ".join(
                f"{k} {v * 1e3:.2f} ms" for k, v in lat.items() if k != "n" and _is_number(v)
            )
        )
    if step:
        _say(
            "      step time "
            + ", ".join(
                f"{k} {v * 1e6:.0f} us" for k, v in step.items() if k != "n" and _is_number(v)
            )
        )

    _say("[3/3] Dashboard")
    has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if has_display and not args.no_gui and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        _say(f"      opening the dashboard on {model_path}")
        subprocess.Popen([sys.executable, "-m", "sblr_rt.cli", "gui", "--model", str(model_path)])
        shots = []
    else:
        shots = _screenshots(args, model_path, out, recording_path)
    from sblr_rt.calibration.outcome import CalibrationOutcome

    from sblr_rt.bci_model.verdict import chance_level

    outcome = CalibrationOutcome.from_model(model)
    summary = {
        "data": "simulated" if args.simulated else "physionet-eegmmidb S001",
        "prior": PRIOR_NAME if args.prior else None,
        "features": model.features,
        "trials": total,
        "correct": correct,
        "accuracy": accuracy,
        "guessing": 1 / n_classes,
        "chance_level": chance_level(total, n_classes) if total else None,
        "cv_accuracy": outcome.cv_mean,
        "adapted_model": None if adapted is None else str(adapted),
        "latency": lat,
        "step_time": step,
        "seconds": time.perf_counter() - t0,
    }
    (out / "summary.json").write_text(dumps(summary, indent=2))
    _say(f"\nWrote to {out}:")
    for path in (model_path, text_path, png_path, out / "summary.json", *shots):
        _say(f"  {path.name}")
    _say(f"Demo finished in {summary['seconds']:.0f} s.\n")
    _say("Next:")
    _say("  live session:  sblr-rt calibrate --stream YOUR-EEG --out my.sblr.npz")
    _say("                 sblr-rt run --model my.sblr.npz --stream YOUR-EEG")
    _say("  your own file: sblr-rt replay FILE --speed 1   (then calibrate/run as above)")
    _say(f"  dashboard:     sblr-rt gui --model {model_path}")
    return 0


def _against_chance(correct: int, total: int, n_classes: int) -> str:
    """Return the accuracy with its interval, against the level ``total`` trials must beat."""
    from sblr_rt.bci_model.verdict import accuracy_interval, chance_level
    from sblr_rt.scoring import correct_needed

    if not total:
        return "no accuracy (no trial decided)"
    accuracy, level = correct / total, chance_level(total, n_classes)
    low, high = accuracy_interval(accuracy, total)
    need = correct_needed(total, n_classes)
    verdict = "above chance" if accuracy > level else "not above chance"
    return (
        f"accuracy {accuracy:.2f} (95% interval {low:.2f}-{high:.2f}; guessing "
        f"{1 / n_classes:.2f}); {total} trials must beat {level:.2f} ({need} correct) at "
        f"p < 0.05: {verdict}"
    )


def _is_number(value) -> bool:
    return isinstance(value, int | float | np.floating) and np.isfinite(value)

"""Early decisions against the fixed ``tmax`` decision, per person, replayed through LSL.

For each person (../shared/data, as benchmarks/accuracy.py loads them): calibrate on two
runs, then replay the next run through LSL (EEG and cue markers, at ``--speed`` x real
time) into several online loops at once, one per setting: the fixed decision at ``tmax``
(no early stopping), and ``--early P`` for each P with the evidence accumulated since the
cue (``--smoothing``, mean by default). Printed per person and setting: accuracy over the
cues, mean decision time (seconds of recording from the cue to the end of the deciding
window), and the information transfer rate (Wolpaw) in bits per minute of decision time.
Settings are named ``P +As``: early decisions at P, not before A seconds after the cue.

    python benchmarks/feedback.py [--people S001,...] [--speed 8] [--p 0.7,0.8,0.9]
                                  [--early-after 0,1] [--features bandpower]
                                  [--smoothing mean] [--tau 1.0]

Notes: an accelerated replay compresses LSL time, and the EMA's time constant and
``early_after`` are in LSL seconds, so ``--tau`` and ``--early-after`` are divided by the
speed here. The ITR counts decision time only (no inter-trial interval); a cue without a
decision counts as an error. Without ../shared/data it says so and stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from accuracy import DATA, WINDOW, cases, physionet_file

from benchmarks._report import Table, write_report
from sblr_rt.scoring import wolpaw_bits


def push(rec, eeg, cues, speed, class_map):
    """Push the EEG and its class cues at ``speed``; return the cues' (LSL time, value)."""
    from sblr_rt.stream import local_clock

    rate = rec.sfreq * speed
    data = rec.data.T
    marks = sorted(
        (round(float(t) * rec.sfreq), v)
        for t, v in zip(rec.marker_times, rec.marker_values, strict=True)
        if v in class_map
    )
    t0 = local_clock() + 0.2
    chunk = max(1, round(rate * 0.02))
    sent = []
    for start in range(0, len(data), chunk):
        stop = min(len(data), start + chunk)
        eeg.push_chunk(data[start:stop], t0 + np.arange(start, stop) / rate)
        for index, value in marks:
            if start <= index < stop:
                cues.push(value, t0 + index / rate)
                sent.append((t0 + index / rate, value))
        time.sleep(max(0.0, t0 + stop / rate - local_clock()))
    return sent


def run_person(model, rec, class_map, args):
    """Replay ``rec`` into one loop per setting; return {setting: (acc, time, itr, ...)}."""
    from sblr_rt.online import OnlineLoop, Smoothing

    # LSL time runs ``speed`` times faster than the recording's: so do tau and early_after
    tau = args.tau / args.speed
    settings = {"tmax": Smoothing(args.smoothing, tau)}
    for after in args.early_after:
        for p in args.p:
            settings[f"{p:g} +{after:g}s"] = Smoothing(
                args.smoothing, tau, early=p, early_after=after / args.speed
            )
    from sblr_rt.stream import EEGOutlet, MarkerOutlet

    tag = uuid.uuid4().hex[:8]

    eeg = EEGOutlet(
        name=f"fb-eeg-{tag}",
        ch_names=rec.ch_names,
        sfreq=rec.sfreq,
        source_id=f"fb-eeg-{tag}",
        speed=args.speed,
        dtype="float64",
    )
    cues = MarkerOutlet(name=f"fb-cues-{tag}", source_id=f"fb-cues-{tag}")
    loops = {
        name: OnlineLoop.from_lsl(
            model,
            source_id=f"fb-eeg-{tag}",
            mode="trial",
            hop=args.hop,
            marker_source_id=f"fb-cues-{tag}",
            outlet=False,
            timeout=20.0,
            smoothing=smoothing,
            cues=list(class_map),
        )
        for name, smoothing in settings.items()
    }
    try:
        for loop in loops.values():
            loop.start()
        eeg.wait_for_consumers(20.0)
        cues.wait_for_consumers(20.0)
        sent = push(rec, eeg, cues, args.speed, class_map)
        time.sleep(1.0)
        decided = {name: loop.pop_decisions() for name, loop in loops.items()}
    finally:
        for loop in loops.values():
            loop.stop()
        eeg.close()
        cues.close()
    n_classes = len(set(class_map.values()))
    out = {}
    for name, decisions in decided.items():
        trials = [d for d in decisions if d["trial"]]
        correct, times = 0, []
        for (t_cue, value), d in zip(sent, _match(sent, trials), strict=True):
            if d is None:
                continue
            correct += d["label"] == class_map[value]
            times.append((d["window_end"] - t_cue) * args.speed)
        acc = correct / len(sent)
        mean_t = float(np.mean(times)) if times else float("nan")
        itr = wolpaw_bits(acc, n_classes) * 60.0 / mean_t if times else 0.0
        early = sum(bool(d["early"]) for d in trials)
        out[name] = (acc, mean_t, itr, early, len(sent))
    return out


def _match(sent, trials):
    """The trial decision of each cue sent (by order of cue value and time), or None."""
    left = list(trials)
    matched = []
    for t_cue, value in sent:
        pick = next((d for d in left if d["cue"] == value and d["window_end"] >= t_cue), None)
        if pick is not None:
            left.remove(pick)
        matched.append(pick)
    return matched


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", default=",".join(f"S{i:03d}" for i in range(1, 10)))
    parser.add_argument("--speed", type=float, default=8.0)
    parser.add_argument("--p", default="0.7,0.8,0.9")
    parser.add_argument(
        "--early-after",
        default="0,1",
        help="seconds after the cue before an early decision, one set of rows each",
    )
    parser.add_argument("--features", default="bandpower")
    parser.add_argument("--smoothing", default="mean", choices=("mean", "ema"))
    parser.add_argument("--tau", type=float, default=1.0, help="EMA time constant, recording s")
    parser.add_argument("--hop", type=float, default=0.1, help="seconds of LSL time")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--no-report", action="store_true", help="do not write docs/benchmarks/feedback.md"
    )
    args = parser.parse_args()
    args.p = [float(p) for p in args.p.split(",") if p]
    args.early_after = [float(a) for a in args.early_after.split(",") if a]
    people = [p for p in args.people.split(",") if p]
    if not DATA.exists():
        print(f"{DATA} is absent: no shared recordings, nothing to replay")
        return
    os.environ.setdefault(
        "LSLAPICFG", str(Path(__file__).resolve().parents[1] / "tests" / "lsl_api.cfg")
    )
    from sblr_rt.calibration import calibrate

    from sblr_rt.io import read_recording

    print(
        f"replay x{args.speed:g}, hop {args.hop:g} s of LSL time, {args.features}, "
        f"{args.smoothing} smoothing; window {WINDOW[0]}-{WINDOW[1]} s after the cue"
    )
    print(f"{'person':7} {'run':4} {'setting':10} {'acc':>6} {'time s':>7} {'bits/min':>9}  early")
    rows, per_person, means = [], [], []
    seen = set()
    for person, task, cal, test, class_map in cases(people):
        if person in seen:  # one test run per person (S001: its first)
            continue
        seen.add(person)
        files = [physionet_file(int(person[1:]), r) for r in (*cal, test)]
        if not all(f.exists() for f in files):
            print(f"{person}: data absent ({files[0].parent}), skipped")
            continue
        recs = [read_recording(f) for f in files]
        model = calibrate(
            recs[:-1],
            classes=class_map,
            tmin=WINDOW[0],
            tmax=WINDOW[1],
            features=args.features,
            n_jobs=args.n_jobs,
        )
        result = run_person(model, recs[-1], class_map, args)
        for name, (acc, mean_t, itr, early, n) in result.items():
            rows.append((name, acc, mean_t, itr))
            per_person.append(
                [person, task, name, f"{acc:.3f}", f"{mean_t:.2f} s", f"{itr:.2f}", f"{early}/{n}"]
            )
            print(
                f"{person:7} {task:4} {name:10} {acc:6.3f} {mean_t:7.2f} {itr:9.2f}  {early}/{n}",
                flush=True,
            )
    if rows:
        print("mean over people:")
        for name in dict.fromkeys(r[0] for r in rows):
            sel = [r for r in rows if r[0] == name]
            acc, t, itr = (float(np.mean([r[k] for r in sel])) for k in (1, 2, 3))
            print(f"  {name:10} acc {acc:.3f}  time {t:.2f} s  {itr:.2f} bits/min")
            means.append([name, f"{acc:.3f}", f"{t:.2f} s", f"{itr:.2f}"])
    if rows and not args.no_report:
        write_report(
            "feedback",
            Table(
                ["setting", "accuracy", "decision time", "bits/min"],
                means,
                caption=f"Means over the {len(seen)} people.",
            ),
            Table(
                ["person", "run", "setting", "accuracy", "decision time", "bits/min", "early"],
                per_person,
                caption="Per person (early: trials decided before tmax, of all).",
            ),
            notes=(
                f"Calibration on each person's first runs ({args.features}, window "
                f"{WINDOW[0]}-{WINDOW[1]} s), then the next run replayed through LSL at "
                f"x{args.speed:g} into one online loop per setting (hop {args.hop:g} s of LSL "
                f"time, {args.smoothing} of the log-odds since the cue). Accuracy over the "
                "run's cues, mean decision time from the cue, Wolpaw ITR over decision time "
                "only. *P +A s*: early at probability P, not before A s after the cue."
            ),
            blas="1 thread (OPENBLAS_NUM_THREADS=1 set by the benchmark)",
        )


if __name__ == "__main__":
    main()

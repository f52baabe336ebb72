"""Calibrated probabilities: reliability per window end, and early decisions that keep accuracy.

For each person (PhysioNet S002-S014, imagined left vs right fist): calibrate on runs 4 + 8
(``--features``, window 0.5-3.5 s), fit the probability calibration on those runs only
(:func:`sblr_rt.calibration.probability.calibrate_probability`: every trial scored at
window ends 0, 0.25, ..., 3.5 s after its cue by the model refitted on the other trials),
then decide run 12, which nothing was fitted on, as the online loop decides it: a sliding
window every ``--hop`` seconds of the recording, each scored from the run's running mean
(run centring), the evidence since the cue accumulated by :class:`sblr_rt.online.Evidence`
(``--smoothing``, mean by default) with early decisions at P, and the trial window at
``tmax``. Both with the raw probabilities and with the calibrated ones.

Printed:

- ECE (expected calibration error, 10 bins, top-class probability) of the single windows
  per window end, pooled over people, raw and calibrated, and the mean sharpness fitted;
- per person and setting (``tmax``; ``P +A s``: early at P, not before A s after the cue),
  the trial accuracy in cues, raw and calibrated, the mean decision time, and the share of
  early decisions that were right against P (reliability of the stopping rule itself).

The calibration's settings (ends every 0.25 s, 5 contiguous blocks, sharpness in [0, 10]
and non-decreasing in the end) were fixed before the first run of this benchmark; its
form (the curve ``c (e / tmax) ** b`` with ``c`` held near 1) was chosen later by leaving
people out, on the prior's combinations (``benchmarks/prior.py``); no setting is chosen
on run 12 of the person it is measured on. A cached model's calibration is fitted anew on
its k cues, so that the current rule is measured.

    python benchmarks/probability.py [--people S002,...] [--features bandpower]
                                     [--p 0.8,0.9] [--early-after 0,1.75] [--hop 0.1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._report import Table, write_report  # noqa: E402
from benchmarks.accuracy import DATA, LEFT_RIGHT, WINDOW, physionet_file  # noqa: E402

PER_PERSON = [f"{h} ({kind})" for kind in ("raw", "cal.") for h in ("right", "time", "early")]
ECE_ENDS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5)


def test_run_windows(model, rec, class_map, ends):
    """Run-centred scores of the test run's windows ending at ``ends`` after each cue.

    Sliding windows are scored from the run's running mean of the trial windows decided
    before their cue (as :meth:`StreamingState.decide` adjusts them), the trial window
    moves it (:meth:`RunCentringState.step`).

    Returns
    -------
    scores : ndarray, shape (n_trials, n_ends) (two classes)
    trial : ndarray, shape (n_trials,)
        The trial windows' run-centred scores.
    y : ndarray of int, shape (n_trials,)
    """
    order = [rec.ch_names.index(c) for c in model.ch_names]
    data = rec.data[order]
    n_raw = model.n_times_raw
    cues = [
        (round(float(t) * rec.sfreq), class_map[v])
        for t, v in zip(rec.marker_times, rec.marker_values, strict=True)
        if v in class_map
    ]
    stop_at_tmax = round(model.tmax * model.sfreq)
    rows, trial_raw, y = [], [], []
    for onset, label in cues:
        stops = [onset + round(e * model.sfreq) for e in ends]
        trial_stop = onset + stop_at_tmax
        if trial_stop > data.shape[1] or min(stops) - n_raw < 0:
            continue
        windows = np.stack([data[:, s - n_raw : s] for s in [*stops, trial_stop]])
        rows.append(model.decision_function(windows))
        y.append(model.classes.index(label))
    raw = np.array(rows)
    trial_raw = raw[:, -1]
    scores = raw[:, :-1].copy()
    trial = np.empty(len(raw))
    if model.run_centring is not None:
        state = model.run_centring.start()
        for k in range(len(raw)):
            scores[k] = state.adjust(scores[k][:, None])[:, 0]
            trial[k] = state.step(np.atleast_1d(trial_raw[k]))[0]
    else:
        trial = trial_raw
    return scores, trial, np.array(y)


def replay_evidence(model, scores, trial, ends, smoothing, calibration):
    """Decide each trial through :class:`Evidence`; return (labels, decision ends, early)."""
    from sblr_rt.model.link import proba_of_window
    from sblr_rt.online import Evidence

    classes = model.classes
    a_trial = 1.0 if calibration is None else calibration.trial
    labels, times, early = [], [], []
    for k in range(len(trial)):
        ev = Evidence(classes, smoothing, calibration=calibration)
        t0 = 1000.0 * (k + 1)
        ev.cue(t0, "cue")
        decided = None
        for j, e in enumerate(ends):
            p = proba_of_window([scores[k, j]], sharpness=a_trial)
            d = {"proba": dict(zip(classes, p, strict=True)), "window_end": t0 + e}
            d["trial"] = False
            smoothed, done = ev.add(d)
            if done is not None:
                decided = (max(smoothed, key=smoothed.__getitem__), e, True)
                break
        if decided is None:
            p = proba_of_window([trial[k]], sharpness=a_trial)
            d = {"proba": dict(zip(classes, p, strict=True)), "window_end": t0 + model.tmax}
            d.update(trial=True, cue="cue")
            ev.add(d)  # the trial window decides, as the loop's trial decision does
            decided = (classes[int(trial[k] > 0)], model.tmax, False)
        labels.append(classes.index(decided[0]))
        times.append(decided[1])
        early.append(decided[2])
    return np.array(labels), np.array(times), np.array(early)


def person_runs(person, k, args):
    """Calibrate (cached) on the first ``k`` cues of runs 4 + 8; return the test windows."""
    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.config import load_config
    from sblr_rt.calibration.prior import first_trials
    from sblr_rt.calibration.probability import calibrate_probability

    from sblr_rt.io import read_recording
    from sblr_rt.io.model_file import load_model, save_model

    subject = int(person[1:])
    files = [physionet_file(subject, r) for r in (4, 8, 12)]
    if not all(f.exists() for f in files):
        print(f"{person}: data absent, skipped")
        return None
    recs = [read_recording(f) for f in files]
    name = f"{person}-{args.features}-k{k}.sblr.npz"
    cached = Path(args.cache) / name if args.cache else None
    if cached is not None and cached.exists():
        model = load_model(cached)
    else:
        try:
            model = calibrate(
                recs[:2],
                classes=LEFT_RIGHT,
                tmin=WINDOW[0],
                tmax=WINDOW[1],
                features=args.features,
                n_jobs=args.n_jobs,
                max_trials=k if k < 30 else None,
            )
        except ValueError as err:  # too few cues of a class for the CV's folds
            print(f"k={k} {person}: not calibrated ({err})")
            return None
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            save_model(model, cached)
        return model, model.probability, recs[2]
    # a cached model: its calibration fitted anew on its own k cues, by the current rule
    config = load_config(None, classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1])
    cues = first_trials(recs[:2], config.class_map, k if k < 30 else None)
    cal = calibrate_probability(model, cues, config, model.classes)
    return model, cal, recs[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", default=",".join(f"S{i:03d}" for i in range(2, 15)))
    parser.add_argument("--ks", default="10,20,30", help="calibration cues (30: all)")
    parser.add_argument("--features", default="bandpower")
    parser.add_argument("--p", default="0.8,0.9")
    parser.add_argument("--early-after", default="0,1.75")
    parser.add_argument("--hop", type=float, default=0.1, help="seconds of recording")
    parser.add_argument("--smoothing", default="mean", choices=("mean", "ema"))
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--cache", default="", help="folder for the calibrated models")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"{DATA} is absent: no shared recordings")
        return
    from sblr_rt.calibration.probability import expected_calibration_error

    from sblr_rt.model.link import proba_from_scores
    from sblr_rt.online import Smoothing

    ps = [float(p) for p in args.p.split(",") if p]
    afters = [float(a) for a in args.early_after.split(",") if a]
    ks = [int(k) for k in args.ks.split(",") if k]
    settings = {"tmax": Smoothing(args.smoothing, args.tau)}
    for after in afters:
        for p in ps:
            settings[f"{p:g} +{after:g}s"] = Smoothing(
                args.smoothing, args.tau, early=p, early_after=after
            )
    ends = np.round(np.arange(0.0, WINDOW[1] - 1e-9, args.hop), 6)
    ece_idx = [int(np.argmin(abs(ends - e))) for e in ECE_ENDS[:-1]]
    people = [p for p in args.people.split(",") if p]
    ece_rows = [[f"{e:g} s"] for e in ECE_ENDS]
    means, per_person = [], []
    t_start = time.perf_counter()
    for k in ks:
        pooled = {"raw": [], "cal": []}  # (scores at the ECE ends, trial, y, sharpness)
        rows, sums = [], {}
        for person in people:
            got = person_runs(person, k, args)
            if got is None:  # data absent or too few cues for the calibration
                continue
            model, cal, test = got
            scores, trial, y = test_run_windows(model, test, LEFT_RIGHT, ends)
            sharp = [cal.sharpness_at(e) for e in ECE_ENDS] if cal else [1.0] * len(ECE_ENDS)
            pooled["raw"].append((scores[:, ece_idx], trial, y, [1.0] * len(ECE_ENDS)))
            pooled["cal"].append((scores[:, ece_idx], trial, y, sharp))
            n = len(y)
            for name, smoothing in settings.items():
                row = [f"{k}", person, name]
                for kind, c in (("raw", None), ("cal", cal)):
                    labels, times, early = replay_evidence(
                        model, scores, trial, ends, smoothing, c
                    )
                    right = int(np.sum(labels == y))
                    row += [f"{right}/{n}", f"{np.mean(times):.2f}", f"{int(early.sum())}"]
                    s = sums.setdefault((name, kind), [0, 0, 0.0, 0, 0])
                    s[0] += right
                    s[1] += n
                    s[2] += float(np.sum(times))
                    s[3] += int(early.sum())
                    s[4] += int(np.sum((labels == y) & early))
                rows.append(row)
            line = "  ".join(f"{r[2]}: {r[3]}|{r[6]}" for r in rows[-len(settings) :])
            print(f"k={k} {person} a(e)={[round(a, 2) for a in sharp]}  {line}", flush=True)
        if k == max(ks):
            per_person = rows
        within = {}  # people whose accuracy stays within 1 cue of tmax's
        for name in settings:
            for kind, col in (("raw", 3), ("cal", 6)):
                ok, seen = 0, sorted({r[1] for r in rows})
                for person in seen:
                    mine = {r[2]: r for r in rows if r[1] == person}
                    base = int(mine["tmax"][col].split("/")[0])
                    ok += int(mine[name][col].split("/")[0]) >= base - 1
                within[(name, kind)] = f"{ok}/{len(seen)}"
        for name in settings:
            row = [f"{k}", name]
            for kind in ("raw", "cal"):
                r, n, t, e, er = sums[(name, kind)]
                early_right = f"{er / e:.2f}" if e else "-"
                row += [f"{r / n:.3f}", f"{t / n:.2f} s", f"{e}/{n}", early_right]
                row.append(within[(name, kind)])
            means.append(row)
        for j in range(len(ECE_ENDS)):
            for kind in ("raw", "cal"):
                probs, ys = [], []
                for sc, tr, yy, sharp in pooled[kind]:
                    col = tr if j == len(ECE_ENDS) - 1 else sc[:, j]
                    probs.append(proba_from_scores(col, "ovr", sharp[j]))
                    ys.append(yy)
                ece = expected_calibration_error(np.concatenate(probs), np.concatenate(ys))
                ece_rows[j].append(f"{ece:.3f}")
            ece_rows[j].append(f"{np.mean([sh[j] for *_, sh in pooled['cal']]):.2f}")
    print("ECE per window end (pooled), per k: raw, calibrated, mean sharpness")
    for r in ece_rows:
        print("  ", *r)
    print("means (raw | calibrated): acc, time, early, early right, people within 1 cue")
    for r in means:
        print("  ", *r)
    print(f"{time.perf_counter() - t_start:.0f} s")
    if args.no_report:
        return
    n_people = len({r[1] for r in per_person})
    head = ["acc", "time", "early", "early right", "within 1 cue"]
    ece_head = ["window end"]
    for k in ks:
        ece_head += [f"k={k} raw", f"k={k} calibrated", f"k={k} sharpness"]
    write_report(
        "probability",
        Table(
            ece_head,
            ece_rows,
            caption=(
                "ECE of single windows of run 12 ending e s after the cue (the trial window "
                f"at 3.5 s), {n_people} people pooled, after k calibration cues; the mean "
                "sharpness fitted."
            ),
        ),
        Table(
            ["k", "setting", *(f"{h} (raw)" for h in head), *(f"{h} (cal.)" for h in head)],
            means,
            caption=(
                f"Trial decisions over the {n_people} people: accuracy, mean decision time "
                "from the cue, early decisions, the share of them right, and the people whose "
                "accuracy stays within 1 cue of tmax's."
            ),
        ),
        Table(
            ["k", "person", "setting", *PER_PERSON],
            per_person,
            caption=f"Per person, k = {max(ks)}.",
        ),
        notes=(
            f"Calibration on the first k cues of runs 4 + 8 ({args.features}, window "
            f"{WINDOW[0]}-{WINDOW[1]} s), the probability calibration fitted by calibrate on "
            "those cues only; run 12 decided offline as the online loop decides it (sliding "
            f"windows every {args.hop:g} s, run centring, {args.smoothing} of the "
            "log-probabilities since the cue)."
        ),
        blas="1 thread (OPENBLAS_NUM_THREADS=1 set by the benchmark)",
    )


if __name__ == "__main__":
    main()

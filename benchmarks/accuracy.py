"""Cross-run accuracy: calibrate on a person's first runs, classify the next run.

This is how a session uses sblr-rt: calibration on the runs recorded so far, then
decisions on the next run, which the model never saw. Every choice (feature path, spatial
stage, rank, penalties, scaling) is made inside the calibration runs by
:func:`sblr_rt.calibration.calibrate`; the test run is touched once, to score.

People and runs (../shared/data):

- PhysioNet S002-S009: imagined left (T1) vs right (T2) fist; calibrate on runs 4 + 8
  (30 cues), test on run 12 (15 cues).
- PhysioNet S001, four tasks: each test run is calibrated on the two runs of the same
  classes recorded before it: run 7 on 3 + 4 and run 8 on 4 + 7 (left vs right fist),
  run 9 on 5 + 6 and run 10 on 6 + 9 (both fists vs both feet).
- BCI Competition 2003 IV (one epoched file of 216 trials): stratified 5-fold CV,
  calibration nested in each training fold.

Window: 0.5-3.5 s after the cue (PhysioNet), the whole 0.5 s trial (BCI IV). Baselines on
the same cues and windows: CSP (4 components, log variance) + shrinkage LDA, and OAS
covariances + tangent space + logistic regression, both on 8-30 Hz band-passed windows.

    python benchmarks/accuracy.py [--paths waveform,bandpower,spectral,auto]
                                  [--people S001,S002,...] [--n-jobs 2] [--bci]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
PHYSIONET_S001 = DATA / "physionet-eegmmidb-S001"
PHYSIONET_MORE = DATA / "physionet-eegmmidb-more"
BCI_IV = DATA / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"

LEFT_RIGHT = {"T1": "left", "T2": "right"}
FISTS_FEET = {"T1": "fists", "T2": "feet"}
WINDOW = (0.5, 3.5)
BASELINE_BAND = (8.0, 30.0)


def physionet_file(subject: int, run: int) -> Path:
    """Path of one PhysioNet eegmmidb run in ../shared/data."""
    if subject == 1:
        return PHYSIONET_S001 / f"S001R{run:02d}.edf"
    return PHYSIONET_MORE / f"S{subject:03d}" / f"S{subject:03d}R{run:02d}.edf"


def cases(people):
    """Yield (person, task, calibration runs, test run, class map)."""
    for person in people:
        subject = int(person[1:])
        if subject == 1:
            for cal, test, classes in (
                ((3, 4), 7, LEFT_RIGHT),
                ((4, 7), 8, LEFT_RIGHT),
                ((5, 6), 9, FISTS_FEET),
                ((6, 9), 10, FISTS_FEET),
            ):
                yield person, f"R{test:02d}", cal, test, classes
        else:
            yield person, "R12", (4, 8), 12, LEFT_RIGHT


def raw_test_epochs(rec, pre, class_map):
    """Raw epochs (n_pad + window samples) of the test run in the model's channel order."""
    order = [rec.ch_names.index(c) for c in pre.ch_names]
    data = rec.data[order]
    start = round(pre.tmin * pre.sfreq) - pre.n_pad
    epochs, labels = [], []
    for t, value in zip(rec.marker_times, rec.marker_values, strict=True):
        if value not in class_map:
            continue
        lo = round(float(t) * rec.sfreq) + start
        if lo < 0 or lo + pre.n_times_raw > data.shape[1]:
            continue
        epochs.append(data[:, lo : lo + pre.n_times_raw])
        labels.append(class_map[value])
    return np.stack(epochs), np.asarray(labels)


def band_windows(rec, class_map, tmin, tmax):
    """8-30 Hz band-passed windows of every cue (the baselines' input)."""
    import mne

    data = mne.filter.filter_data(rec.data, rec.sfreq, *BASELINE_BAND, verbose="error")
    n = round((tmax - tmin) * rec.sfreq)
    out, labels = [], []
    for t, value in zip(rec.marker_times, rec.marker_values, strict=True):
        if value not in class_map:
            continue
        lo = round((float(t) + tmin) * rec.sfreq)
        if lo < 0 or lo + n > data.shape[1]:
            continue
        out.append(data[:, lo : lo + n])
        labels.append(class_map[value])
    return np.stack(out), np.asarray(labels)


def baselines():
    """The two baselines as scikit-learn pipelines."""
    from mne.decoding import CSP
    from pyriemann.estimation import Covariances
    from pyriemann.tangentspace import TangentSpace
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return {
        "CSP+LDA": lambda: make_pipeline(
            CSP(n_components=4, log=True),
            LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        ),
        "TS+LR": lambda: make_pipeline(
            Covariances("oas"), TangentSpace(), LogisticRegression(max_iter=1000)
        ),
    }


def score_baselines(train_recs, test_rec, class_map, window):
    """Accuracy of each baseline trained on ``train_recs`` and tested on ``test_rec``."""
    parts = [band_windows(r, class_map, *window) for r in train_recs]
    Xtr = np.concatenate([p[0] for p in parts])
    ytr = np.concatenate([p[1] for p in parts])
    Xte, yte = band_windows(test_rec, class_map, *window)
    scores = {}
    for name, make in baselines().items():
        clf = make().fit(Xtr, ytr)
        scores[name] = float(np.mean(clf.predict(Xte) == yte))
    return scores


def score_path(path, train_recs, test_rec, class_map, window, n_jobs):
    """Calibrate with ``features=path``; return (accuracy, seconds, model)."""
    from sblr_rt.calibration import calibrate

    t0 = time.perf_counter()
    model = calibrate(
        train_recs,
        classes=class_map,
        tmin=window[0],
        tmax=window[1],
        features=path,
        n_jobs=n_jobs,
    )
    seconds = time.perf_counter() - t0
    X, y = raw_test_epochs(test_rec, model.preprocessor, class_map)
    return float(np.mean(model.predict(X) == y)), seconds, model


def chosen(model) -> str:
    """What auto chose, for the table."""
    auto = model.metadata.get("selection", {}).get("auto") or {}
    return str(auto.get("chosen", model.preprocessor.features))


def cross_run(args):
    """Print the cross-run table; return the rows."""
    from sblr_rt.io import read_recording

    names = [*args.paths, "CSP+LDA", "TS+LR"]
    print(f"{'person':7} {'test':5} " + " ".join(f"{n:>10}" for n in names) + "   auto s  chose")
    rows = []
    for person, task, cal, test, class_map in cases(args.people):
        files = [physionet_file(int(person[1:]), r) for r in (*cal, test)]
        if not all(f.exists() for f in files):
            print(f"{person} {task}: data absent ({files[0].parent}), skipped")
            continue
        recs = [read_recording(f) for f in files]
        row = {"person": person, "task": task}
        auto_seconds, pick = float("nan"), ""
        for path in args.paths:
            acc, seconds, model = score_path(
                path, recs[:-1], recs[-1], class_map, WINDOW, args.n_jobs
            )
            row[path] = acc
            if path == "auto":
                auto_seconds, pick = seconds, chosen(model)
        row.update(score_baselines(recs[:-1], recs[-1], class_map, WINDOW))
        rows.append(row)
        cells = " ".join(f"{row[n]:10.3f}" for n in names)
        print(f"{person:7} {task:5} {cells} {auto_seconds:8.1f}  {pick}", flush=True)
    for label, keep in (
        ("S002-S009", lambda r: r["person"] != "S001"),
        ("S001", lambda r: r["person"] == "S001"),
    ):
        sel = [r for r in rows if keep(r)]
        if sel:
            means = " ".join(f"{np.mean([r[n] for r in sel]):10.3f}" for n in names)
            print(f"{'mean':7} {label:5} {means}   ({len(sel)} test runs)")
    return rows


def bci_competition(args):
    """Stratified 5-fold CV on BCI Competition 2003 IV, calibration nested."""
    from sblr_rt.calibration import calibrate
    from sklearn.model_selection import StratifiedKFold

    from sblr_rt.io import read_recording
    from sblr_rt.io.recordings import Recording

    if not BCI_IV.exists():
        print(f"{BCI_IV} is absent: BCI Competition 2003 IV skipped")
        return
    rec = read_recording(BCI_IV)
    n = rec.epoch_length
    trials = rec.data.reshape(rec.n_channels, -1, n).transpose(1, 0, 2)
    labels = np.asarray(rec.marker_values)

    def subset(idx):
        return Recording(
            data=trials[idx].transpose(1, 0, 2).reshape(rec.n_channels, -1),
            sfreq=rec.sfreq,
            ch_names=rec.ch_names,
            marker_times=np.arange(len(idx)) * n / rec.sfreq,
            marker_values=labels[idx].tolist(),
            epoch_length=n,
            source=f"{rec.source} (subset)",
            unit=rec.unit,
        )

    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(trials, labels)
    accs = {p: [] for p in args.paths}
    for train, test in folds:
        for path in args.paths:
            t0 = time.perf_counter()
            try:
                model = calibrate(subset(train), features=path, n_jobs=args.n_jobs)
            except ValueError as exc:  # power paths need the samples before an epoch
                print(f"  fold: {path} not applicable to epoched trials: {exc}"[:160])
                continue
            seconds = time.perf_counter() - t0
            pred = model.predict(trials[test])
            accs[path].append(float(np.mean(pred == labels[test])))
            print(f"  fold: {path} {accs[path][-1]:.3f} ({seconds:.1f} s, {chosen(model)})")
    print("BCI Competition 2003 IV, stratified 5-fold CV (216 trials):")
    for path, a in accs.items():
        if a:
            print(f"  {path:10} {np.mean(a):.3f} +/- {np.std(a):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="waveform,bandpower,spectral,auto")
    parser.add_argument("--people", default=",".join(f"S{i:03d}" for i in range(1, 10)))
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--bci", action="store_true", help="BCI Competition 2003 IV only")
    args = parser.parse_args()
    args.paths = [p for p in args.paths.split(",") if p]
    args.people = [p for p in args.people.split(",") if p]
    import mne
    from threadpoolctl import threadpool_limits

    mne.set_log_level("ERROR")
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    print(
        f"cross-run accuracy; OpenBLAS limited to 1 thread per process; n_jobs={args.n_jobs}; "
        f"data from {DATA}"
    )
    if not DATA.exists():
        print(f"{DATA} is absent: nothing to measure (the benchmark needs ../shared/data)")
        return 0
    with threadpool_limits(1):
        if not args.bci:
            cross_run(args)
        bci_competition(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

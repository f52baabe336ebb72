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

- PhysioNet S002-S014: the same, people S010-S014 were never used to choose anything
  before run centring and the covariance path were measured on all thirteen.

The test run is classified as a session would classify it: trial by trial in time order,
with unsupervised run centring (:meth:`BCIModel.predict_run`, what ``sblr-rt run`` does by
default); ``--static`` scores each trial alone at the calibration reference instead.

Window: 0.5-3.5 s after the cue (PhysioNet), the whole 0.5 s trial (BCI IV). Baselines on
the same cues and windows: CSP (4 components, log variance) + shrinkage LDA; OAS
covariances + tangent space + logistic regression (TS+LR); and TS+LR with Riemannian
re-centring (TS+LR+RC, Zanini et al. 2018: each calibration run whitened by its own
Riemannian mean, the test run by a running geodesic mean that starts at the calibration
mean with the weight of one trial); SBLEST (Wang et al. 2023,
:class:`sblr_rt.model.sblest.SBLEST`, K = 2 delays 1 sample apart, empirical covariances);
all on 8-30 Hz band-passed windows.

BCI IV baselines, on the same folds as the paths: CSP+LDA, TS+LR and SBLEST on each whole
0.5 s trial band-passed 8-30 Hz (the pre-movement mu/beta desynchronisation; a 4th-order
zero-phase Butterworth run on each trial alone, as the data hold no samples between trials;
SBLEST with OAS shrinkage, since 56 embedded channels outnumber the 50 samples), and the
classic approach for this slow pre-movement potential, sLDA: each trial low-passed at 4 Hz
(the same filter), decimated to 10 Hz (5 samples per channel, the last at the trial's
end), shrinkage LDA on the 140 values.
``--sensorimotor`` keeps the FC, C and CP channels only (no eye or visual channels), for
every path and baseline: how much of the accuracy is motor imagery.

    python benchmarks/accuracy.py [--paths waveform,bandpower,spectral,covariance,auto]
                                  [--people S001,S002,...] [--n-jobs 2] [--bci]
                                  [--static] [--sensorimotor]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._report import Table, write_report  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
PHYSIONET_S001 = DATA / "physionet-eegmmidb-S001"
PHYSIONET_MORE = DATA / "physionet-eegmmidb-more"
BCI_IV = DATA / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"

LEFT_RIGHT = {"T1": "left", "T2": "right"}
FISTS_FEET = {"T1": "fists", "T2": "feet"}
WINDOW = (0.5, 3.5)
BASELINE_BAND = (8.0, 30.0)
#: The baseline columns of the cross-run table, after the paths.
BASELINES = ("CSP+LDA", "TS+LR", "TS+LR+RC", "SBLEST")


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


def raw_test_epochs(rec, pre, class_map):  # pre: a BCIModel or its Preprocessor
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


def sensorimotor(ch_names) -> list[str]:
    """The FC, C and CP channels (C3, FCz, CP4, ...): no frontal, temporal or occipital."""
    return [c for c in ch_names if re.fullmatch(r"(FC|C|CP)[z0-9]+\.*", c, re.IGNORECASE)]


def band_windows(rec, class_map, tmin, tmax, picks=None):
    """8-30 Hz band-passed windows of every cue (the baselines' input)."""
    import mne

    data = rec.data if picks is None else rec.data[[rec.ch_names.index(c) for c in picks]]
    data = mne.filter.filter_data(data, rec.sfreq, *BASELINE_BAND, verbose="error")
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
    """The baselines trained on the pooled calibration windows, as scikit-learn estimators."""
    from mne.decoding import CSP
    from pyriemann.estimation import Covariances
    from pyriemann.tangentspace import TangentSpace
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from sblr_rt.model.sblest import SBLEST

    return {
        "CSP+LDA": lambda: make_pipeline(
            CSP(n_components=4, log=True),
            LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        ),
        "TS+LR": lambda: make_pipeline(
            Covariances("oas"), TangentSpace(), LogisticRegression(max_iter=1000)
        ),
        "SBLEST": SBLEST,
    }


def recentred_ts_lr(train_parts, test_part):
    """TS+LR with Riemannian re-centring; return the test run's accuracy."""
    from pyriemann.estimation import Covariances
    from pyriemann.tangentspace import TangentSpace

    try:  # pyRiemann 0.12 moved them (the old modules warn, and go in 0.14)
        from pyriemann.geometry.base import invsqrtm, powm, sqrtm
        from pyriemann.geometry.mean import mean_riemann
    except ImportError:
        from pyriemann.utils.base import invsqrtm, powm, sqrtm
        from pyriemann.utils.mean import mean_riemann
    from sklearn.linear_model import LogisticRegression

    cov = Covariances("oas")
    train = [cov.fit_transform(X) for X, _ in train_parts]

    def whiten(C, M):
        W = invsqrtm(M)
        return W @ C @ W

    Ctr = np.concatenate([whiten(C, mean_riemann(C)) for C in train])
    ytr = np.concatenate([y for _, y in train_parts])
    M = mean_riemann(np.concatenate(train))
    Cte, out = cov.fit_transform(test_part[0]), []
    for k, C in enumerate(Cte, start=1):  # the running geodesic mean, then the trial
        Ms, Mis = sqrtm(M), invsqrtm(M)
        M = Ms @ powm(Mis @ C @ Mis, 1.0 / (k + 1)) @ Ms
        out.append(whiten(C, M))
    n = Ctr.shape[1]
    ts = TangentSpace(metric="riemann").fit(np.eye(n)[None].repeat(2, axis=0))
    clf = LogisticRegression(max_iter=1000).fit(ts.transform(Ctr), ytr)
    return float(np.mean(clf.predict(ts.transform(np.array(out))) == test_part[1]))


def score_baselines(train_recs, test_rec, class_map, window, picks=None):
    """Accuracy of each baseline trained on ``train_recs`` and tested on ``test_rec``."""
    parts = [band_windows(r, class_map, *window, picks) for r in train_recs]
    Xtr = np.concatenate([p[0] for p in parts])
    ytr = np.concatenate([p[1] for p in parts])
    Xte, yte = band_windows(test_rec, class_map, *window, picks)
    scores = {}
    for name, make in baselines().items():
        clf = make().fit(Xtr, ytr)
        scores[name] = float(np.mean(clf.predict(Xte) == yte))
    scores["TS+LR+RC"] = recentred_ts_lr(parts, (Xte, yte))
    return scores


def score_path(path, train_recs, test_rec, class_map, window, n_jobs, *, static, picks, eog):
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
        picks=picks,
        eog=eog,
    )
    seconds = time.perf_counter() - t0
    X, y = raw_test_epochs(test_rec, model, class_map)
    pred = model.predict(X) if static else model.predict_run(X)
    return float(np.mean(pred == y)), seconds, model


def chosen(model) -> str:
    """What auto chose, for the table."""
    from sblr_rt.bci_model.search_record import search_record

    record = search_record(model.metadata)
    ensemble = record.get("ensemble") or []
    if len(ensemble) > 1:  # the mean of these candidates' scores, the first chosen by CV
        return " + ".join(ensemble)
    return str(record.get("chosen", model.features))


def cross_run(args):
    """Print the cross-run table; return the rows."""
    from sblr_rt.io import read_recording

    names = [*args.paths, *BASELINES]
    print(f"{'person':7} {'test':5} " + " ".join(f"{n:>10}" for n in names) + "   auto s  chose")
    rows = []
    for person, task, cal, test, class_map in cases(args.people):
        files = [physionet_file(int(person[1:]), r) for r in (*cal, test)]
        if not all(f.exists() for f in files):
            print(f"{person} {task}: data absent ({files[0].parent}), skipped")
            continue
        recs = [read_recording(f) for f in files]
        picks = sensorimotor(recs[0].ch_names) if args.sensorimotor else None
        row = {"person": person, "task": task, "chose": ""}
        auto_seconds, pick = float("nan"), ""
        for path in args.paths:
            acc, seconds, model = score_path(
                path,
                recs[:-1],
                recs[-1],
                class_map,
                WINDOW,
                args.n_jobs,
                static=args.static,
                picks=picks,
                eog=args.eog,
            )
            row[path] = acc
            if path == "auto":
                auto_seconds, pick = seconds, chosen(model)
                row["chose"] = pick
        row.update(score_baselines(recs[:-1], recs[-1], class_map, WINDOW, picks))
        rows.append(row)
        cells = " ".join(f"{row[n]:10.3f}" for n in names)
        print(f"{person:7} {task:5} {cells} {auto_seconds:8.1f}  {pick}", flush=True)
    for label, keep in (
        ("S002-S014", lambda r: r["person"] != "S001"),
        ("S001", lambda r: r["person"] == "S001"),
    ):
        sel = [r for r in rows if keep(r)]
        if sel:
            means = " ".join(f"{np.mean([r[n] for r in sel]):10.3f}" for n in names)
            worst = " ".join(f"{np.min([r[n] for r in sel]):10.3f}" for n in names)
            print(f"{'mean':7} {label:5} {means}   ({len(sel)} test runs)")
            print(f"{'worst':7} {label:5} {worst}")
    return rows


def bci_baselines(trials, labels, sfreq, train, test):
    """Accuracy of each BCI IV baseline on one fold (see the module's docstring)."""
    from scipy.signal import butter, sosfiltfilt
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    from sblr_rt.model.sblest import SBLEST

    band = sosfiltfilt(butter(4, BASELINE_BAND, "bandpass", fs=sfreq, output="sos"), trials)
    slow = sosfiltfilt(butter(4, 4.0, "lowpass", fs=sfreq, output="sos"), trials)
    step = round(sfreq / 10.0)
    slow = slow[:, :, slow.shape[2] - 1 :: -step][:, :, ::-1].reshape(len(trials), -1)
    models = {name: make() for name, make in baselines().items() if name != "SBLEST"}
    models["SBLEST"] = SBLEST(shrinkage="oas")
    scores = {}
    for name, clf in models.items():
        clf.fit(band[train], labels[train])
        scores[name] = float(np.mean(clf.predict(band[test]) == labels[test]))
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")
    lda.fit(slow[train], labels[train])
    scores["sLDA"] = float(np.mean(lda.predict(slow[test]) == labels[test]))
    return scores


def bci_competition(args):
    """Stratified 5-fold CV on BCI Competition 2003 IV, calibration nested."""
    from sblr_rt.calibration import calibrate
    from sklearn.model_selection import StratifiedKFold

    from sblr_rt.io import read_recording
    from sblr_rt.io.reading import Recording

    if not BCI_IV.exists():
        print(f"{BCI_IV} is absent: BCI Competition 2003 IV skipped")
        return {}
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
        for name, acc in bci_baselines(trials, labels, rec.sfreq, train, test).items():
            accs.setdefault(name, []).append(acc)
        for path in args.paths:
            t0 = time.perf_counter()
            try:
                model = calibrate(subset(train), features=path, n_jobs=args.n_jobs)
            except ValueError as exc:  # power paths need the samples before an epoch
                print(f"  fold: {path} not applicable to epoched trials: {exc}"[:160])
                continue
            seconds = time.perf_counter() - t0
            pred = model.predict(trials[test]) if args.static else model.predict_run(trials[test])
            accs[path].append(float(np.mean(pred == labels[test])))
            print(f"  fold: {path} {accs[path][-1]:.3f} ({seconds:.1f} s, {chosen(model)})")
    print("BCI Competition 2003 IV, stratified 5-fold CV (216 trials):")
    for path, a in accs.items():
        if a:
            print(f"  {path:10} {np.mean(a):.3f} +/- {np.std(a):.3f}")
    return {p: a for p, a in accs.items() if a}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="waveform,bandpower,spectral,covariance,auto")
    parser.add_argument("--people", default=",".join(f"S{i:03d}" for i in range(1, 15)))
    parser.add_argument(
        "--static", action="store_true", help="no run centring on the test run (each trial alone)"
    )
    parser.add_argument("--sensorimotor", action="store_true", help="FC, C and CP channels only")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--bci", action="store_true", help="BCI Competition 2003 IV only")
    parser.add_argument(
        "--eog",
        type=lambda text: text.split(","),
        default=None,
        help="channels regressed out before the spatial stage (e.g. Fp1,Fp2); baselines as is",
    )
    parser.add_argument("--no-report", action="store_true", help="do not write docs/benchmarks")
    args = parser.parse_args()
    args.paths = [p for p in args.paths.split(",") if p]
    args.people = [p for p in args.people.split(",") if p]
    import mne
    from threadpoolctl import threadpool_limits

    mne.set_log_level("ERROR")
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    print(
        f"cross-run accuracy; OpenBLAS limited to 1 thread per process; n_jobs={args.n_jobs}; "
        f"test runs {'static' if args.static else 'run-centred'}; "
        f"{'sensorimotor channels' if args.sensorimotor else 'all channels'}; data from {DATA}"
    )
    if not DATA.exists():
        print(f"{DATA} is absent: nothing to measure (the benchmark needs ../shared/data)")
        return 0
    rows, bci = [], {}
    with threadpool_limits(1):
        if not args.bci:
            rows = cross_run(args)
        if not args.sensorimotor:  # its 28 channels are a montage of their own
            bci = bci_competition(args)
    if not args.no_report and (rows or bci):
        suffix = "_sensorimotor" if args.sensorimotor else "_eog" if args.eog else ""
        write_report("accuracy" + suffix,
                     *report_tables(args, rows, bci), blas="1 thread per process (threadpoolctl)",
                     notes=f"{'Static' if args.static else 'Run-centred'} test runs; "
                     f"{'FC, C and CP channels only' if args.sensorimotor else 'all channels'}; "
                     f"{'EOG regression of ' + ','.join(args.eog) + '; ' if args.eog else ''}"
                     f"{args.n_jobs} workers.")  # fmt: skip
    return 0


def report_tables(args, rows, bci) -> list:
    """The cross-run table (every test run, mean and worst) and the BCI IV table."""
    names = [*args.paths, *BASELINES]
    tables = []
    if rows:
        body = [
            [f"{r['person']} {r['task']}", *(f"{r[n]:.3f}" for n in names), r["chose"]]
            for r in rows
        ]
        for label, keep in (
            ("S002-S014", lambda r: r["person"] != "S001"),
            ("S001", lambda r: r["person"] == "S001"),
        ):
            sel = [r for r in rows if keep(r)]
            if sel:
                body.append(
                    [
                        f"**mean {label}**",
                        *(f"{np.mean([r[n] for r in sel]):.3f}" for n in names),
                        "",
                    ]
                )
                body.append(
                    [f"worst {label}", *(f"{np.min([r[n] for r in sel]):.3f}" for n in names), ""]
                )
        tables.append(Table(["test run", *names, "auto's models"], body,
                            caption="Cross-run accuracy (15 test cues per run)"))  # fmt: skip
    if bci:
        tables.append(Table(["path or baseline", "accuracy (mean ± SD of 5 folds)"],
                            [[p, f"{np.mean(a):.3f} ± {np.std(a):.3f}"] for p, a in bci.items()],
                            caption="BCI Competition 2003 IV, calibration nested"))  # fmt: skip
    return tables


if __name__ == "__main__":
    sys.exit(main())

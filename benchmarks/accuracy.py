"""Cross-validated accuracy on the real data sets in ../shared/data, all models, same folds.

For each data set: outer stratified 5-fold CV (shuffled, seed 0), the same folds for every
model and feature path. Every hyper-parameter is chosen inside the training folds only
(nested CV); scaling (per channel, RMS) is fitted on the training folds only.

Models
  LR        logistic regression on vec(X), unpenalised (the paper's baseline)
  l1-LR     l1 logistic regression on vec(X) (FISTA), alpha by inner 5-fold CV over
            fractions of its largest useful value
  BLR       bilinear logistic regression: rank by inner CV, zero penalties (step 1 of
            the paper's protocol)
  SBLR      sparse bilinear LR, the paper's protocol: rank, then the (mu1, mu2, nu1, nu2)
            grid (``--search paper``: 6 x 5 x 6 x 5; ``fast``: 6 x 6 x 5), inner 5-fold
  CSP+LDA   MNE CSP (4 components, log variance) + shrinkage LDA, on band-passed windows
  TS+LR     pyriemann covariances (OAS) + tangent space + logistic regression

Feature paths: ``waveform`` (resampled waveform, the paper's input), ``bandpower``
(log band power 8-13 and 13-30 Hz in 8 bins; continuous recordings only, since its causal
filters need the samples before the window) and ``bandpass`` (8-30 Hz band-passed
windows at the native rate, the input of CSP and the tangent space; ``raw window`` for
epoched files, unfiltered).

    python benchmarks/accuracy.py [--search paper|fast] [--n-jobs 2] [--quick]
    python benchmarks/accuracy.py --compare --search fast   # waveform vs bandpower
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def _epochs(files, pre, class_map):
    from sblr_rt.calibration.epochs import extract_epochs

    from sblr_rt.io import read_recording

    recs = [read_recording(f) for f in files]
    return extract_epochs(recs, pre, class_map)


def datasets():
    """Yield (name, files, class_map, window, epoched)."""
    bci = DATA / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"
    if bci.exists():
        yield "BCI Comp 2003 IV (216 trials, 28 ch, 100 Hz)", [bci], None, (0.0, 0.5), True
    else:
        print(f"!! {bci} is absent: skipping BCI Competition 2003 IV")
    phys = DATA / "physionet-eegmmidb-S001"
    for runs, what in (((6, 10), "imagined"), ((5, 9), "executed")):
        files = [phys / f"S001R{r:02d}.edf" for r in runs]
        if all(f.exists() for f in files):
            yield (
                f"PhysioNet S001 runs {runs[0]}+{runs[1]}, {what} fists (T1) vs feet (T2)",
                files,
                {"T1": "fists", "T2": "feet"},
                (0.5, 3.5),
                False,
            )
        else:
            print(f"!! PhysioNet runs {runs} absent from {phys}: skipped")


def feature_sets(files, class_map, window, epoched):
    """Return {path: (Z unscaled, y, center)} with identical epochs across paths."""
    from sblr_rt.io import read_recording
    from sblr_rt.preprocessing import Preprocessor

    rec = read_recording(files[0])
    common = dict(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=window[0], tmax=window[1])
    pres = {"waveform": Preprocessor(**common, features="waveform")}
    if not epoched:
        pres["bandpower"] = Preprocessor(**common, features="bandpower")
        n_win = round((window[1] - window[0]) * rec.sfreq)
        pres["bandpass"] = Preprocessor(
            **common, features="waveform", l_freq=8.0, h_freq=30.0, n_times=n_win, scaling=None
        )
    else:
        # Epoched trials have no samples before the window for a causal filter's
        # warm-up: CSP and the tangent space get the unfiltered windows.
        pres["raw window"] = Preprocessor(**common, features="waveform", scaling=None)
    # Same epochs for every path: cut with the longest warm-up.
    n_pad = max(p.n_pad for p in pres.values())
    out = {}
    ref = None
    for name, pre in pres.items():
        ep = _epochs(files, pre, class_map)
        key = [o for o in ep.onsets]
        if ref is None:
            ref = key
        if key != ref:  # a shorter warm-up kept more epochs: keep the common ones
            keep = [i for i, k in enumerate(key) if k in set(ref)]
            ep.Z, ep.y = ep.Z[keep], ep.y[keep]
        out[name] = (ep.Z, ep.y, pre.features == "bandpower", ep.classes)
    del n_pad
    return out


def _metrics(y, score, pred):
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

    return (
        accuracy_score(y, pred),
        balanced_accuracy_score(y, pred),
        roc_auc_score(y, score) if len(np.unique(y)) == 2 else np.nan,
    )


def run_models(Z, y, center, path, folds, args, only=None):
    from sblr_rt.calibration.config import CalibrationConfig
    from sblr_rt.calibration.selection import select

    from sblr_rt.model.baselines import VectorizedLogisticRegression
    from sblr_rt.preprocessing import apply_scaling, fit_scaling

    results = {}

    def add(name, fold_metrics, seconds):
        results[name] = (np.array(fold_metrics), seconds)

    linear = path in ("waveform", "bandpower")
    if linear:
        # Paper models on the scaled features.
        for name in ("LR", "l1-LR", "BLR", "SBLR"):
            if only is not None and name not in only:
                continue
            t0 = time.perf_counter()
            fm = []
            for tr, te in folds:
                off, row, col = fit_scaling(Z[tr], "channel", center=center)
                Xtr = apply_scaling(Z[tr], off, row, col)
                Xte = apply_scaling(Z[te], off, row, col)
                if name == "LR":
                    clf = VectorizedLogisticRegression(alpha=0.0).fit(Xtr, y[tr])
                elif name == "l1-LR":
                    clf = _l1_lr(Xtr, y[tr], args)
                else:
                    cfg = CalibrationConfig(
                        search="none" if name == "BLR" else args.search,
                        cv=5,
                        n_jobs=args.n_jobs,
                        scaling="channel",
                    )
                    clf, _, sc = select(Z[tr], y[tr], config=cfg, center=center)
                    Xte = apply_scaling(Z[te], *sc)
                score = clf.decision_function(Xte)
                fm.append(_metrics(y[te], score, (score > 0).astype(int)))
            add(name, fm, time.perf_counter() - t0)
    if path in ("bandpass", "raw window"):
        from mne.decoding import CSP
        from pyriemann.estimation import Covariances
        from pyriemann.tangentspace import TangentSpace
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        builders = {
            "CSP+LDA": lambda: make_pipeline(
                CSP(n_components=4, log=True),
                LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
            ),
            "TS+LR": lambda: make_pipeline(
                Covariances(estimator="oas"), TangentSpace(), LogisticRegression(max_iter=1000)
            ),
        }
        for name, build in builders.items():
            t0 = time.perf_counter()
            fm = []
            for tr, te in folds:
                clf = build().fit(Z[tr], y[tr])
                score = clf.decision_function(Z[te])
                fm.append(_metrics(y[te], score, clf.predict(Z[te])))
            add(name, fm, time.perf_counter() - t0)
    return results


def _l1_lr(X, y, args):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from sblr_rt.model.baselines import SparseLogisticRegression

    Xf = X.reshape(len(X), -1)
    alpha_max = np.max(np.abs(Xf.T @ (y - y.mean()))) / len(y)
    grid = {"alpha": [alpha_max * f for f in (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)]}
    search = GridSearchCV(
        SparseLogisticRegression(max_iter=2000, tol=1e-5),
        grid,
        cv=StratifiedKFold(5, shuffle=True, random_state=1),
        n_jobs=args.n_jobs,
    )
    return search.fit(X, y).best_estimator_


def compare_paths(args):
    """Waveform vs bandpower on the imagery runs, 10 x repeated 5-fold (less noisy)."""
    from sklearn.model_selection import RepeatedStratifiedKFold

    phys = DATA / "physionet-eegmmidb-S001"
    files = [phys / "S001R06.edf", phys / "S001R10.edf"]
    if not all(f.exists() for f in files):
        print(f"!! PhysioNet runs 6, 10 absent from {phys}")
        return
    feats = feature_sets(files, {"T1": "fists", "T2": "feet"}, (0.5, 3.5), False)
    y = feats["waveform"][1]
    folds = list(RepeatedStratifiedKFold(n_splits=5, n_repeats=10, random_state=0).split(y, y))
    print(
        f"== waveform vs bandpower, PhysioNet S001 runs 6+10 (imagined fists vs feet), "
        f"{len(y)} epochs, 10 x repeated stratified 5-fold (LR, BLR, CSP+LDA, TS+LR)"
    )
    for path, (Z, yy, center, _) in feats.items():
        res = run_models(Z, yy, center, path, folds, args, only=("LR", "BLR"))
        for model, (m, secs) in res.items():
            mean, sd = m.mean(axis=0), m.std(axis=0)
            print(
                f"| {path} | {model} | {mean[0]:.3f} ± {sd[0]:.3f} | {mean[2]:.3f} ± "
                f"{sd[2]:.3f} | {secs:.0f} s |",
                flush=True,
            )


def main():
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_info

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--search", default="paper", choices=("paper", "fast"))
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="PhysioNet imagery runs only")
    p.add_argument(
        "--compare",
        action="store_true",
        help="only waveform vs bandpower on PhysioNet runs 6+10, 10 x repeated 5-fold",
    )
    args = p.parse_args()
    warnings.simplefilter("ignore")
    os.environ["PYTHONWARNINGS"] = "ignore"  # joblib workers too
    import mne

    mne.set_log_level("WARNING")
    if not DATA.exists():
        print(f"!! {DATA} is absent: no real data to benchmark (see the README).")
        return 1
    blas = [
        f"{i.get('internal_api')} threads={i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    print(f"BLAS: {'; '.join(blas)}; SBLR search={args.search}, n_jobs={args.n_jobs}")
    if args.compare:
        compare_paths(args)
        return 0
    print("outer stratified 5-fold CV (seed 0), same folds for every model; mean +/- sd\n")
    rows = []
    for name, files, class_map, window, epoched in datasets():
        if args.quick and "imagined" not in name:
            continue
        t0 = time.perf_counter()
        feats = feature_sets(files, class_map, window, epoched)
        y = next(iter(feats.values()))[1]
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(y, y))
        print(f"== {name}: {len(y)} epochs {np.bincount(y).tolist()}, window {window} s")
        for path, (Z, yy, center, _) in feats.items():
            assert np.array_equal(yy, y)
            res = run_models(Z, y, center, path, folds, args)
            for model, (m, secs) in res.items():
                mean, sd = m.mean(axis=0), m.std(axis=0)
                line = (
                    f"| {name.split(',')[0]} | {path} | {model} | "
                    f"{mean[0]:.3f} ± {sd[0]:.3f} | {mean[1]:.3f} ± {sd[1]:.3f} | "
                    f"{mean[2]:.3f} ± {sd[2]:.3f} | {secs:.0f} s |"
                )
                rows.append(line)
                print(line, flush=True)
        print(f"   ({time.perf_counter() - t0:.0f} s)\n")
    print("| data set | features | model | accuracy | balanced accuracy | ROC-AUC | time |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

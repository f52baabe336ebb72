"""MOABB: the SBLR pipeline across many people, on any MOABB motor-imagery data set.

MOABB (Mother of All BCI Benchmarks) loads the data set (downloading it into MNE_DATA on
first use), cuts the trials with its paradigm (band-pass, window, resampling) and runs the
evaluation: within-session k-fold CV, or cross-session (train on the other sessions). Our
pipeline, ``SBLR``, standardises each channel and selects rank and penalties on the
training trials only, with the calibration's own selection
(:func:`sblr_rt.calibration.select`, nested inside MOABB's folds); CSP + LDA runs beside it
on the same trials.

    python benchmarks/moabb.py --dataset BNCI2014_001 [--subjects 1,2,3]
        [--evaluation within|cross-session] [--fmin 8 --fmax 30] [--resample 100]
        [--search fast|none] [--results moabb-results] [--n-jobs 1]

``--dataset`` is any class name in ``moabb.datasets`` (``FakeDataset`` generates its data,
no download). The scores are per subject and session; the summary is the mean per pipeline.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# This file is called moabb.py: run as a script, its folder comes first on sys.path and
# "import moabb" would import this file again instead of the package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.preprocessing import LabelEncoder  # noqa: E402


class SelectedSBLR(ClassifierMixin, BaseEstimator):
    """Per-channel scaling and the calibration's model selection, as one estimator.

    Parameters
    ----------
    search : {"fast", "paper", "none"}
        The penalty search of :class:`sblr_rt.calibration.CalibrationConfig`.
    ranks : tuple of int
        Ranks tried.
    cv : int
        Inner folds of the selection.
    n_jobs : int
        Workers of the selection (joblib).
    """

    def __init__(self, search="fast", ranks=(1, 2), cv=5, n_jobs=1):
        self.search = search
        self.ranks = ranks
        self.cv = cv
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        """Declare 3-D input support."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags

    def fit(self, X, y):
        """Select and fit on epochs X (n_epochs, n_channels, n_times)."""
        from sblr_rt.calibration import CalibrationConfig, select

        X = np.asarray(X, dtype=np.float64)
        self._le = LabelEncoder().fit(y)
        self.classes_ = self._le.classes_
        config = CalibrationConfig(
            features="waveform",
            search=self.search,
            ranks=tuple(self.ranks),
            cv=self.cv,
            n_jobs=self.n_jobs,
        )
        self.estimator_, self.report_, self.scaling_ = select(
            X, self._le.transform(y), config=config, center=False
        )
        return self

    def _features(self, X):
        from sblr_rt.preprocessing import apply_scaling

        return apply_scaling(np.asarray(X, dtype=np.float64), *self.scaling_)

    def decision_function(self, X):
        """Scores of the selected model (n_epochs,) or (n_epochs, n_classes)."""
        return self.estimator_.decision_function(self._features(X))

    def predict_proba(self, X):
        """Class probabilities (n_epochs, n_classes)."""
        return self.estimator_.predict_proba(self._features(X))

    def predict(self, X):
        """Predicted labels (n_epochs,), in the labels given to fit."""
        codes = self.estimator_.predict(self._features(X))
        return self._le.inverse_transform(codes)


def pipelines(search="fast", ranks=(1, 2), cv=5, n_jobs=1) -> dict:
    """Return MOABB's pipelines: ``SBLR`` and ``CSP+LDA``."""
    from mne.decoding import CSP
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.pipeline import make_pipeline

    return {
        "SBLR": make_pipeline(SelectedSBLR(search=search, ranks=ranks, cv=cv, n_jobs=n_jobs)),
        "CSP+LDA": make_pipeline(
            CSP(n_components=min(4, 2 * max(ranks))),
            LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        ),
    }


def evaluate(
    dataset,
    *,
    evaluation="within",
    fmin=8.0,
    fmax=30.0,
    resample=100.0,
    search="fast",
    ranks=(1, 2),
    results=None,
    n_jobs=1,
):
    """Run a MOABB evaluation of the pipelines on one data set.

    Parameters
    ----------
    dataset : moabb.datasets.base.BaseDataset
        A motor-imagery data set (two classes or more).
    evaluation : {"within", "cross-session"}
        MOABB's ``WithinSessionEvaluation`` or ``CrossSessionEvaluation``.
    fmin, fmax : float
        The paradigm's band-pass in Hz.
    resample : float | None
        The paradigm's sampling rate in Hz (None: the data set's).
    search, ranks
        The selection of :class:`SelectedSBLR`.
    results : path-like | None
        Folder of MOABB's result cache (None: MOABB's default); every run recomputes.
    n_jobs : int
        Workers of MOABB's evaluation.

    Returns
    -------
    pandas.DataFrame
        One row per subject, session and pipeline, with MOABB's ``score`` (ROC AUC for
        two classes, accuracy for more).
    """
    from moabb.evaluations import CrossSessionEvaluation, WithinSessionEvaluation
    from moabb.paradigms import LeftRightImagery, MotorImagery

    n_classes = len(dataset.event_id)
    if set(dataset.event_id) == {"left_hand", "right_hand"}:
        paradigm = LeftRightImagery(fmin=fmin, fmax=fmax, resample=resample)
    else:
        paradigm = MotorImagery(n_classes=n_classes, fmin=fmin, fmax=fmax, resample=resample)
    kind = {"within": WithinSessionEvaluation, "cross-session": CrossSessionEvaluation}
    ev = kind[evaluation](
        paradigm=paradigm,
        datasets=[dataset],
        overwrite=True,
        hdf5_path=None if results is None else str(results),
        n_jobs=n_jobs,
        random_state=0,
    )
    return ev.process(pipelines(search=search, ranks=ranks))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="BNCI2014_001")
    parser.add_argument("--subjects", default="", help="comma-separated (default: all)")
    parser.add_argument("--evaluation", choices=("within", "cross-session"), default="within")
    parser.add_argument("--fmin", type=float, default=8.0)
    parser.add_argument("--fmax", type=float, default=30.0)
    parser.add_argument("--resample", type=float, default=100.0)
    parser.add_argument("--search", choices=("fast", "paper", "none"), default="fast")
    parser.add_argument("--results", default=None, help="MOABB's result folder")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args(argv)
    import moabb
    import moabb.datasets

    moabb.set_log_level("ERROR")
    dataset = getattr(moabb.datasets, args.dataset)()
    if args.subjects:
        dataset.subject_list = [int(s) for s in args.subjects.split(",")]
    scores = evaluate(
        dataset,
        evaluation=args.evaluation,
        fmin=args.fmin,
        fmax=args.fmax,
        resample=args.resample,
        search=args.search,
        results=args.results,
        n_jobs=args.n_jobs,
    )
    cols = ["dataset", "subject", "session", "pipeline", "score"]
    print(scores[cols].to_string(index=False))
    print(scores.groupby("pipeline")["score"].agg(["mean", "std", "count"]).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())

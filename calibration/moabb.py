"""MOABB: the calibration's selected SBLR as a MOABB pipeline, and the evaluation recipe.

`MOABB <https://moabb.neurotechx.com>`_ (Mother of All BCI Benchmarks) loads a data set,
cuts its trials with a paradigm (band-pass, window, resampling) and evaluates pipelines:
within-session k-fold CV or cross-session. :class:`SelectedSBLR` is the pipeline: the
calibration's per-channel scaling and its selection of rank and penalties
(:func:`sblr_rt.calibration.select`), nested inside MOABB's folds, on the waveform
MOABB cuts (the trials in volts, as MOABB gives them). This module imports MOABB only in
:func:`evaluate`: the pipeline itself needs scikit-learn alone.

Three ways to run it:

- from Python, :func:`evaluate` (``SBLR`` beside CSP + LDA on one data set);
- with MOABB's own benchmark, from a pipeline file (:data:`PIPELINE_YAML`, written by
  :func:`write_pipeline_file`)::

      from moabb import benchmark
      from sblr_rt.calibration.moabb import write_pipeline_file

      write_pipeline_file("pipelines")
      results = benchmark(pipelines="pipelines", evaluations=["WithinSession"],
                          paradigms=["LeftRightImagery"], include_datasets=["BNCI2014_001"])

- from the repository, ``python benchmarks/moabb.py --dataset BNCI2014_001``.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = np.repeat(["left_hand", "right_hand"], 20)
>>> X = rng.standard_normal((40, 3, 25)) * 1e-5  # volts, as MOABB gives the trials
>>> X[y == "right_hand", 0, 5:15] += 1e-5
>>> clf = SelectedSBLR(search="none", ranks=(1,), cv=4).fit(X, y)
>>> clf.score(X, y) > 0.8
True
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder

__all__ = ["PIPELINE_YAML", "SelectedSBLR", "evaluate", "pipelines", "write_pipeline_file"]

#: MOABB's pipeline file of :class:`SelectedSBLR` (``moabb.benchmark(pipelines=folder)``
#: reads every ``.yml`` of a folder).
PIPELINE_YAML = """\
name: SBLR
paradigms:
  - LeftRightImagery
  - MotorImagery
pipeline:
  - name: SelectedSBLR
    from: sblr_rt.calibration.moabb
    parameters:
      search: fast
      ranks: [1, 2]
      cv: 5
      n_jobs: 1
"""


class SelectedSBLR(ClassifierMixin, BaseEstimator):
    """Per-channel scaling and the calibration's model selection, as one estimator.

    ``fit`` scales each channel to unit RMS over the training trials and selects rank and
    penalties by the calibration's cross-validation on them, then refits the best point
    on all of them (:func:`sblr_rt.calibration.select`, waveform features); prediction
    applies the same scaling.

    Parameters
    ----------
    search : {"fast", "paper", "none"}
        The penalty search of :class:`~sblr_rt.calibration.CalibrationConfig`.
    ranks : sequence of int
        Ranks tried.
    cv : int
        Inner folds of the selection.
    n_jobs : int
        Workers of the selection (joblib).
    class_weight : {"balanced", None}
        As in :class:`~sblr_rt.calibration.CalibrationConfig`.

    Attributes
    ----------
    classes_ : ndarray, shape (n_classes,)
        The labels given to ``fit``.
    estimator_ : SparseBilinearLogisticRegression
        The selected model, on the scaled trials.
    report_ : dict
        The selection's report (grid scores, the point chosen).
    scaling_ : tuple of ndarray
        Row offset, row scale and column scale (:func:`sblr_rt.preprocessing.apply_scaling`).
    """

    def __init__(self, search="fast", ranks=(1, 2), cv=5, n_jobs=1, class_weight=None):
        self.search = search
        self.ranks = ranks
        self.cv = cv
        self.n_jobs = n_jobs
        self.class_weight = class_weight

    def __sklearn_tags__(self):
        """Declare 3-D input support."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags

    def fit(self, X, y):
        """Select and fit on trials.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Trials, in any unit.
        y : array-like, shape (n_epochs,)
            Labels.

        Returns
        -------
        self : SelectedSBLR
        """
        from sblr_rt.calibration import CalibrationConfig, select

        X = np.asarray(X, dtype=np.float64)
        self._le = LabelEncoder().fit(y)
        self.classes_ = self._le.classes_
        config = CalibrationConfig(
            features="waveform",
            search=self.search,
            ranks=tuple(int(r) for r in self.ranks),
            cv=self.cv,
            n_jobs=self.n_jobs,
            class_weight=self.class_weight,
        )
        self.estimator_, self.report_, self.scaling_ = select(
            X, self._le.transform(y), config=config, center=False
        )
        return self

    def _features(self, X):
        from sblr_rt.preprocessing import apply_scaling

        return apply_scaling(np.asarray(X, dtype=np.float64), *self.scaling_)

    def decision_function(self, X):
        """Return the scores of the selected model, (n_epochs,) or (n_epochs, n_classes)."""
        return self.estimator_.decision_function(self._features(X))

    def predict_proba(self, X):
        """Return the class probabilities, (n_epochs, n_classes)."""
        return self.estimator_.predict_proba(self._features(X))

    def predict(self, X):
        """Return the predicted labels (n_epochs,), in the labels given to ``fit``."""
        codes = self.estimator_.predict(self._features(X))
        return self._le.inverse_transform(codes)


def pipelines(search="fast", ranks=(1, 2), cv=5, n_jobs=1) -> dict:
    """Return MOABB's pipelines: ``SBLR`` and, beside it, ``CSP+LDA``.

    Parameters
    ----------
    search, ranks, cv, n_jobs
        Of :class:`SelectedSBLR`.

    Returns
    -------
    pipelines : dict of str to sklearn.pipeline.Pipeline
    """
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


def write_pipeline_file(folder) -> Path:
    """Write MOABB's pipeline file of :class:`SelectedSBLR` (``SBLR.yml``) into ``folder``.

    Parameters
    ----------
    folder : path-like
        Created if needed; ``moabb.benchmark(pipelines=folder)`` reads it.

    Returns
    -------
    path : Path
        The file written.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SBLR.yml"
    path.write_text(PIPELINE_YAML, encoding="utf-8")
    return path


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
    """Run a MOABB evaluation of :func:`pipelines` on one data set.

    Parameters
    ----------
    dataset : moabb.datasets.base.BaseDataset
        A motor-imagery data set (two classes or more; ``moabb.datasets.fake.FakeDataset``
        needs no download).
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

"""One model: a fitted preprocessing and one sparse bilinear estimator, on raw epochs.

The model holds both as one fitted :class:`sklearn.pipeline.Pipeline` (:attr:`SingleModel.
pipeline`); its offline transform and scores run through it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
from sklearn.pipeline import Pipeline

from sblr_rt.bci_model.base import BCIModel
from sblr_rt.model.prior_pool import PriorPool
from sblr_rt.model.run_centring import RunCentring
from sblr_rt.montage import make_info
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.preprocessing.spatial import spatial_label
from sblr_rt.preprocessing.transformers import fitted_pipeline

__all__ = ["SingleModel"]


class SingleModel(BCIModel):
    """Preprocessing, estimator and metadata as one classifier of raw epochs.

    Parameters
    ----------
    preprocessor : Preprocessor
        Fitted preprocessing.
    estimator : SparseBilinearLogisticRegression
        Fitted on ``preprocessor``'s output with labels ``0 .. n_classes - 1`` (the
        indices into ``classes``).
    classes : list of str
        The user's class labels; ``classes[k]`` is estimator label ``k``.
    metadata : dict | None
        JSON-serialisable information: hyper-parameters tried and chosen with their CV
        scores, epoch counts, training accuracy, objective trace, software version, etc.
    run_centring : RunCentring | None
        The calibration reference of a model trained on run-centred features
        (:mod:`sblr_rt.model.run_centring`): every score is measured from it, and
        :meth:`decision_function_run` re-estimates a new run's mean as it goes. None: the
        estimator's scores as they are.
    pool : PriorPool | None
        A prior's run-centred training features, which a person's labelled trials join with
        a weight (:mod:`sblr_rt.calibration.prior`); None for a person's own model.

    Attributes
    ----------
    pipeline : Pipeline
        The preprocessing and the estimator as one fitted scikit-learn pipeline.
    preprocessor : Preprocessor
        The design its first three steps read.
    estimator : SparseBilinearLogisticRegression
        Its last step.
    members : tuple
        ``(self,)``: a single model is its own only member, of weight 1.
    """

    form = "single"

    def __init__(
        self,
        *,
        preprocessor: Preprocessor,
        estimator,
        classes: Sequence[str],
        metadata: dict | None = None,
        run_centring: RunCentring | None = None,
        pool: PriorPool | None = None,
    ):
        if not isinstance(preprocessor, Preprocessor):
            raise TypeError(
                f"'preprocessor' must be a Preprocessor, got {type(preprocessor).__name__}"
            )
        if not preprocessor.is_fitted:
            raise RuntimeError("'preprocessor' is not fitted: call Preprocessor.fit() first")
        if not hasattr(estimator, "classes_"):
            raise RuntimeError("'estimator' is not fitted: call its fit() first")
        classes = [str(c) for c in classes]
        n_est = len(estimator.classes_)
        if len(classes) != n_est or len(set(classes)) != len(classes):
            raise ValueError(
                f"'classes' must be {n_est} distinct labels (one per estimator class), "
                f"got {classes}"
            )
        if not np.array_equal(np.asarray(estimator.classes_), np.arange(n_est)):
            raise ValueError(
                "the estimator must be fitted on labels 0..n_classes-1 (indices into "
                f"'classes'), got classes_={np.asarray(estimator.classes_).tolist()}"
            )
        if run_centring is not None:
            if not isinstance(run_centring, RunCentring):
                raise TypeError(
                    f"'run_centring' must be a RunCentring or None, got "
                    f"{type(run_centring).__name__}"
                )
            n_out = np.asarray(estimator.intercept_).size
            if run_centring.reference_score.size != n_out:
                raise ValueError(
                    f"'run_centring' must hold one score per model output ({n_out}), got "
                    f"{run_centring.reference_score.size}"
                )
        if pool is not None and not isinstance(pool, PriorPool):
            raise TypeError(f"'pool' must be a PriorPool or None, got {type(pool).__name__}")
        self._pipeline = fitted_pipeline(preprocessor, estimator)
        self.classes = classes
        self.metadata = dict(metadata or {})
        self.run_centring = run_centring
        self.pool = pool

    # ------------------------------------------------------------------ the pipeline

    @property
    def pipeline(self) -> Pipeline:
        """The preprocessing and the estimator as one fitted :class:`~sklearn.pipeline.Pipeline`.

        Steps ``filter`` (:class:`~sblr_rt.preprocessing.FilterBank`), ``spatial``,
        ``features``, ``scale`` (the preprocessor's fitted scaling) and ``estimator``, built
        by :func:`~sblr_rt.preprocessing.transformers.fitted_pipeline` from what the model
        file stores. :meth:`transform` is ``pipeline[:-1].transform``, and every score
        (:meth:`decision_function`, :meth:`predict_proba`, :meth:`predict`) starts from
        ``pipeline.decision_function``: equal bit for bit to the preprocessor's
        :meth:`~sblr_rt.preprocessing.Preprocessor.transform` and the estimator's scores.

        ``sklearn.base.clone(model.pipeline)`` is the same design unfitted; its ``fit(epochs,
        y)`` learns the scaling and the estimator on raw epochs. On the epochs of a
        calibration without run centring and without a penalty search it gives the
        calibrated model's scores; after a search, calibration's final fit replays the
        search's warm-started path, which a fit from the start matches only to the solver's
        tolerance.

        Run centring (:attr:`run_centring`) is not a step: calibration centres each
        calibration run on that run's own mean, which needs the run of every epoch, and a
        new run is measured from a running mean of its trials in time order
        (:meth:`decision_function_run`, the online loop). Neither is a transform of epochs
        one by one, so it acts on the pipeline's scores: :meth:`decision_function`
        subtracts the calibration reference's score from them.
        """
        return self._pipeline

    @property
    def preprocessor(self) -> Preprocessor:
        """The fitted preprocessing the pipeline's first steps read (:attr:`pipeline`)."""
        return self._pipeline.named_steps["filter"].design

    @property
    def estimator(self):
        """The fitted estimator, the pipeline's last step (:attr:`pipeline`)."""
        return self._pipeline[-1]

    # ------------------------------------------------------------------ the form

    @property
    def members(self) -> tuple:
        """``(self,)``."""
        return (self,)

    @property
    def member_weights(self) -> np.ndarray:
        """``[1.0]``."""
        return np.ones(1)

    @property
    def member_labels(self) -> tuple[str, ...]:
        """``("model",)``."""
        return ("model",)

    def with_members(self, members: Sequence[SingleModel], metadata: dict | None = None):
        """Return the one new member, its metadata updated with ``metadata``."""
        if len(members) != 1 or not isinstance(members[0], SingleModel):
            raise ValueError(
                f"'members' must be one SingleModel (a single model's only member), got "
                f"{[type(m).__name__ for m in members]}"
            )
        (new,) = members
        return SingleModel(
            preprocessor=new.preprocessor,
            estimator=new.estimator,
            classes=new.classes,
            metadata={**new.metadata, **(metadata or {})},
            run_centring=new.run_centring,
            pool=new.pool,
        )

    @property
    def features(self) -> str:
        """The feature path of :attr:`preprocessor`."""
        return self.preprocessor.features

    @property
    def n_pad(self) -> int:
        """Filter warm-up samples before the window."""
        return self.preprocessor.n_pad

    @property
    def name(self) -> str:
        """How reports name this model: its calibration candidate, else ``features/spatial``."""
        stored = self.metadata.get("name")
        if stored:
            return str(stored)
        return f"{self.features}/{spatial_label(self.preprocessor.spatial)}"

    @property
    def objective(self):
        """The solver's objective trace (one per class for one-versus-rest), or None."""
        return self.metadata.get("objective")

    # ------------------------------------------------------------------ scores

    def transform(self, epochs: np.ndarray) -> np.ndarray:
        """Return the estimator's input ``X`` (n_epochs, n_rows, n_times) of raw ``epochs``.

        ``epochs`` (n_epochs, n_channels, n_times_raw) are in the recording's channel
        order, units and rate, with ``n_pad`` samples of filter warm-up per epoch (a longer
        epoch is read from its end).
        """
        return self._pipeline[:-1].transform(self._window(epochs))

    def _window(self, epochs) -> np.ndarray:
        """Return the last ``n_times_raw`` samples of each raw epoch."""
        epochs = np.asarray(epochs)
        return epochs[..., epochs.shape[-1] - self.preprocessor.n_times_raw :]

    def _from_reference(self, scores: np.ndarray) -> np.ndarray:
        """Return the estimator's ``scores`` measured from the run-centring reference."""
        if self.run_centring is None:
            return scores
        ref = self.run_centring.reference_score
        return scores - (ref[0] if scores.ndim == 1 else ref)

    def decision_function_features(self, X: np.ndarray) -> np.ndarray:
        """Scores from already preprocessed input (:meth:`transform`'s output)."""
        return self._from_reference(self.estimator.decision_function(X))

    def member_scores(self, epochs: np.ndarray) -> np.ndarray:
        """Return this model's scores of raw ``epochs`` as its only member's, shape (1, ...).

        ``pipeline.decision_function`` of the epochs' last ``n_times_raw`` samples, measured
        from the run-centring reference when the model has one.
        """
        return self._from_reference(self._pipeline.decision_function(self._window(epochs)))[None]

    @property
    def intercept(self) -> np.ndarray:
        """The estimator's intercept as the model scores it (run centring's reference off).

        ``tr(U^T X V) + intercept`` is :meth:`decision_function`, shape as the estimator's
        ``intercept_``.
        """
        b = np.asarray(self.estimator.intercept_, dtype=np.float64)
        if self.run_centring is None:
            return b
        return b - self.run_centring.reference_score.reshape(b.shape)

    def native_factors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fold the waveform path into factors on raw padded epochs.

        ``score = tr(U_n^T X_raw V_n) + b`` for a raw epoch ``X_raw`` of shape
        ``(n_channels, n_times_raw)``, equal to :meth:`decision_function` to floating
        point tolerance (filter, baseline, resampling and scaling are all folded).

        Returns
        -------
        U_n : ndarray, shape (n_channels, rank) or (n_classes, n_channels, rank)
        V_n : ndarray, shape (n_times_raw, rank) or (n_classes, n_times_raw, rank)
        b : ndarray, shape (1,) or (n_classes,)
        """
        S, T = self.preprocessor.linear_operators(include_filter=True)
        U, V = self.estimator.spatial_, self.estimator.temporal_
        return S.T @ U, T @ V, self.intercept

    # ------------------------------------------------------------------ on the scalp

    @property
    def info(self):
        """An :class:`mne.Info` of the model's channels, placed on the scalp.

        Its channels are the picked channels in the order of the estimator's rows, at the
        raw sampling rate, so a component of U draws as a scalp map without more code::

            mne.viz.plot_topomap(model.estimator.spatial_[:, 0], model.info)

        (``patterns_[0]`` for the Haufe pattern). On the band-power path the rows are
        band-major, ``n_bands`` blocks of these channels: draw
        ``spatial_.reshape(n_bands, n_channels, rank)[band, :, k]``. Channels without a
        known position are left unplaced (see :func:`sblr_rt.montage.make_info`).
        """
        return make_info(self.preprocessor.pick_names, self.sfreq)

    def scalp_maps(self, component: int = 0, *, patterns: bool = False, klass: int = 0):
        """Return component ``component`` of U as scalp maps over :attr:`info`'s channels.

        One map on the waveform and spectral paths (rows are channels); one per band on
        the band-power path (rows are band-major blocks of channels), in the order of
        ``preprocessor.freq_bands``. So, whatever the path::

            for values in model.scalp_maps(0):
                mne.viz.plot_topomap(values, model.info)

        Parameters
        ----------
        component : int
            Column of U (``0 .. rank - 1``).
        patterns : bool
            The Haufe activation patterns (``spatial_patterns_``) instead of the filters.
        klass : int
            With three or more classes, the class whose factor to draw.

        Returns
        -------
        maps : ndarray, shape (n_maps, n_channels)
        """
        est = self.estimator
        U = est.spatial_patterns_ if patterns else est.spatial_
        if U is None:
            raise ValueError("this model has no spatial patterns; use patterns=False")
        U = np.asarray(U)
        if U.ndim == 3:
            U = U[klass]
        if not 0 <= component < U.shape[1]:
            raise ValueError(
                f"'component' must lie in [0, {U.shape[1] - 1}] (the rank), got {component}"
            )
        n_channels = len(self.preprocessor.pick_names)
        return U[:, component].reshape(-1, n_channels)

    # ------------------------------------------------------------------ adapting

    def for_channels(self, ch_names: Sequence[str]) -> SingleModel:
        """Return a copy whose preprocessing picks its channels from ``ch_names``."""
        return SingleModel(
            preprocessor=self.preprocessor.for_channels(ch_names),
            estimator=self.estimator,
            classes=self.classes,
            metadata=copy.deepcopy(self.metadata),
            run_centring=self.run_centring,
            pool=self.pool,
        )

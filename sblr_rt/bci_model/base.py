"""The model concept: what every model answers, whether one model or a weighted ensemble."""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

from sblr_rt.bci_model.describe import summary_lines
from sblr_rt.bci_model.metadata import ModelRecord
from sblr_rt.bci_model.regions import weight_regions
from sblr_rt.bci_model.verdict import model_verdict
from sblr_rt.model.link import ProbabilityCalibration, proba_from_scores
from sblr_rt.units import invalid_samples, max_abs_sample

__all__ = ["BCIModel"]


class BCIModel(abc.ABC):
    """A classifier of raw epochs: the concept every calibration returns.

    It has two forms with one interface: :class:`~sblr_rt.bci_model.SingleModel` (one
    preprocessing and one estimator) and :class:`~sblr_rt.bci_model.EnsembleModel` (the
    weighted mean score of single models). Both read raw epochs of the same channels, rate
    and window, score them (statically, or centred on the run as it goes), give
    probabilities and labels, and describe themselves per member: a single model is an
    ensemble of one member of weight 1, so every figure that is per member (:attr:`members`,
    :attr:`member_weights`, training accuracy, objective, region share, rank) reads the same
    way in both forms.

    Attributes
    ----------
    classes : list of str
        The user's class labels; column ``k`` of the probabilities is ``classes[k]``.
    metadata : dict
        JSON-serialisable calibration information (selection report, epoch counts...),
        as the model file stores it; read it through :attr:`record`.
    run_centring : RunCentring | None
        The calibration reference and the running-mean rule of a run-centred model
        (:mod:`sblr_rt.model.run_centring`); None: scores as they are.
    """

    #: Whether the score is the weighted mean of two or more members. Other layers do not
    #: read it: they ask the model (:attr:`members`, :attr:`member_labels`, :attr:`form`,
    #: :meth:`with_members`) or dispatch on its class.
    is_ensemble: bool = False

    #: The form's name, as reports say it: ``"single"`` or ``"ensemble"``.
    form: str

    classes: list[str]
    metadata: dict

    # ------------------------------------------------------------------ the two forms

    @property
    @abc.abstractmethod
    def members(self) -> tuple:
        """The single models whose weighted scores make the score (a single model: itself)."""

    @property
    @abc.abstractmethod
    def member_weights(self) -> np.ndarray:
        """Each member's weight in the score, non-negative, summing to 1."""

    @property
    @abc.abstractmethod
    def features(self) -> str:
        """The feature path (``"ensemble"`` for an ensemble)."""

    @property
    @abc.abstractmethod
    def n_pad(self) -> int:
        """Filter warm-up samples before the window (an ensemble: its members' longest)."""

    @property
    @abc.abstractmethod
    def member_labels(self) -> tuple[str, ...]:
        """How reports name each member, in member order (a single model: ``"model"``)."""

    @abc.abstractmethod
    def with_members(self, members: Sequence, metadata: dict | None = None) -> BCIModel:
        """Return a model of the same form built from new members (e.g. refitted ones).

        Parameters
        ----------
        members : sequence of SingleModel
            One new single model per member of this one, in :attr:`members` order, each
            with its own metadata.
        metadata : dict | None
            The whole model's metadata. A single model is its own member: the new member's
            metadata, updated with ``metadata``. An ensemble: its metadata (None: empty),
            with this ensemble's weights.

        Returns
        -------
        model : BCIModel
            Of this model's class.
        """

    @abc.abstractmethod
    def member_scores(self, epochs: np.ndarray) -> np.ndarray:
        """Every member's score of raw ``epochs``, each from its own run-centring reference.

        Parameters
        ----------
        epochs : ndarray, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in the recording's channel order, units and rate, ``n_pad`` samples
            of filter warm-up first.

        Returns
        -------
        scores : ndarray, shape (n_members, n_epochs) or (n_members, n_epochs, n_classes)
        """

    @abc.abstractmethod
    def for_channels(self, ch_names: Sequence[str]) -> BCIModel:
        """Return a copy reading raw data with another channel order (or a superset).

        Parameters
        ----------
        ch_names : list of str
            Channel names of the new source; every model channel must be among them.

        Returns
        -------
        model : BCIModel
            The same form, factors and metadata; only the channel pick changes.
        """

    # ------------------------------------------------------------------ what it reads

    @property
    def ch_names(self) -> list[str]:
        """Raw channels, in the source's order."""
        return list(self.members[0].preprocessor.ch_names)

    @property
    def sfreq(self) -> float:
        """Raw sampling rate (Hz)."""
        return float(self.members[0].preprocessor.sfreq)

    @property
    def tmin(self) -> float:
        """Window start relative to the cue (s)."""
        return float(self.members[0].preprocessor.tmin)

    @property
    def tmax(self) -> float:
        """Window end relative to the cue (s)."""
        return float(self.members[0].preprocessor.tmax)

    @property
    def n_window(self) -> int:
        """Samples of the window."""
        return self.members[0].preprocessor.n_window

    @property
    def n_times_raw(self) -> int:
        """Samples of a raw epoch: ``n_pad`` of warm-up, then the window."""
        return self.n_pad + self.n_window

    @property
    def pick_indices(self) -> np.ndarray:
        """Indices of the raw channels any member reads, ascending."""
        picks = [np.asarray(m.preprocessor.pick_indices, dtype=int) for m in self.members]
        return np.unique(np.concatenate(picks))

    @property
    def picks(self) -> list[str]:
        """Names of the raw channels any member reads, in the raw order."""
        return [self.ch_names[i] for i in self.pick_indices]

    @property
    def probability(self) -> ProbabilityCalibration | None:
        """How much its scores are to be believed (``metadata["probability"]``), or None.

        A :class:`~sblr_rt.model.link.ProbabilityCalibration` fitted on trials the model
        did not train on (:mod:`sblr_rt.calibration.probability`): probabilities of the
        trial window use its sharpness at ``tmax``, the online evidence of a window ending
        earlier its sharpness there. None (a model without it, or a file written before
        it): the raw probabilities.
        """
        data = (self.metadata or {}).get("probability")
        return None if data is None else ProbabilityCalibration.from_dict(data)

    @property
    def multi_class(self) -> str:
        """How scores become probabilities: ``"ovr"`` or ``"multinomial"``."""
        return getattr(self.members[0].estimator, "multi_class", "ovr")

    # ------------------------------------------------------------------ scores

    def decision_function(self, epochs: np.ndarray) -> np.ndarray:
        """Return the scores of raw ``epochs``: the members' scores, weighted.

        Shape (n_epochs,) for two classes, positive meaning ``classes[1]``; else
        (n_epochs, n_classes). A run-centred model's scores are measured from its
        calibration reference; each epoch is scored alone.
        """
        return np.tensordot(self.member_weights, self.member_scores(epochs), axes=1)

    def decision_function_run(self, epochs: np.ndarray) -> np.ndarray:
        """Scores of one run's trials in their order, with unsupervised run centring.

        Each trial is scored after the run's running mean has taken it in
        (:class:`~sblr_rt.model.run_centring.RunCentringState`), exactly as the online
        loop scores the trial windows of a stream. Without :attr:`run_centring` this is
        :meth:`decision_function`. With it, a trial holding NaN, ±inf or a sample beyond
        1 V in the model's unit (:func:`~sblr_rt.units.max_abs_sample`), which the online
        loop refuses, scores NaN and leaves the run's mean alone.

        Parameters
        ----------
        epochs : ndarray, shape (n_epochs, n_channels, n_times_raw)
            The run's raw trial epochs in time order.

        Returns
        -------
        scores : ndarray, shape (n_epochs,) or (n_epochs, n_classes)
        """
        if self.run_centring is None:
            return self.decision_function(epochs)
        epochs = np.asarray(epochs)
        unit = (self.metadata or {}).get("unit")
        bad = invalid_samples(epochs, max_abs_sample(unit)).any(axis=(1, 2))
        # Scored as zeros (no overflow), then marked: NaN scores do not move the mean.
        scores = np.array(self.decision_function(np.where(bad[:, None, None], 0.0, epochs)))
        scores[bad] = np.nan
        state = self.run_centring.start()
        out = np.array([state.step(np.atleast_1d(s)) for s in scores])
        return out.reshape(scores.shape)

    def labels_from_scores(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """User labels and probabilities from :meth:`decision_function` scores.

        Parameters
        ----------
        scores : ndarray, shape (n_epochs,) or (n_epochs, n_classes)
            Scores, e.g. computed by an incremental form (:mod:`sblr_rt.online.incremental`).

        Returns
        -------
        labels : ndarray of str, shape (n_epochs,)
        proba : ndarray, shape (n_epochs, n_classes)
            Calibrated by :attr:`probability` at the trial window, when the model has one
            (the labels do not depend on it).
        """
        proba = proba_from_scores(scores, self.multi_class)
        labels = np.asarray(self.classes)[np.argmax(proba, axis=1)]
        calibration = self.probability
        if calibration is not None and calibration.trial != 1.0:
            proba = proba_from_scores(scores, self.multi_class, calibration.trial)
        return labels, proba

    def predict_proba(self, epochs: np.ndarray) -> np.ndarray:
        """Return class probabilities (n_epochs, n_classes), columns as :attr:`classes`."""
        return self.labels_from_scores(self.decision_function(epochs))[1]

    def predict(self, epochs: np.ndarray) -> np.ndarray:
        """Return the predicted user labels (n_epochs,), elements of :attr:`classes`."""
        return self.labels_from_scores(self.decision_function(epochs))[0]

    def predict_run(self, epochs: np.ndarray) -> np.ndarray:
        """Labels of one run's trials in order, run-centred (:meth:`decision_function_run`)."""
        return self.labels_from_scores(self.decision_function_run(epochs))[0]

    # ------------------------------------------------------------------ figures

    @property
    def record(self) -> ModelRecord:
        """What the calibration recorded, typed (:class:`~sblr_rt.bci_model.metadata.ModelRecord`).

        A copy of :attr:`metadata`'s fields, read anew at each access (a refit's metadata
        change is seen).
        """
        return ModelRecord.from_metadata(self.metadata)

    @property
    def train_accuracy(self) -> float | None:
        """Accuracy on the calibration epochs (optimistic); None if not recorded."""
        value = self.metadata.get("train_accuracy")
        return None if value is None else float(value)

    @property
    def factors(self) -> tuple:
        """Every member's ``(spatial_, temporal_)`` factors U and V, in member order."""
        return tuple((m.estimator.spatial_, m.estimator.temporal_) for m in self.members)

    @property
    def prior_member(self):
        """The member that is a prior across people (has a pool), or None."""
        return next((m for m in self.members if m.pool is not None), None)

    @property
    def prior_share(self) -> float | None:
        """How much of the decision is still a prior's, in [0, 1]; None without a prior.

        A prior as built: 1. A prior refined with ``k`` of the person's trials: the pool's
        share of the training weight (:meth:`~sblr_rt.model.prior_pool.PriorPool.
        prior_share`). An ensemble: its members' shares weighted by their weights (a member
        without a prior counts 0).
        """
        if self.prior_member is None:
            return None
        shares = [
            float((m.metadata.get("prior") or {}).get("share", 1.0)) if m.pool is not None else 0
            for m in self.members
        ]
        return float(np.dot(self.member_weights, shares))

    def regions(self, *, n_leading: int = 5):
        """Where the weight lies: :func:`~sblr_rt.bci_model.regions.weight_regions`."""
        return weight_regions(self, n_leading=n_leading)

    def verdict(self):
        """Return the verdict against chance: :func:`~sblr_rt.bci_model.verdict.model_verdict`."""
        return model_verdict(self)

    def summary(self) -> str:
        """Return a human-readable multi-line description (used by ``sblr-rt inspect``)."""
        return "\n".join(summary_lines(self))

    def __repr__(self) -> str:
        ranks = "/".join(str(m.estimator.rank) for m in self.members)
        return (
            f"<{type(self).__name__} | {self.features}, classes {self.classes}, rank {ranks}, "
            f"{len(self.ch_names)} channels at {self.sfreq:g} Hz, "
            f"window [{self.tmin:g}, {self.tmax:g}) s, {self.n_times_raw} raw samples>"
        )

    def _check_epochs(self, epochs) -> np.ndarray:
        """Return ``epochs`` as an array of shape (n_epochs, n_channels, >= n_times_raw)."""
        epochs = np.asarray(epochs)
        if epochs.ndim != 3 or epochs.shape[-1] < self.n_times_raw:
            raise ValueError(
                "'epochs' must have shape (n_epochs, n_channels, n_times_raw = "
                f"{self.n_times_raw}), got {epochs.shape}"
            )
        return epochs

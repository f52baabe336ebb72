"""Member evidence: how each member of a model scored trials it never trained on.

This is evidence about a member (its record on held-out trials, which predicts the next
run), not the evidence accumulated over one trial online (:mod:`sblr_rt.online.evidence`).

A model with a prior has two kinds of member: the prior across people and the person's own
model. How much each should count in the person's next run is read from how each scored the
person's labelled trials, always on trials the member did not train on:

- the **prior** never saw the person: its scores of every calibration trial, each run
  centred causally as a session centres it (:func:`causal_evidence`), are clean evidence;
- the **person's model** is refitted at its chosen feature path and penalties on all but a
  contiguous block of trials, in time order, and scores that block
  (:func:`blocked_evidence`): evidence across time, from models of almost the final size.

:func:`weigh_prior` turns the two into the prior's weight: a schedule in the number of the
person's trials, with a member whose evidence says it decides worse than chance dropped,
whichever it is.
It is the one rule that :func:`~sblr_rt.calibration.calibrate` with a prior and the
session's refits (:mod:`sblr_rt.calibration.refit`) apply.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import numpy as np
from sblr_rt.calibration.assembly import run_of_each
from sblr_rt.calibration.epochs import extract_epochs
from scipy.stats import binom
from sklearn.exceptions import ConvergenceWarning

from sblr_rt.bci_model import BCIModel
from sblr_rt.model import ZeroTrapWarning
from sblr_rt.model.link import proba_from_scores
from sblr_rt.validation.constraints import apply_constraints, integer, number, text

__all__ = [
    "EVIDENCE_RULES",
    "HALF_TRIALS_RULE",
    "MemberEvidence",
    "PriorWeighting",
    "blocked_evidence",
    "causal_evidence",
    "causal_scores",
    "weigh_prior",
]

#: Contiguous blocks of the person's trials in :func:`blocked_evidence`.
N_BLOCKS = 5
#: How :func:`causal_evidence` scored the trials.
CAUSAL = "each trial scored before the member trained on it, each run centred causally"
#: ``half_trials`` of :func:`weigh_prior` and of a prior's settings
#: (:class:`~sblr_rt.calibration.prior.PriorSettings`).
HALF_TRIALS_RULE = number(lambda v: 0 < v <= 1e6, "be a number > 0 and <= 1e6")
_N_TRIALS = integer(lambda v: v >= 0, "be an integer >= 0")
#: The fields of :class:`MemberEvidence`.
EVIDENCE_RULES = {
    "n_trials": _N_TRIALS,
    "correct": _N_TRIALS,
    "log_loss_sum": number(lambda v: v >= 0, "be a finite number >= 0"),
    "n_classes": integer(lambda v: v >= 2, "be an integer >= 2"),
    "how": text(),
}
#: A member whose trials decided right are this unlikely under chance, or less, is
#: worse than chance (:attr:`MemberEvidence.below_chance`); chosen by leaving people out.
BELOW_CHANCE_P = 0.25


@dataclass(frozen=True)
class MemberEvidence:
    """How one member scored labelled trials it did not train on: counts that add up.

    Parameters
    ----------
    n_trials : int
        Trials scored.
    correct : int
        Trials decided right.
    log_loss_sum : float
        Sum over the trials of the negative log-probability of the true class.
    n_classes : int
        Classes of the model (chance is ``1 / n_classes``).
    how : str
        How the trials were scored, in words.
    """

    n_trials: int = 0
    correct: int = 0
    log_loss_sum: float = 0.0
    n_classes: int = 2
    how: str = ""

    def __post_init__(self):
        apply_constraints(self, EVIDENCE_RULES)
        if self.correct > self.n_trials:
            raise ValueError(
                f"'correct' must be at most 'n_trials', got {self.correct} of {self.n_trials}"
            )

    @classmethod
    def from_scores(cls, scores, y, n_classes: int, multi_class: str = "ovr", how: str = ""):
        """Count the trials of ``scores`` (NaN rows: not scored) against labels ``y``.

        Parameters
        ----------
        scores : ndarray, shape (n_trials,) or (n_trials, n_classes)
            Scores (positive: ``classes[1]`` for two classes).
        y : ndarray of int, shape (n_trials,)
            Class indices.
        n_classes : int
            Classes of the model.
        multi_class : str
            How scores become probabilities (``"ovr"`` or ``"multinomial"``).
        how : str
            How the trials were scored.
        """
        s = np.asarray(scores, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        ok = np.isfinite(s.reshape(len(s), -1)).all(axis=1) if len(s) else np.zeros(0, bool)
        s, y = s[ok], y[ok]
        if not len(y):
            return cls(0, 0, 0.0, n_classes, how)
        proba = proba_from_scores(s, multi_class)
        p = np.clip(proba[np.arange(len(y)), y], 1e-12, 1.0)
        correct = int(np.sum(np.argmax(proba, axis=1) == y))
        return cls(len(y), correct, float(-np.sum(np.log(p))), n_classes, how)

    @classmethod
    def from_dict(cls, data: dict, n_classes: int) -> MemberEvidence:
        """Rebuild from :meth:`to_dict` output (as stored in a model file).

        Raises
        ------
        TypeError, ValueError
            If a field is of the wrong kind or out of range (by :data:`EVIDENCE_RULES`).
        """
        if not isinstance(data, dict):
            raise TypeError(f"evidence must be a mapping, got {type(data).__name__}")
        n = data.get("n_trials", 0)
        loss = data.get("log_loss")
        return cls(
            n,
            data.get("correct", 0),
            0.0 if loss is None else float(loss) * n,
            n_classes,
            str(data.get("how", "")),
        )

    def __add__(self, other: MemberEvidence) -> MemberEvidence:
        """Both counts together (the first one's description)."""
        return MemberEvidence(
            self.n_trials + other.n_trials,
            self.correct + other.correct,
            self.log_loss_sum + other.log_loss_sum,
            max(self.n_classes, other.n_classes),
            self.how or other.how,
        )

    @property
    def accuracy(self) -> float | None:
        """Share of trials decided right; None without trials."""
        return self.correct / self.n_trials if self.n_trials else None

    @property
    def log_loss(self) -> float | None:
        """Mean negative log-probability of the true class; None without trials."""
        return self.log_loss_sum / self.n_trials if self.n_trials else None

    @property
    def below_chance(self) -> bool:
        """Whether the evidence says the member decides worse than chance.

        One-sided binomial test of "as good as chance" (``1 / n_classes``) against "worse":
        True when ``P(X <= correct) <= BELOW_CHANCE_P`` for ``X ~ Binomial(n_trials,
        1 / n_classes)``. Without trials: False.
        """
        if not self.n_trials:
            return False
        return bool(binom.cdf(self.correct, self.n_trials, 1 / self.n_classes) <= BELOW_CHANCE_P)

    def to_dict(self) -> dict:
        """Return the JSON-serialisable form: trials, right, mean log-loss and how."""
        return {
            "n_trials": self.n_trials,
            "correct": self.correct,
            "log_loss": self.log_loss,
            "how": self.how,
        }


@dataclass(frozen=True)
class PriorWeighting:
    """The prior's weight against the person's own model, and why.

    Parameters
    ----------
    weight : float
        The prior's share of the final score, in [0, 1].
    reason : str
        Why, in one sentence.
    """

    weight: float
    reason: str


def weigh_prior(
    n_trials: int,
    half_trials: float,
    prior: MemberEvidence | None,
    person: MemberEvidence | None,
) -> PriorWeighting:
    """Return the prior's weight after ``n_trials`` of the person's labelled trials.

    The schedule ``half_trials / (half_trials + n_trials)`` gives the prior as much weight
    as the person's own model at ``half_trials`` trials and less with every trial after.
    MemberEvidence overrides it where it says that one member decides worse than chance
    (:attr:`MemberEvidence.below_chance`) and the other does not: that member gets weight 0.
    Without a model of the person's own, the prior decides alone.

    Parameters
    ----------
    n_trials : int
        The person's labelled trials the models were calibrated on.
    half_trials : float
        Trials at which the schedule weighs prior and person equally (positive).
    prior, person : MemberEvidence | None
        Each member's evidence; ``person`` None: no model of the person's own.

    Returns
    -------
    weighting : PriorWeighting

    Examples
    --------
    >>> weigh_prior(20, 20.0, MemberEvidence(20, 14), MemberEvidence(20, 15)).weight
    0.5
    >>> weigh_prior(20, 20.0, MemberEvidence(20, 14), MemberEvidence(20, 6)).weight
    1.0
    """
    n_trials = _N_TRIALS.check("n_trials", n_trials)
    half_trials = HALF_TRIALS_RULE.check("half_trials", half_trials)
    if person is None:
        return PriorWeighting(1.0, f"{n_trials} trials: no model of the person's own yet")
    prior = MemberEvidence() if prior is None else prior
    if person.below_chance and not prior.below_chance:
        return PriorWeighting(
            1.0,
            f"the person's own model decided {_figure(person)} of the trials it did not "
            f"train on, worse than chance; the prior {_figure(prior)}: the prior alone",
        )
    if prior.below_chance and not person.below_chance:
        return PriorWeighting(
            0.0,
            f"the prior decided {_figure(prior)} of the person's trials, worse than chance; "
            f"the person's own model {_figure(person)}: the person's model alone",
        )
    schedule = half_trials / (half_trials + n_trials)
    return PriorWeighting(
        schedule,
        f"{n_trials} trials: the prior weighs {half_trials:g} / ({half_trials:g} + "
        f"{n_trials}) = {schedule:.2f} (prior {_figure(prior)}, person {_figure(person)} "
        "right on trials they did not train on)",
    )


def _figure(evidence: MemberEvidence) -> str:
    return f"{evidence.correct}/{evidence.n_trials}"


def causal_scores(model: BCIModel, recordings, config, classes) -> tuple:
    """Score each trial of the recordings as a session would, run by run, in time order.

    Each run (a session's single-trial recordings are one run) is centred causally from
    the model's calibration reference, exactly as :meth:`BCIModel.decision_function_run`
    scores it. Clean evidence only for a model that never trained on these trials (a prior
    across people that never saw the person). A trial that a member's epoching rejects is
    left out.

    Parameters
    ----------
    model : BCIModel
        The model (any channel order: it is matched to each recording).
    recordings : list of Recording
        The labelled trials, in time order.
    config : CalibrationConfig
        The class map and rejection thresholds.
    classes : list of str
        The class order of the scores.

    Returns
    -------
    scores : ndarray, shape (n_trials,) or (n_trials, n_classes)
    y : ndarray of int, shape (n_trials,)
        The trials' class indices in ``classes``.
    recording : ndarray of int, shape (n_trials,)
        The index in ``recordings`` of each trial's recording.
    """
    model = model.for_channels(recordings[0].ch_names)
    order = {c: k for k, c in enumerate(classes)}
    scores, labels, where = [], [], []
    runs = np.asarray(run_of_each(recordings))
    for run in dict.fromkeys(runs.tolist()):
        index = np.flatnonzero(runs == run)
        recs = [recordings[i] for i in index]
        by_member = []
        for m in model.members:
            ep = _member_epochs(m, recs, config)
            s = m.decision_function_features(m.preprocessor.scale(ep.Z))
            labelled = [_class_index(order, ep.classes[k]) for k in ep.y]
            by_member.append(
                {tuple(o): (v, c) for o, v, c in zip(ep.onsets, s, labelled, strict=True)}
            )
        keys = sorted(set.intersection(*(set(d) for d in by_member)))  # kept by every member
        if not keys:
            continue
        s = np.tensordot(
            model.member_weights, [[d[k][0] for k in keys] for d in by_member], axes=1
        )
        if model.run_centring is not None:
            state = model.run_centring.start()
            s = np.array([state.step(np.atleast_1d(v)) for v in s]).reshape(s.shape)
        scores.append(s)
        labels.append([by_member[0][k][1] for k in keys])
        where.append([index[k[0]] for k in keys])
    if not scores:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return (
        np.concatenate(scores),
        np.concatenate(labels).astype(np.int64),
        np.concatenate(where).astype(np.int64),
    )


def _class_index(order: dict, label) -> int:
    if label not in order:
        raise ValueError(
            f"the trials hold classes the model lacks: {label!r}; its: {list(order)} (name "
            "the trials' markers with the model's class labels)"
        )
    return order[label]


def _member_epochs(member, recordings, config):
    """Return one member's features of the recordings' labelled trials (not centred)."""
    return extract_epochs(
        recordings,
        member.preprocessor.for_channels(recordings[0].ch_names),
        config.class_map,
        config.rejection,
    )


def causal_evidence(model: BCIModel, recordings, config, classes) -> MemberEvidence:
    """:class:`MemberEvidence` of :func:`causal_scores` (for a model that never saw the trials)."""
    scores, y, _ = causal_scores(model, recordings, config, classes)
    return MemberEvidence.from_scores(scores, y, len(classes), model.multi_class, CAUSAL)


def blocked_evidence(model: BCIModel, recordings, config, classes, n_blocks=N_BLOCKS):
    """Score each contiguous block of trials with the model refitted on the other blocks.

    Every member keeps its feature path, rank and penalties and is refitted (scaling
    included) on the trials outside the block; the members' weighted scores of the
    block's trials are the evidence. The trials are in time order (recording by
    recording), each run centred on its own mean.

    Parameters
    ----------
    model : BCIModel
        The person's own model (its members refitted here; the model is not changed).
    recordings : list of Recording
        The trials it was calibrated on, in time order.
    config : CalibrationConfig
        The class map and rejection thresholds.
    classes : list of str
        The class order of the scores.
    n_blocks : int
        Contiguous blocks (at least 2; fewer when there are fewer trials).

    Returns
    -------
    evidence : MemberEvidence
        A block whose training trials lack a class is not scored.
    """
    order = {c: k for k, c in enumerate(classes)}
    feats = []
    for m in model.members:
        ep = _member_epochs(m, recordings, config)
        if m.run_centring is not None:
            ep = ep.centred(run_of_each(recordings))
        feats.append(ep)
    # the trials every member kept, in time order
    keys = sorted(set.intersection(*(set(map(tuple, ep.onsets)) for ep in feats)))
    n = len(keys)
    y = None
    shape = (n,) if len(classes) == 2 else (n, len(classes))
    scores = np.zeros(shape)
    blocks = np.array_split(np.arange(n), max(2, min(int(n_blocks), n)))
    missing = np.zeros(n, dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        for m, w, ep in zip(model.members, model.member_weights, feats, strict=True):
            at = {tuple(o): i for i, o in enumerate(ep.onsets)}
            rows = [at[k] for k in keys]
            Z = ep.Z[rows]
            y = np.array([order[ep.classes[c]] for c in ep.y[rows]], dtype=np.int64)
            for test in blocks:
                train = np.setdiff1d(np.arange(n), test)
                if len(np.unique(y[train])) < len(classes):
                    missing[test] = True
                    continue
                pre = copy.deepcopy(m.preprocessor)
                pre.fit_scaling(Z[train])
                est = copy.deepcopy(m.estimator).set_params(warm_start=False)
                est.fit(pre.scale(Z[train]), y[train])
                scores[test] += w * est.decision_function(pre.scale(Z[test]))
    scores[missing] = np.nan
    return MemberEvidence.from_scores(
        scores,
        np.zeros(0, np.int64) if y is None else y,
        len(classes),
        model.multi_class,
        f"{len(blocks)} contiguous blocks in time order, each scored by the model refitted "
        "on the others",
    )

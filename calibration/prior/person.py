"""A prior meets a person: adapted with their trials, then weighed against their own model.

- :func:`adapt_prior` refits a prior with a person's labelled trials, pooled with its
  training features (what ``--adapt`` does after every trial).
- :func:`start_from_prior` is the first step of :func:`~sblr_rt.calibration.calibrate` with
  a prior: the prior adapted to the person's first trials, with its evidence on them.
- :func:`combine_with_prior` weighs the adapted prior against the person's own model by the
  evidence of each on trials it did not train on
  (:mod:`sblr_rt.calibration.member_evidence`): the one rule of ``calibrate`` and of every
  refit; :func:`person_part` takes the person's own model back out.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sblr_rt.calibration.assembly import MEMBER_KEYS, as_recordings, fitted_model, run_of_each
from sblr_rt.calibration.config import load_config
from sblr_rt.calibration.epochs import TooFewTrials, extract_epochs
from sblr_rt.calibration.member_evidence import (
    MemberEvidence,
    blocked_evidence,
    causal_evidence,
    weigh_prior,
)
from sblr_rt.calibration.prior.build import (
    SETTINGS_CONSTRAINTS,
    fit_pool,
    prior_of,
    prior_settings,
)
from sblr_rt.calibration.probability import calibrate_probability

from sblr_rt.bci_model import BCIModel, EnsembleModel, SingleModel
from sblr_rt.validation.constraints import integer, positive

__all__ = [
    "MAX_TRIALS",
    "PriorStart",
    "adapt_prior",
    "combine_with_prior",
    "first_trials",
    "person_part",
    "start_from_prior",
]


def first_trials(recordings, class_map: dict | None, max_trials: int | None) -> list:
    """Return the recordings with only their first ``max_trials`` class cues, in time order.

    Recordings are taken in the order given (the first run first); cues that are not of a
    class are kept (they label nothing). A recording left without a class cue is dropped.

    Parameters
    ----------
    recordings : list of Recording
        The person's runs in time order.
    class_map : dict | None
        Marker value -> class label (None: every marker is a class cue).
    max_trials : int | None
        Cues to keep; None: all.

    Returns
    -------
    recordings : list of Recording
    """
    max_trials = MAX_TRIALS.check("max_trials", max_trials)
    if max_trials is None:
        return list(recordings)
    out, left = [], max_trials
    for rec in recordings:
        if left <= 0:
            break
        values = list(rec.marker_values)
        order = np.argsort(np.asarray(rec.marker_times, dtype=float), kind="stable")
        keep, n = [], 0
        for i in order:
            is_cue = class_map is None or _is_cue(values[i], class_map)
            if is_cue and n >= left:
                continue
            keep.append(int(i))
            n += is_cue
        if n == 0:
            continue
        left -= n
        keep = sorted(keep)
        out.append(
            dataclasses.replace(
                rec,
                marker_times=np.asarray(rec.marker_times)[keep],
                marker_values=[values[i] for i in keep],
            )
        )
    return out


def _is_cue(value, class_map) -> bool:
    value = str(value)
    return value in class_map or value.rsplit("/", 1)[-1] in class_map


#: ``max_trials``: a positive integer (a numpy integer too) or None.
MAX_TRIALS = integer(positive, "be a positive integer or None", none=True)
_MIN_PER_CLASS = integer(positive, "be a positive integer")


def adapt_prior(
    prior: BCIModel,
    recordings,
    *,
    config=None,
    classes: Sequence[str] | None = None,
    min_per_class: int = 1,
    trial_weight: float | None = None,
) -> BCIModel:
    """Refit a prior with a person's labelled trials, pooled with its training features.

    Each of the person's runs is centred on its own mean (a session's decided trials, whose
    source is ``"session trial ..."``, are one run); the trials join the prior's pool with
    ``trial_weight`` each and the prior's estimator is refitted from its own factors, with
    its preprocessing and scaling unchanged. The new model's calibration reference is the
    mean of the person's run means: the person's next run starts from it.

    Parameters
    ----------
    prior : BCIModel
        A model with a :attr:`~sblr_rt.bci_model.BCIModel.pool`.
    recordings : list of Recording | path
        The person's labelled runs.
    config : CalibrationConfig | None
        Its class map and rejection thresholds; None: the prior's configuration.
    classes : list of str | None
        The classes in the model's order (None: the prior's).
    min_per_class : int
        Fewest trials of each class.
    trial_weight : float | None
        Weight of a trial; None: the pool's.

    Returns
    -------
    model : BCIModel
        With the same pool; ``metadata["prior"]`` gains ``n_trials`` and ``share`` (the
        pool's share of the training weight).

    Raises
    ------
    ValueError
        If ``prior`` has no pool, the recordings lack the prior's channels (named), or a
        class has fewer than ``min_per_class`` trials.
    """
    if not isinstance(prior, BCIModel) or prior.pool is None:
        raise ValueError("'prior' must be a prior (a model with a pool of training epochs)")
    min_per_class = _MIN_PER_CLASS.check("min_per_class", min_per_class)
    if trial_weight is not None:
        trial_weight = SETTINGS_CONSTRAINTS["trial_weight"].check("trial_weight", trial_weight)
    recs = as_recordings(recordings)
    classes = list(prior.classes) if classes is None else [str(c) for c in classes]
    if config is None:
        base = prior.record.config or {}
        config = load_config(None, **base)
    for r in recs:
        missing = [c for c in prior.preprocessor.pick_names if c not in r.ch_names]
        if missing:
            raise ValueError(
                f"the recording lacks channels of the prior: {missing} (from {r.source})"
            )
    pre = prior.preprocessor
    p = pre if list(recs[0].ch_names) == list(pre.ch_names) else pre.for_channels(recs[0].ch_names)
    epochs = extract_epochs(
        recs,
        p,
        config.class_map,
        config.rejection,
    )
    order = {c: k for k, c in enumerate(classes)}
    unknown = sorted(set(epochs.classes) - set(order))
    if unknown:
        raise ValueError(f"the trials hold classes the prior lacks: {unknown}; its: {classes}")
    y = np.array([order[epochs.classes[k]] for k in epochs.y], dtype=np.int64)
    counts = {c: int(np.sum(y == k)) for k, c in enumerate(classes)}
    if min(counts.values()) < min_per_class:
        raise TooFewTrials(counts, min_per_class)
    epochs = epochs.centred(run_of_each(recs))
    pool = prior.pool
    w = pool.trial_weight if trial_weight is None else float(trial_weight)
    Z = np.concatenate([pool.Z, epochs.Z.astype(pool.Z.dtype)])
    y_all = np.concatenate([pool.y, y])
    weights = np.concatenate([np.ones(pool.n_epochs), np.full(len(y), w)])
    est = fit_pool(pre, Z, y_all, None, sample_weight=weights, warm=prior.estimator)
    metadata = copy.deepcopy(dict(prior.metadata or {}))
    info = prior.record.prior.to_dict()
    info.update(n_trials=len(y), share=pool.prior_share(len(y)) if w else 1.0)
    metadata["prior"] = info
    metadata["epochs"] = {
        "found": epochs.n_found,
        "used": len(y),
        "per_class": counts,
        "rejected": epochs.rejected,
    }
    metadata["train_accuracy"] = float(np.mean(est.predict(pre.scale(epochs.Z)) == y))
    warmup = 1.0 if prior.run_centring is None else prior.run_centring.warmup
    return fitted_model(
        copy.deepcopy(p),
        est,
        classes,
        epochs.calibration_mean,
        warmup,
        metadata,
        dataclasses.replace(pool, trial_weight=w),
    )


def start_from_prior(recs, config, prior: BCIModel, *, max_trials=None) -> PriorStart:
    """Adapt a prior to a person's first trials, with its evidence on them.

    What :func:`~sblr_rt.calibration.calibrate` with a prior does first: it then
    calibrates the person's own model when :attr:`PriorStart.wants_person` and weighs the
    two with :func:`combine_with_prior`.

    Parameters
    ----------
    recs : list of Recording
        The person's runs in time order.
    config : CalibrationConfig
        The calibration's configuration.
    prior : BCIModel
        A prior (with a pool) or a model adapted from one.
    max_trials : int | None
        Take the first ``max_trials`` class cues in time order.

    Returns
    -------
    start : PriorStart
    """
    prior = prior_of(prior)
    recs = first_trials(recs, config.class_map, max_trials)
    if not recs:
        raise ValueError("'max_trials' left no class cue in the recordings")
    prior = prior.for_channels(recs[0].ch_names)
    settings = prior_settings(prior)
    # The prior never saw these trials: its causal scores of them are clean evidence.
    evidence = causal_evidence(prior, recs, config, prior.classes)
    adapted = adapt_prior(
        prior, recs, config=config, classes=prior.classes, trial_weight=settings.trial_weight
    )
    wants = adapted.record.prior.n_trials >= settings.auto_min_trials
    return PriorStart(recs, adapted, evidence, wants)


@dataclass(frozen=True)
class PriorStart:
    """A prior adapted to a person's first trials (:func:`start_from_prior`).

    Parameters
    ----------
    recordings : list of Recording
        The person's trials used (the first ``max_trials``).
    adapted : SingleModel
        The prior adapted with them.
    evidence : MemberEvidence
        The prior's scores of them, before it trained on them.
    wants_person : bool
        Enough trials (``PriorSettings.auto_min_trials``) for the person's own model.
    """

    recordings: list
    adapted: SingleModel
    evidence: MemberEvidence
    wants_person: bool


def combine_with_prior(
    adapted: SingleModel,
    person: BCIModel | None,
    recs,
    config,
    *,
    prior_evidence: MemberEvidence,
    person_evidence: MemberEvidence | None = None,
    why_alone: str | None = None,
    evidence_seen: int = 0,
    fit_probability: bool = True,
    probability: dict | None = None,
) -> BCIModel:
    """Weigh the adapted prior against the person's own model: the one rule of both.

    :func:`~sblr_rt.calibration.member_evidence.weigh_prior` gives the prior's weight from the
    number of the person's trials and each member's evidence; the person's evidence is
    :func:`~sblr_rt.calibration.member_evidence.blocked_evidence` unless given. Every member is
    kept, a member of weight 0 included, so that a later refit can weigh it again.

    Parameters
    ----------
    adapted : SingleModel
        The prior adapted with the person's trials (:func:`adapt_prior`).
    person : BCIModel | None
        The person's own model, or None.
    recs : list of Recording
        The person's labelled trials, in time order.
    config : CalibrationConfig
        The class map and rejection thresholds.
    prior_evidence : MemberEvidence
        The prior's scores of the person's trials before it trained on them.
    person_evidence : MemberEvidence | None
        The person's model's evidence; None: computed here.
    why_alone : str | None
        Why there is no person's model (for the record).
    evidence_seen : int
        A session's trials already counted in the evidence (for the next refit).
    fit_probability : bool
        Fit the combination's probability calibration
        (:func:`~sblr_rt.calibration.probability.calibrate_probability`; the adapted prior
        refitted on its pool and the other blocks' trials).
    probability : dict | None
        A probability calibration to keep instead (a session's refit keeps its model's).

    Returns
    -------
    model : BCIModel
        The adapted prior alone, or an ensemble of the person's members and the adapted
        prior (last). ``metadata["prior"]`` records ``weight`` (the prior's share of the
        score), ``reason``, ``evidence`` and ``weights`` (``"prior"`` and ``"person"``: each
        one's trials, right and log-loss, and its weight), ``person_weights`` (the person's
        members' own weights) and ``share``.
    """
    settings = prior_settings(adapted)
    classes = list(adapted.classes)
    n = int(adapted.record.prior.n_trials)
    if person is not None:
        if list(person.classes) != classes:
            raise ValueError(
                f"the prior's classes {classes} differ from the calibration's {person.classes}"
            )
        if person_evidence is None:
            person_evidence = blocked_evidence(person, recs, config, classes)
    weighting = weigh_prior(n, settings.half_trials, prior_evidence, person_evidence)
    evidence = {"prior": prior_evidence.to_dict()}
    if person_evidence is not None:
        evidence["person"] = person_evidence.to_dict()
    info = {
        **adapted.record.prior.to_dict(),
        "weight": weighting.weight,
        "reason": why_alone or weighting.reason,
        "evidence": evidence,
        "evidence_seen": int(evidence_seen),
    }
    if person is None:
        adapted.metadata["prior"] = info
        return adapted
    members = [_as_member(m) for m in person.members]
    info["weights"] = {"prior": weighting.weight, "person": 1.0 - weighting.weight}
    info["person_weights"] = {
        m.name: float(w) for m, w in zip(members, person.member_weights, strict=True)
    }
    metadata = copy.deepcopy(person.metadata)
    metadata["prior"] = info
    metadata.pop("probability", None)  # the person's model's, not the combination's
    w = weighting.weight
    model = EnsembleModel(
        [*members, _as_member(adapted)],
        [(1 - w) * v for v in person.member_weights] + [w],
        metadata,
    )
    if probability is not None:
        model.metadata["probability"] = probability
    elif fit_probability:
        fitted = calibrate_probability(model, recs, config, classes)
        if fitted is not None:
            model.metadata["probability"] = fitted.to_dict()
    return model


def person_part(model: BCIModel) -> BCIModel | None:
    """Return the person's own model inside a model with a prior, or None.

    The members without a pool, with their own weights
    (``metadata["prior"]["person_weights"]``).
    """
    members = [m for m in model.members if m.pool is None]
    if not members:
        return None
    if len(members) == 1:
        return members[0]
    stored = model.record.prior.person_weights
    weights = [float(stored.get(m.name, 0.0)) for m in members]
    if sum(weights) <= 0:
        weights = [w for m, w in zip(model.members, model.member_weights, strict=True)
                   if m.pool is None]  # fmt: skip
    return EnsembleModel(members, weights if sum(weights) > 0 else None)


def _as_member(model: SingleModel) -> SingleModel:
    """Return a copy without the calibration-wide metadata (a member keeps its own)."""
    keep = {k: v for k, v in (model.metadata or {}).items() if k in MEMBER_KEYS}
    return SingleModel(
        preprocessor=model.preprocessor,
        estimator=model.estimator,
        classes=model.classes,
        metadata=keep,
        run_centring=model.run_centring,
        pool=model.pool,
    )

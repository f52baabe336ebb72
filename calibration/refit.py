"""One refit of a session's model on its growing calibration set (run in a worker process).

:func:`refit_model` is what the adaptation (:mod:`sblr_rt.calibration.adapt`) runs in its
background process, and what the adaptation benchmark runs in-process:

- **warm** (most trials): the current model's feature path, preprocessing, rank and
  penalties are kept; the scaling is fitted again on all epochs and the estimator is
  refitted from the current factors (``warm_start=True``: same classes and shapes, so the
  solver starts where the current model is and needs few iterations).
- **re-selection** (every N trials): the whole calibration
  (:func:`~sblr_rt.calibration.calibrate`, with the configuration the model was
  calibrated with) on all epochs, so the feature path and penalties may change.

A refit short of trials of a class raises :class:`~sblr_rt.calibration.epochs.TooFewTrials`
(the session waits for more); one that cannot give a usable model raises
:class:`RefitError` (too few epochs of a class for the search, factors all zero or not
finite, classes that changed). Either way the caller keeps the current model. The new
version is written with :func:`~sblr_rt.io.save_model`, which writes a temporary file and
renames it: a version file is whole or absent, even if the process is
killed mid-write.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
import warnings
from pathlib import Path

import numpy as np
from sblr_rt.calibration.assembly import (
    MEMBER_KEYS,
    SESSION_TRIAL_SOURCE,
    objective_traces,
    run_of_each,
    train_accuracy,
)
from sblr_rt.calibration.config import load_config
from sblr_rt.calibration.core import calibrate, fitted_model
from sblr_rt.calibration.epochs import TooFewTrials, extract_epochs, resolve_markers
from sblr_rt.calibration.member_evidence import CAUSAL, MemberEvidence, causal_scores
from sblr_rt.calibration.outcome import CalibrationOutcome
from sblr_rt.calibration.prior import adapt_prior, combine_with_prior, person_part, prior_settings
from sklearn.exceptions import ConvergenceWarning

from sblr_rt.bci_model import BCIModel
from sblr_rt.bci_model.verdict import prior_info
from sblr_rt.model import ZeroTrapWarning
from sblr_rt.online.run_info import RunInfo

logger = logging.getLogger("sblr_rt.calibration")


__all__ = ["RefitError", "TooFewTrials", "labelled_recording", "refit_model", "version_path"]


class RefitError(RuntimeError):
    """A refit gave no usable model; the session keeps its current one."""


def version_path(folder, version: int) -> Path:
    """Return the file of model version ``version`` in ``folder`` (``v0007.sblr.npz``)."""
    return Path(folder) / f"v{int(version):04d}.sblr.npz"


def labelled_recording(recording, class_map: dict | None):
    """Return ``recording`` with its markers renamed to class labels (others dropped).

    The calibration set of a session mixes calibration runs (markers like ``"T1"``) and
    trials from the loop (labelled with their class); with every marker a class label, one
    identity class map serves them all.

    Parameters
    ----------
    recording : Recording
        A calibration run.
    class_map : dict | None
        Marker value -> class label (None: the markers are already labels).

    Returns
    -------
    recording : Recording
        A shallow copy (the samples are shared).
    """
    if class_map is None:
        return recording
    # the recording's own spelling of each marker (Comment/T1 for T1), as calibration
    class_map, _ = resolve_markers(class_map, set(recording.marker_values))
    keep = [i for i, v in enumerate(recording.marker_values) if v in class_map]
    return dataclasses.replace(
        recording,
        marker_times=recording.marker_times[keep],
        marker_values=[class_map[recording.marker_values[i]] for i in keep],
    )


def refit_model(
    model,
    recordings,
    *,
    version: int,
    reselect: bool = False,
    folder=None,
    min_per_class: int = 3,
    info: dict | None = None,
):
    """Refit ``model`` on ``recordings`` (markers = class labels) as version ``version``.

    Parameters
    ----------
    model : BCIModel
        The current model (its configuration, preprocessing, rank, penalties, factors).
    recordings : list of Recording
        The calibration set, every marker a class label of the model
        (:func:`labelled_recording`).
    version : int
        The new version's number (``metadata["adaptation"]["version"]``).
    reselect : bool
        Re-select the feature path and penalties (a whole calibration) instead of a warm
        refit with the current ones.
    folder : path | None
        Where to save the new version (:func:`version_path`); None: not saved.
    min_per_class : int
        Fewest epochs of each class a refit accepts.
    info : dict | None
        Stored in ``metadata["adaptation"]`` (e.g. the trials used).

    Returns
    -------
    model : BCIModel
        The new version, saved if ``folder`` was given.

    Raises
    ------
    TooFewTrials
        If a class has fewer than ``min_per_class`` trials (before or after rejection).
    RefitError
        If the refit gives no usable model.
    """
    t0 = time.perf_counter()
    classes = [str(c) for c in model.classes]
    base = model.record.config or {}
    base.update(classes=[(c, c) for c in classes], n_jobs=1)
    # The trials (and the calibration runs the adapter read) carry the model's labels already.
    renaming = base.pop("rename_channels", None)
    config = load_config(None, **base)
    cued = np.concatenate([np.asarray(r.marker_values, dtype=object) for r in recordings] or [[]])
    _count_check(np.array([classes.index(v) for v in cued if v in classes]), classes,
                 min_per_class)  # fmt: skip
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # Warned at the start of a warm fit whenever a penalty exceeds the warm factors'
            # gradient, which is no failure; a collapse is checked on the result below.
            warnings.simplefilter("ignore", ZeroTrapWarning)
            if model.prior_member is not None:
                new = _with_prior(model, recordings, config, classes, min_per_class, reselect)
            elif reselect:
                new = _reselect(model, recordings, config, classes, min_per_class)
            else:
                new = _warm(model, recordings, config, classes, min_per_class)
    except TooFewTrials:  # trials rejected (or a prior's adaptation short of a class): wait
        raise
    except ValueError as err:  # e.g. too few epochs per class for the CV
        raise RefitError(str(err)) from err
    for label, member in zip(new.member_labels, new.members, strict=True):  # every one
        _check_usable(member.estimator, label)
    outcome = CalibrationOutcome.from_model(new)
    metadata = copy.deepcopy(dict(new.metadata or {}))
    config_record = new.record.config
    if renaming and config_record is not None:  # how the sources are read
        metadata["config"] = {**config_record, "rename_channels": renaming}
    metadata["adaptation"] = {
        "version": int(version),
        "parent": RunInfo.from_model(model).version,
        "reselected": bool(reselect),
        "n_epochs": int(outcome.n_used or 0),
        "per_class": outcome.per_class,
        "seconds": time.perf_counter() - t0,
    } | dict(info or {})
    new.metadata = metadata
    if folder is not None:
        from sblr_rt.io.model_file import save_model

        save_model(new, version_path(folder, version))
    return new


def _count_check(y, classes, min_per_class) -> dict:
    counts = {c: int(np.sum(y == k)) for k, c in enumerate(classes)}
    short = {c: n for c, n in counts.items() if n < min_per_class}
    if short:
        raise TooFewTrials(counts, min_per_class)
    return counts


def _warm(model, recordings, config, classes, min_per_class) -> BCIModel:
    """Refit every member warm on ``recordings``; an ensemble keeps its members' weights."""
    fits = [_warm_single(m, recordings, config, classes, min_per_class) for m in model.members]
    epochs = [m.record.epochs for m, _, _ in fits if m.record.epochs is not None]
    members = []
    for new, _, _ in fits:  # a member keeps its own figures only
        new.metadata = {k: v for k, v in new.metadata.items() if k in MEMBER_KEYS}
        members.append(new)
    metadata = copy.deepcopy(dict(model.metadata or {}))
    metadata.pop("train_accuracy", None)
    ys = [y for _, _, y in fits if y is not None]
    if len(ys) == len(fits) and all(np.array_equal(ys[0], y) for y in ys):
        scores = np.tensordot(model.member_weights, [s for _, s, _ in fits], axes=1)
        metadata["train_accuracy"] = train_accuracy(scores, ys[0], model.multi_class)
    if epochs:  # the fewest trials any member kept
        metadata["epochs"] = min(epochs, key=lambda e: e.used).to_dict()
    return model.with_members(members, metadata)


def _warm_single(model, recordings, config, classes, min_per_class) -> tuple:
    """Refit one single model warm; return it with its training scores and labels."""
    pre = copy.deepcopy(model.preprocessor)
    epochs = extract_epochs(
        recordings,
        pre,
        config.class_map,
        config.rejection,
    )
    # extract_epochs numbers the classes it found; the estimator numbers the model's.
    order = {c: k for k, c in enumerate(classes)}
    y = np.array([order[epochs.classes[k]] for k in epochs.y], dtype=np.int64)
    counts = _count_check(y, classes, min_per_class)
    if model.run_centring is not None:  # each run on its own mean, the session's trials one
        epochs = epochs.centred(run_of_each(recordings))
    pre.fit_scaling(epochs.Z)
    X = pre.scale(epochs.Z)
    est = copy.deepcopy(model.estimator)
    est.set_params(warm_start=True)
    est.fit(X, y)
    est.set_params(warm_start=False)
    metadata = copy.deepcopy(dict(model.metadata or {}))
    metadata["epochs"] = {
        "found": epochs.n_found,
        "used": len(y),
        "per_class": counts,
        "rejected": epochs.rejected,
    }
    scores = est.decision_function(X)
    metadata["train_accuracy"] = train_accuracy(scores, y, est.multi_class)
    metadata["objective"] = objective_traces(est)
    warmup = None if model.run_centring is None else model.run_centring.warmup
    return fitted_model(pre, est, classes, epochs.calibration_mean, warmup, metadata), scores, y


def _with_prior(model, recordings, config, classes, min_per_class, reselect) -> BCIModel:
    """Refit a model with a prior: each member tested on the new trials, then weighed.

    The session's trials that arrived since the last refit are scored first by the
    current members, none of which trained on them, and join each member's evidence. The
    prior is then adapted with every trial, the person's own model refitted warm (or
    calibrated anew: at a re-selection, or when the trials first reach
    ``auto_min_trials``), and :func:`~sblr_rt.calibration.prior.combine_with_prior`
    weighs the two, as :func:`~sblr_rt.calibration.calibrate` with a prior does.
    """
    prior = model.prior_member.for_channels(recordings[0].ch_names)
    person = person_part(model)
    info = prior_info(model)
    stored = info.get("evidence") or {}
    n_classes = len(classes)
    prior_ev = MemberEvidence.from_dict(stored.get("prior") or {}, n_classes)
    person_ev = (
        MemberEvidence.from_dict(stored["person"], n_classes) if "person" in stored else None
    )
    session = [r for r in recordings if str(r.source).startswith(SESSION_TRIAL_SOURCE)]
    seen = int(info.get("evidence_seen", 0))
    if len(session) > seen:  # score the new trials before any member trains on them
        prior_ev = prior_ev + _new_evidence(prior, session, config, classes, seen)
        if person is not None and person_ev is not None:
            person_ev = person_ev + _new_evidence(person, session, config, classes, seen)
    settings = prior_settings(prior)
    adapted = adapt_prior(prior, recordings, config=config, classes=classes,
                          min_per_class=min_per_class,
                          trial_weight=settings.trial_weight)  # fmt: skip
    n = prior_info(adapted)["n_trials"]
    why, new_person = None, False
    if person is not None and not reselect:
        person = _warm(person, recordings, config, classes, min_per_class)
    elif n >= settings.auto_min_trials:
        # The person's own model as calibrate with a prior makes it: every candidate (a
        # prior's own configuration names its single feature path), on the prior's channels.
        own = config if person is not None else config.replace(features="auto", spatial="default")
        try:
            person = calibrate(recordings, config=own)
            person_ev = None  # a new model: its evidence from blocks of the trials
            new_person = True
        except ValueError as err:
            why = f"the person's own model could not be calibrated: {err}"
            person = person_ev = None
    else:
        person = person_ev = None
    # The probability calibration is fitted anew with a new person's model, as calibrate
    # with a prior fits it; a warm refit keeps its model's (fitting one refits every
    # member once per block).
    kept = None if new_person else model.record.probability
    new = combine_with_prior(adapted, person, recordings, config, prior_evidence=prior_ev,
                             person_evidence=person_ev, why_alone=why,
                             evidence_seen=len(session), fit_probability=new_person,
                             probability=kept)  # fmt: skip
    for key in ("unit", "sources"):  # the session's, not the trial segments'
        if key in (model.metadata or {}):
            new.metadata[key] = model.metadata[key]
    return new


def _new_evidence(member, session, config, classes, seen) -> MemberEvidence:
    """Return the evidence of the session's trials after the first ``seen``, scored causally."""
    scores, y, recording = causal_scores(member, session, config, classes)
    new = recording >= seen
    return MemberEvidence.from_scores(scores[new], y[new], len(classes), member.multi_class,
                                      CAUSAL)  # fmt: skip


def _reselect(model, recordings, config, classes, min_per_class) -> BCIModel:
    new = calibrate(recordings, config=config, prior=model.prior_member)
    if [str(c) for c in new.classes] != classes:
        raise RefitError(f"the classes changed: {list(new.classes)} instead of {classes}")
    per_class = CalibrationOutcome.from_model(new).per_class
    _count_check(np.repeat(np.arange(len(classes)), [per_class[c] for c in classes]), classes,
                 min_per_class)  # fmt: skip
    for key in ("unit", "sources"):  # the session's, not the trial segments'
        if key in (model.metadata or {}):
            new.metadata[key] = model.metadata[key]
    return new


def _check_usable(est, label: str) -> None:
    """Refuse a fit whose factors are not finite or all zero, naming the member by ``label``."""
    which = f" ({label})"
    params = [np.asarray(est.spatial_), np.asarray(est.temporal_), np.asarray(est.intercept_)]
    if not all(np.all(np.isfinite(p)) for p in params):
        raise RefitError(f"degenerate fit: the factors{which} are not finite")
    if not (np.any(params[0]) and np.any(params[1])):
        raise RefitError(f"degenerate fit: the factors{which} are all zero")

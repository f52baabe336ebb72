"""Building a prior across people, and what a prior is: its settings, its check.

:func:`build_prior` trains a prior on recordings of several people (one run each, each
centred on its own mean) and scores it leave-one-person-out (scikit-learn's
:class:`~sklearn.model_selection.LeaveOneGroupOut`): each person's runs, trial by trial with
causal run centring, by the prior trained on the others. :class:`PriorSettings` says how a
prior is trained and how a person's trials join it; the model file keeps them, and
:func:`check_prior` refuses a model that cannot serve as a prior before any work begins.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sblr_rt.calibration.assembly import as_recordings, build_preprocessor, fitted_model
from sblr_rt.calibration.config import load_config
from sblr_rt.calibration.epochs import extract_epochs
from sblr_rt.calibration.member_evidence import HALF_TRIALS_RULE, MemberEvidence
from sblr_rt.calibration.probability import (
    HELD_OUT_PEOPLE,
    fit_probability,
    window_end_scores,
    window_ends,
)
from sblr_rt.calibration.search import run_path
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneGroupOut

from sblr_rt.bci_model import BCIModel, SingleModel
from sblr_rt.bci_model.regions import region_of
from sblr_rt.model import ZeroTrapWarning
from sblr_rt.model.prior_pool import PriorPool
from sblr_rt.validation.constraints import (
    any_value,
    apply_constraints,
    boolean,
    custom,
    integer,
    number,
    option,
)
from sblr_rt.validation.constraints import names as channel_names
from sblr_rt.validation.limits import LIMITS

__all__ = [
    "SETTINGS_CONSTRAINTS",
    "PriorSettings",
    "build_prior",
    "check_prior",
    "fit_pool",
    "person_of",
    "prior_of",
    "prior_settings",
]

#: Fewest channels a prior is built on.
MIN_CHANNELS = 8


@dataclass(frozen=True)
class PriorSettings:
    """How a prior is trained and how a person's trials join it.

    Parameters
    ----------
    features : str
        The prior's feature path (``"covariance"`` or ``"bandpower"``).
    rank : int
        Rank of the prior's bilinear model.
    l2 : float
        ``mu2 = nu2`` of the prior's fit (no l1 penalty: many people's epochs).
    trial_weight : float
        Weight of one of the person's trials against one pooled epoch when the prior is
        adapted to the person.
    auto_min_trials : int
        Fewest trials of the person for which the person's own ``auto`` model is
        calibrated beside the adapted prior.
    half_trials : float
        The person's trials at which the prior and the person's own model weigh the same
        (:func:`~sblr_rt.calibration.member_evidence.weigh_prior`).
    sensorimotor : bool
        Use only the sensorimotor strip (FC, C and CP channels,
        :func:`sblr_rt.bci_model.regions.region_of`) when no ``picks`` are given: what transfers
        between people is motor imagery, not gaze.
    """

    features: str = "covariance"
    rank: int = 8
    l2: float = 1e-1
    trial_weight: float = 20.0
    auto_min_trials: int = 10
    sensorimotor: bool = True
    half_trials: float = 20.0

    def __post_init__(self):
        # A field without a rule yet is kept as given (tests/calibration/test_prior_faults.py
        # asks every field for one).
        rules = {f.name: SETTINGS_CONSTRAINTS.get(f.name, _ANY) for f in dataclasses.fields(self)}
        apply_constraints(self, rules)

    @classmethod
    def from_dict(cls, data) -> PriorSettings:
        """Return the settings a mapping names (a model file's ``metadata.prior.settings``).

        Parameters
        ----------
        data : dict | None
            Field name -> value; None or empty: the defaults.

        Returns
        -------
        settings : PriorSettings

        Raises
        ------
        TypeError, ValueError
            If ``data`` is not a mapping, names a field :class:`PriorSettings` lacks, or a
            value breaks its rule (:data:`SETTINGS_CONSTRAINTS`).
        """
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise TypeError(f"the prior's settings must be a mapping, got {data!r:.80}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ValueError(f"the prior's settings must name only {sorted(known)}, got {unknown}")
        return cls(**data)


_ANY = any_value()


#: The rule of every :class:`PriorSettings` field (:mod:`sblr_rt.validation.constraints`).
#: The bounds keep a fit finite and its size what one machine holds: a larger ``l2`` makes
#: the objective overflow, a larger rank than the features' sides is no bilinear model.
SETTINGS_CONSTRAINTS = {
    "features": option("covariance", "bandpower", "spectral", "waveform"),
    "rank": integer(lambda v: 1 <= v <= LIMITS["channels"][1], "be an integer from 1 to 4096"),
    "l2": number(lambda v: 0 <= v <= 1e4, "be a number from 0 to 1e4"),
    "trial_weight": number(lambda v: 0 < v <= 1e6, "be a number > 0 and <= 1e6"),
    "auto_min_trials": integer(lambda v: 0 <= v <= 10**7, "be an integer from 0 to 1e7"),
    "sensorimotor": boolean(),
    "half_trials": HALF_TRIALS_RULE,
}


def person_of(recording) -> str:
    """Return the person a recording belongs to, from its file name alone.

    A PhysioNet-style name (``S005R04.edf``: ``S005``) or the BIDS ``sub-<label>`` entity of
    the file name (``sub-07_task-mi_eeg.vhdr``: ``sub-07``). Folders are never read: a
    ``sub-`` folder above the file may be a study or a lab, not a person.

    Parameters
    ----------
    recording : Recording | str | Path
        The recording or its file.

    Returns
    -------
    person : str

    Raises
    ------
    ValueError
        If the file name names no person (give it: ``people=``, ``--person``).

    Examples
    --------
    >>> person_of("data/S005/S005R04.edf"), person_of("bids/sub-07/eeg/sub-07_run-1_eeg.vhdr")
    ('S005', 'sub-07')
    """
    name = Path(str(getattr(recording, "source", recording))).name
    match = re.search(r"(?:^|_)(sub-[A-Za-z0-9]+)(?=_|\.|$)", name) or re.match(
        r"(S\d{3})R\d{2}", name
    )
    if match is None:
        raise ValueError(
            f"the person of a recording must be in its file name (S005R04.edf, or a BIDS "
            f"name sub-<label>_...), got {name!r}: give each recording's person "
            "(--person, people=)"
        )
    return match.group(1)


def _people(name: str, values) -> tuple[str, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(
            f"{name!r} must be a list of person names, one per recording, got "
            f"{type(values).__name__} {values!r:.80}"
        )
    out = tuple(str(v) if isinstance(v, str | numbers.Integral) else v for v in values)
    for v in out:
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"{name!r} must name each person with a non-empty text, got {v!r}")
    return out


#: ``people``: one name per recording (a string is not a list of names, nor "" a name).
_PEOPLE = custom(_people, none=True)


_PICKS = channel_names()


_WARMUP = number(limit="trials")  # (0, 1e6] trials


_LOPO = boolean()


def _shared_channels(recs) -> list[str]:
    """Return the channels of the recordings, which hold the same ones (``as_recordings``).

    Raises if they are fewer than a prior needs.
    """
    names = list(recs[0].ch_names)
    if len(names) < MIN_CHANNELS:
        raise ValueError(
            f"the recordings of a prior must share at least {MIN_CHANNELS} channels by name, "
            f"got {len(names)} common to all ({names})"
        )
    return names


def _check_same(recs) -> None:
    first = recs[0]
    for r in recs[1:]:
        if not math.isclose(r.sfreq, first.sfreq, rel_tol=1e-6):
            raise ValueError(
                f"every recording of a prior must have one sampling rate: expected "
                f"{first.sfreq:g} Hz ({first.source}), got {r.sfreq:g} Hz ({r.source})"
            )
        if r.unit != first.unit:
            raise ValueError(
                f"every recording of a prior must have one unit: expected {first.unit!r} "
                f"({first.source}), got {r.unit!r} ({r.source})"
            )


def _person_epochs(recs, pre, class_map, config):
    """Return the run-centred features of each recording (one run each)."""
    out = []
    for rec in recs:
        p = pre if list(rec.ch_names) == list(pre.ch_names) else pre.for_channels(rec.ch_names)
        ep = extract_epochs(
            [rec],
            p,
            class_map,
            config.rejection,
        )
        out.append(ep.centred())
    return out


def fit_pool(pre, Z, y, settings, *, sample_weight=None, warm=None):
    """Fit the prior's estimator on pooled features (scaling already fitted on ``pre``).

    The pool is stored in float32; the fit runs in float64, as every calibration's.
    """
    X = pre.scale(np.asarray(Z, dtype=np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        if warm is not None:
            est = copy.deepcopy(warm)
            est.set_params(warm_start=True)
            est.fit(X, y, sample_weight=sample_weight)
            est.set_params(warm_start=False)
            return est
        l2 = settings.l2
        config = load_config(None)
        est, _, _ = run_path(
            X, y, settings.rank, (l2, l2), [(0.05, 0.05), (0.0, 0.0)], config.fit_params(), stop=1
        )
        return est


def build_prior(
    recordings,
    *,
    classes,
    tmin: float,
    tmax: float,
    people: Sequence[str] | None = None,
    picks: Sequence[str] | None = None,
    settings: PriorSettings | None = None,
    lopo: bool = True,
    warmup: float = 1.0,
    rename_channels=None,
) -> BCIModel:
    """Train a prior on recordings of several people, each run centred on its own mean.

    Parameters
    ----------
    recordings : list of path | Recording
        One run each, of at least two people; any format
        :func:`sblr_rt.io.read_recording` reads.
    classes : dict | list
        Marker value -> class label (as :func:`~sblr_rt.calibration.calibrate`).
    tmin, tmax : float
        The window relative to the cue, seconds.
    people : list of str | None
        The person of each recording; None: :func:`person_of` each.
    picks : list of str | None
        Channels to use, by name; None: every channel common to all recordings.
    settings : PriorSettings | None
        Feature path, rank, penalty and the weight of a person's trial.
    lopo : bool
        Also train one prior per person left out and score that person's runs with it
        (run-centred causally, as a session would): ``metadata["prior"]["lopo"]``.
    warmup : float
        The calibration reference's weight, in trials, in a new run's running mean.
    rename_channels : ChannelRenaming | dict | str | None
        Old label -> new label, applied to every recording as it is read
        (:meth:`sblr_rt.io.Recording.rename_channels`: every recording must hold each old
        label); ``picks`` and the prior name the new labels. None: the recordings' own.

    Returns
    -------
    prior : BCIModel
        A run-centred model with :attr:`~sblr_rt.bci_model.BCIModel.pool`;
        ``metadata["prior"]`` records its kind, people, runs, channels and the
        leave-one-person-out accuracy.

    Raises
    ------
    ValueError
        Fewer than two people, recordings of another rate or unit, fewer than ``MIN_CHANNELS``
        common channels, or a channel of ``picks`` missing from a recording.
    """
    t0 = time.perf_counter()
    settings = PriorSettings() if settings is None else settings
    if not isinstance(settings, PriorSettings):
        raise TypeError(f"'settings' must be a PriorSettings, got {type(settings).__name__}")
    people = _PEOPLE.check("people", people)
    picks = _PICKS.check("picks", picks)
    warmup = _WARMUP.check("warmup", warmup)
    lopo = _LOPO.check("lopo", lopo)
    recs = as_recordings(recordings, rename=rename_channels)
    people = [person_of(r) for r in recs] if people is None else list(people)
    if len(people) != len(recs):
        raise ValueError(
            f"'people' must name the person of each recording ({len(recs)}), got {len(people)}"
        )
    names = sorted(set(people))
    if len(names) < 2:
        raise ValueError(
            f"a prior needs recordings of at least two people, got {len(names)} ({names})"
        )
    _check_same(recs)
    common = _shared_channels(recs)
    if picks is not None:
        missing = [c for c in picks if c not in common]
        if missing:
            raise ValueError(
                f"'picks' must be channels every recording holds; missing from some: {missing}"
            )
        common = [c for c in common if c in set(picks)]
        if len(common) < MIN_CHANNELS:
            raise ValueError(
                f"'picks' must name at least {MIN_CHANNELS} channels (a prior's fewest), "
                f"got {len(common)} ({common})"
            )
    elif settings.sensorimotor:
        strip = [c for c in common if region_of(c) == "sensorimotor"]
        if len(strip) < MIN_CHANNELS:
            raise ValueError(
                f"a sensorimotor prior needs at least {MIN_CHANNELS} FC, C or CP channels "
                f"common to all recordings, got {len(strip)} ({strip}); pass 'picks' or "
                "PriorSettings(sensorimotor=False)"
            )
        common = strip
    # The prior reads its channels only: a stream needs those, whatever else it holds.
    recs = [
        r
        if list(r.ch_names) == common
        else r.pick_channels(common, reason="not read by the prior")
        for r in recs
    ]
    config = load_config(
        None,
        classes=classes,
        tmin=tmin,
        tmax=tmax,
        features=settings.features,
        spatial="none",
        picks=common,
    )
    pre = build_preprocessor(config, recs[0])
    if settings.rank > min(pre.n_rows, pre.n_columns):
        raise ValueError(
            f"'rank' must be at most the features' smaller side ({pre.n_rows} rows x "
            f"{pre.n_columns} times for {len(common)} channels), got {settings.rank}"
        )
    epochs = _person_epochs(recs, pre, config.class_map, config)
    cls = epochs[0].classes
    for ep, r in zip(epochs, recs, strict=True):
        if ep.classes != cls:
            raise ValueError(
                f"every recording of a prior must hold every class: expected {cls}, got "
                f"{ep.classes} in {r.source}"
            )
    group = np.array([names.index(p) for p in people])
    Z = np.concatenate([ep.Z for ep in epochs]).astype(np.float32)
    y = np.concatenate([ep.y for ep in epochs])
    groups = np.concatenate([np.full(len(ep.y), g) for ep, g in zip(epochs, group, strict=True)])
    calibration_mean = np.mean([ep.calibration_mean for ep in epochs], axis=0)
    pre.fit_scaling(Z)
    est = fit_pool(pre, Z, y, settings)
    report, probability = {}, None
    if lopo:
        report, probability = _leave_one_person_out(
            recs, epochs, group, names, pre, settings, warmup, config
        )
    pool = PriorPool(Z=Z, y=y, groups=groups, trial_weight=settings.trial_weight)
    from sblr_rt import __version__

    metadata = {
        "software_version": __version__,
        "sources": [],  # a prior's runs are listed under "prior", not recalibrated from
        "unit": recs[0].unit,
        "config": config.to_dict(),
        "epochs": {
            "found": int(sum(ep.n_found for ep in epochs)),
            "used": len(y),
            "per_class": {c: int(np.sum(y == k)) for k, c in enumerate(cls)},
            "rejected": {},
        },
        "train_accuracy": float(np.mean(est.predict(pre.scale(Z)) == y)),
        "prior": {
            "kind": "prior",
            "people": names,
            "runs": [
                {"person": p, "source": Path(str(r.source)).name}
                for p, r in zip(people, recs, strict=True)
            ],
            "channels": list(common),
            "settings": dataclasses.asdict(settings),
            "lopo": report,
            "seconds": time.perf_counter() - t0,
        },
    }
    if probability is not None:
        metadata["probability"] = probability.to_dict()
    return fitted_model(pre, est, cls, calibration_mean, warmup, metadata, pool)


def _leave_one_person_out(recs, epochs, group, names, pre, settings, warmup, config):
    """Score each person's runs by the prior trained on the others.

    Returns the report (each person's accuracy, the trials run-centred causally) and the
    probability calibration fitted on every person's window-end scores by the prior of the
    others (:func:`~sblr_rt.calibration.probability.fit_probability`; None with too few
    trials): what a prior's score is worth for a person it never saw.
    """
    per_person = {}
    n_classes = len(epochs[0].classes)
    ends = window_ends(config.epochs.tmin, config.epochs.tmax)
    held_out_scores, held_out_y = [], []
    for train, test in LeaveOneGroupOut().split(np.zeros(len(recs)), groups=group):
        Z = np.concatenate([epochs[i].Z for i in train])
        y = np.concatenate([epochs[i].y for i in train])
        p = copy.deepcopy(pre)
        p.fit_scaling(Z)
        est = fit_pool(p, Z, y, settings)
        ref = np.mean([epochs[i].calibration_mean for i in train], axis=0)
        model = fitted_model(p, est, epochs[0].classes, ref, warmup)
        record = MemberEvidence(n_classes=n_classes)
        for i in test:
            # the run's raw features in time order, centred causally as a session would
            ep = epochs[i]
            raw_Z = ep.Z + ep.calibration_mean  # the run mean centred() removed (one run each)
            scores = _run_scores(model, raw_Z)
            record = record + MemberEvidence.from_scores(scores, ep.y, n_classes, est.multi_class)
        if record.n_trials:
            s, yy = window_end_scores(
                model, [recs[i] for i in test], config, list(epochs[0].classes), ends, refit=False
            )
            held_out_scores.append(s)
            held_out_y.append(yy)
        per_person[names[group[test[0]]]] = record.accuracy
    accs = [a for a in per_person.values() if a is not None]
    report = {
        "per_person": per_person,
        "mean": float(np.mean(accs)) if accs else None,
        "worst": float(np.min(accs)) if accs else None,
        "protocol": "each person's runs scored trial by trial with causal run centring by "
        "the prior trained on the other people",
    }
    if not held_out_y:
        return report, None
    how = HELD_OUT_PEOPLE.format(n=sum(map(len, held_out_y)), people=len(held_out_y))
    scores = np.concatenate(held_out_scores, axis=1)
    return report, fit_probability(scores, np.concatenate(held_out_y), ends, est.multi_class, how)


def _run_scores(model: BCIModel, Z: np.ndarray) -> np.ndarray:
    """Return the scores of one run's unscaled features in order, centred causally."""
    scores = model.decision_function_features(model.preprocessor.scale(Z))
    state = model.run_centring.start()
    out = np.array([state.step(np.atleast_1d(s)) for s in scores])
    return out.reshape(scores.shape)


def prior_settings(model: BCIModel) -> PriorSettings:
    """Return the :class:`PriorSettings` a prior (or a model adapted from one) was built with.

    Settings the file does not name take today's defaults.
    """
    member = prior_of(model)
    return PriorSettings.from_dict(member.record.prior.settings)


def prior_of(model: BCIModel) -> SingleModel:
    """Return the model's prior: itself, or the member that carries the pool (else raise)."""
    if model.prior_member is not None:
        return model.prior_member
    raise ValueError(
        "'prior' must be a prior built by build_prior (a model with a pool of training "
        "epochs), got a model without one"
    )


def check_prior(model, *, source="'prior'", class_map: dict | None = None) -> BCIModel:
    """Return ``model`` if it can serve as a prior; raise in one line otherwise.

    A model file's header is checked on load (types and ranges,
    :mod:`sblr_rt.io.model_file`); this adds what only the calibration knows: the model
    carries a pool, and its recorded settings are :class:`PriorSettings` (no unknown field,
    every value within its rule), so that a calibration or a refit with it never fails
    after the work has begun.

    Parameters
    ----------
    model : BCIModel
        A prior, a model adapted from one, or an ensemble with one.
    source : str
        How to name the prior in messages (``"'--prior' x.sblr.npz"``).
    class_map : dict | None
        The calibration's marker -> class map: its labels must be the prior's classes
        (None: not checked).

    Returns
    -------
    model : BCIModel

    Raises
    ------
    ValueError
        If the model has no pool, its settings are not valid :class:`PriorSettings`, or
        the class map's labels are not its classes.
    """
    if not isinstance(model, BCIModel) or model.prior_member is None:
        raise ValueError(
            f"{source} must be a prior built by build_prior (a model with a pool of training "
            f"epochs), got {'a model without one' if isinstance(model, BCIModel) else model!r}"
        )
    for m in {id(model): model, id(model.prior_member): model.prior_member}.values():
        settings = m.record.prior.settings
        try:
            PriorSettings.from_dict(settings)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source} has settings that are not valid: {exc}") from None
    if class_map is not None:
        _check_classes(model, class_map, source)
    return model


def _check_classes(prior: BCIModel, class_map: dict, source: str) -> None:
    """Refuse a class map whose labels are not the prior's (the prior decides by them)."""
    labels = list(dict.fromkeys(class_map.values()))
    if sorted(labels) == sorted(prior.classes):
        return
    markers = list(class_map)
    hint = ""
    if len(markers) == len(prior.classes):
        pairs = ",".join(f"{m}={c}" for m, c in zip(markers, prior.classes, strict=True))
        hint = f"; map the markers to them, as in --classes {pairs}"
    raise ValueError(
        f"the calibration's classes must be those of {source}, {list(prior.classes)}: got "
        f"{labels}{hint}"
    )

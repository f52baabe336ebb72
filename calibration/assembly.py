"""The parts a calibration assembles: recordings, the preprocessor built for them, a model.

:func:`~sblr_rt.calibration.calibrate` and :func:`~sblr_rt.calibration.build_prior` read
recordings with :func:`as_recordings`, build the preprocessing the configuration describes
with :func:`build_preprocessor` (window, channels, spatial stage, EOG regression) and
assemble the fitted parts into a :class:`~sblr_rt.bci_model.BCIModel` with
:func:`fitted_model`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from pathlib import Path

import numpy as np
from sblr_rt.calibration.config import CalibrationConfig, PreprocessingSettings

from sblr_rt.bci_model import BCIModel, SingleModel
from sblr_rt.model.link import proba_from_scores
from sblr_rt.model.run_centring import RunCentring
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.preprocessing.spatial import eog_regression, spatial_operator
from sblr_rt.timing import DEFAULT_WINDOW  # the window of continuous recordings

logger = logging.getLogger("sblr_rt.calibration")

__all__ = [
    "SESSION_TRIAL_SOURCE",
    "as_recordings",
    "build_preprocessor",
    "default_window",
    "eog_matrix",
    "excluded_channels",
    "fitted_model",
    "objective_traces",
    "run_of_each",
]

#: How the recordings of a session's decided trials name their source (one trial each);
#: together they are one run.
SESSION_TRIAL_SOURCE = "session trial"


def as_recordings(recordings, *, rename=None) -> list:
    """Return the recordings as Recording objects, reading those given as paths.

    ``rename``: a :class:`~sblr_rt.io.labels.ChannelRenaming` (or what it parses) applied
    to each (:meth:`~sblr_rt.io.Recording.rename_channels`), before their channels are
    compared.
    """
    from sblr_rt.io.labels import ChannelRenaming
    from sblr_rt.io.reading import Recording, read_recording

    rename = ChannelRenaming.parse(rename)

    if isinstance(recordings, str | Path | Recording):
        recordings = [recordings]
    out = []
    for rec in recordings:
        if isinstance(rec, str | Path):
            rec = read_recording(rec)
        elif not isinstance(rec, Recording):
            raise TypeError(
                f"'recordings' must hold paths or Recording objects, got {type(rec).__name__}"
            )
        out.append(rec.rename_channels(rename))
    if not out:
        raise ValueError("'recordings' must name at least one recording, got none")
    return _common_channels(out)


def check_against_model(recs: list, model, *, what: str = "the model") -> list:
    """Return the recordings checked against a model and brought to its unit.

    The one check of recordings that join a model already trained (a prior refined by a
    person's trials): the model's channels must be there and the rate the same; a
    recording in another voltage unit than the model's is rescaled by the constant factor
    (as a stream is in ``run``), so that the model's scores, run centring and label stay
    right. A recording or model of unknown unit is taken as it is.

    Parameters
    ----------
    recs : list of Recording
        The recordings.
    model : BCIModel
        The model they join.
    what : str
        How to name the model in messages.

    Returns
    -------
    recs : list of Recording
        In the model's unit.

    Raises
    ------
    ValueError
        If a recording lacks some of the model's channels or has another rate.
    """
    from sblr_rt.units import normalize_unit, unit_factor

    unit = normalize_unit(model.record.unit)
    needed = [c for m in model.members for c in m.preprocessor.pick_names]
    out = []
    for rec in recs:
        missing = sorted({c for c in needed if c not in rec.ch_names})
        if missing:
            raise ValueError(
                f"the recording lacks channels of {what}: {missing} (from {rec.source})"
            )
        if not math.isclose(rec.sfreq, model.sfreq, rel_tol=1e-6):
            raise ValueError(
                f"the recording must have the rate of {what}: expected {model.sfreq:g} Hz, "
                f"got {rec.sfreq:g} Hz ({rec.source})"
            )
        own = normalize_unit(rec.unit)
        if unit is not None and own is not None and own != unit:
            factor = unit_factor(own, unit)
            logger.info(
                "%s is in %s, %s in %s: its samples are multiplied by %g.",
                rec.source, own, what, unit, factor,
            )  # fmt: skip
            rec = dataclasses.replace(rec, data=rec.data * factor, unit=unit)
        out.append(rec)
    return out


#: Why a good EEG channel of one recording is left out of the model.
_NOT_IN_ALL = "not in every recording"


def excluded_channels(recs: list) -> dict[str, str]:
    """Return why each channel is out of the model (the reader's reason where one said)."""
    out: dict[str, str] = {}
    for rec in recs:
        for name, why in rec.excluded.items():
            if out.get(name, _NOT_IN_ALL) == _NOT_IN_ALL:
                out[name] = why
    return out


def _common_channels(recs: list) -> list:
    """Keep the channels every recording has (a channel bad in one run goes from all).

    Readers keep the good EEG channels of each file, so runs of one session can differ by
    a channel marked bad in one of them; the model then reads only the channels all of
    them share, in the first recording's order, and says which it left out.
    """
    for r in recs:  # else the second channel's data would be read under the first's name
        twice = sorted({c for c in r.ch_names if list(r.ch_names).count(c) > 1})
        if twice:
            raise ValueError(
                f"every channel of a recording must have its own label, got {twice} twice in "
                f"{r.source}"
            )
    common = [c for c in recs[0].ch_names if all(c in r.ch_names for r in recs[1:])]
    if not common:
        raise ValueError(
            "the recordings share no channel: expected the same EEG channels in every run, "
            f"got {[r.ch_names[:5] for r in recs]} (first five of each)"
        )
    out = []
    for rec in recs:
        if rec.ch_names != common:
            extra = [c for c in rec.ch_names if c not in common]
            if extra:
                logger.warning(
                    "%s: channels %s left out: not (good) EEG in every recording",
                    rec.source,
                    extra,
                )
            rec = rec.pick_channels(common, reason=_NOT_IN_ALL)
        out.append(rec)
    return out


def default_window(config: CalibrationConfig, recording) -> tuple[float, float]:
    """Resolve ``tmin``/``tmax``: the whole trial for epoched files, else 0 to 3.5 s.

    Parameters
    ----------
    config : CalibrationConfig
        Configuration (its window wins where set).
    recording : Recording
        First recording.

    Returns
    -------
    tmin, tmax : float
        The window in seconds.
    """
    if recording.epoch_length:
        default = (0.0, recording.epoch_length / recording.sfreq)
    else:
        default = DEFAULT_WINDOW
    tmin = default[0] if config.epochs.tmin is None else config.epochs.tmin
    tmax = default[1] if config.epochs.tmax is None else config.epochs.tmax
    if tmax <= tmin:
        raise ValueError(f"'tmax' must exceed 'tmin', got tmin={tmin}, tmax={tmax}")
    return float(tmin), float(tmax)


def build_preprocessor(config: CalibrationConfig, recording, eog=None) -> Preprocessor:
    """Build the (unfitted) preprocessor the configuration describes for a recording.

    Parameters
    ----------
    config : CalibrationConfig
        Configuration.
    recording : Recording
        First recording (channel names and order, rate).
    eog : ndarray, shape (n_picks, n_picks) | None
        The EOG regression (:func:`eog_matrix`), applied before the spatial stage.

    Returns
    -------
    pre : Preprocessor
        Not fitted.
    """
    from sblr_rt.io.labels import close_matches_text

    tmin, tmax = default_window(config, recording)
    p = config.preprocessing
    if p.picks is not None:
        missing = [c for c in p.picks if c not in recording.ch_names]
        if missing:
            raise ValueError(
                f"'picks' must name channels of the recordings, got some missing from "
                f"{recording.source}: {missing}; available: {recording.ch_names}"
                f"{close_matches_text(missing, recording.ch_names)}"
            )
    stage = _spatial_stage(p, len(recording.ch_names) if p.picks is None else len(p.picks))
    spatial, matrix = stage, None
    if eog is not None:  # the regression first, then the stage: one matrix
        picks = list(p.picks or recording.ch_names)
        matrix = eog if stage is None else spatial_operator(stage, picks) @ eog
        spatial = "eog" if stage is None else f"{stage}+eog"
    waveform = p.features == "waveform"
    return Preprocessor(
        ch_names=recording.ch_names,
        sfreq=recording.sfreq,
        tmin=tmin,
        tmax=tmax,
        picks=p.picks,
        features=p.features,
        l_freq=p.l_freq if waveform else None,
        h_freq=p.h_freq if waveform else None,
        bands=p.bands,
        n_times=None if p.features in ("spectral", "covariance") else p.n_times,
        baseline=p.baseline if waveform else None,
        scaling=p.scaling,
        filter_length=p.filter_length,
        spatial=spatial,
        spatial_matrix=matrix,
        reference=p.reference,
    )


def eog_matrix(config: CalibrationConfig, recordings) -> np.ndarray | None:
    """Return the EOG regression of ``config.preprocessing.eog`` fitted on the runs, or None.

    Parameters
    ----------
    config : CalibrationConfig
        Configuration (``eog``, ``picks``).
    recordings : list of Recording
        The calibration runs (their continuous samples).

    Returns
    -------
    R : ndarray, shape (n_picks, n_picks) | None
        See :func:`sblr_rt.preprocessing.spatial.eog_regression`.
    """
    eog = config.preprocessing.eog
    if eog is None:
        return None
    from sblr_rt.io.labels import close_matches_text

    picks = list(config.preprocessing.picks or recordings[0].ch_names)
    missing = [c for c in eog if c not in picks]
    if missing:
        raise ValueError(
            f"'eog' must name channels of the model, got {list(eog)} (missing {missing}; "
            f"channels: {picks}){close_matches_text(missing, picks)}"
        )
    data = []
    for rec in recordings:
        missing = [c for c in picks if c not in rec.ch_names]
        if missing:
            raise ValueError(f"'eog': channels {missing} are missing from {rec.source}")
        data.append(rec.data[[rec.ch_names.index(c) for c in picks]])
    R = eog_regression(data, picks, eog)
    logger.info("EOG regression: %s regressed out of %d channels", list(eog), len(picks))
    return R


def _spatial_stage(settings: PreprocessingSettings, n_channels: int) -> str | None:
    """Return the spatial stage of a fixed path, with ``"default"`` resolved."""
    if settings.spatial != "default":
        return settings.spatial
    linear_or_covariance = settings.features in ("waveform", "covariance")
    return None if linear_or_covariance or n_channels < 3 else "car"


def fitted_model(
    pre, est, classes, calibration_mean, warmup, metadata=None, pool=None
) -> BCIModel:
    """Return one fitted model, run-centred when its epochs were.

    Parameters
    ----------
    pre : Preprocessor
        Fitted.
    est : SparseBilinearLogisticRegression
        Fitted on ``pre``'s (run-centred) output.
    classes : list of str
        The class labels.
    calibration_mean : ndarray | None
        The calibration reference of run-centred epochs (:attr:`EpochSet.calibration_mean`);
        None: no run centring.
    warmup : float
        The reference's weight in a new run's running mean, in trials.
    metadata : dict | None
        As for :class:`~sblr_rt.bci_model.BCIModel`.
    pool : PriorPool | None
        A prior's training pool (:attr:`BCIModel.pool`).

    Returns
    -------
    model : BCIModel
    """
    centring = None
    if calibration_mean is not None:
        centring = RunCentring.from_fit(
            lambda Z: est.decision_function(pre.scale(Z)), calibration_mean, warmup
        )
    model = SingleModel(
        preprocessor=pre,
        estimator=est,
        classes=classes,
        metadata=metadata,
        run_centring=centring,
        pool=pool,
    )
    return model


#: The metadata a member of an ensemble keeps of its own (the rest is the ensemble's).
MEMBER_KEYS = ("name", "prior", "train_accuracy", "objective")


def member_metadata(name: str, est, train_scores, y) -> dict:
    """Return one member's own metadata: its name, training accuracy and objective trace.

    Parameters
    ----------
    name : str
        The calibration candidate it came from (``"waveform/car/10t"``).
    est : SparseBilinearLogisticRegression
        Its fitted estimator.
    train_scores : ndarray, shape (n_epochs,) or (n_epochs, n_classes)
        Its scores of the training epochs.
    y : ndarray of int, shape (n_epochs,)
        The training labels (indices into the classes).
    """
    return {
        "name": name,
        "train_accuracy": train_accuracy(train_scores, y, est.multi_class),
        "objective": objective_traces(est),
    }


def train_accuracy(scores, y, multi_class: str = "ovr") -> float:
    """Return the accuracy of the labels ``scores`` give against ``y`` (indices)."""
    proba = proba_from_scores(np.asarray(scores), multi_class)
    return float(np.mean(np.argmax(proba, axis=1) == np.asarray(y)))


def objective_traces(est):
    """Return a fitted estimator's objective trace(s) as JSON lists (one per class in OvR)."""
    obj = getattr(est, "objective_", None)
    if obj is None:
        return None
    if isinstance(obj, list):
        return [np.asarray(o).tolist() for o in obj]
    return np.asarray(obj).tolist()


def run_of_each(recordings) -> list[int]:
    """Return the run of each recording: its index, and -1 for all of a session's trials.

    Each calibration run is centred on its own mean; the single-trial recordings of a
    session (:data:`SESSION_TRIAL_SOURCE`) are one run together.
    """
    return [
        -1 if str(r.source).startswith(SESSION_TRIAL_SOURCE) else i
        for i, r in enumerate(recordings)
    ]

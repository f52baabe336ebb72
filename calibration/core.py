"""``calibrate``: recordings -> epochs -> selection -> a fitted :class:`BCIModel`."""

from __future__ import annotations

import datetime as _dt
import logging
import time
from pathlib import Path

import numpy as np
from sblr_rt.calibration.auto import select_auto
from sblr_rt.calibration.config import CalibrationConfig, load_config
from sblr_rt.calibration.epochs import extract_epochs
from sblr_rt.calibration.selection import select

from sblr_rt.bci_model import BCIModel
from sblr_rt.model.run_centring import RunCentring
from sblr_rt.model.solver import single_threaded_blas
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.preprocessing.spatial import eog_regression, spatial_operator

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["build_preprocessor", "calibrate", "default_window"]

#: Window of continuous recordings when the configuration gives none (the paper's cue).
DEFAULT_WINDOW = (0.0, 3.5)


def _as_recordings(recordings) -> list:
    from sblr_rt.io.recordings import Recording, read_recording

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
        out.append(rec)
    if not out:
        raise ValueError("'recordings' must name at least one recording, got none")
    return _common_channels(out)


#: Why a good EEG channel of one recording is left out of the model.
_NOT_IN_ALL = "not in every recording"


def _excluded(recs: list) -> dict[str, str]:
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
    tmin = default[0] if config.tmin is None else config.tmin
    tmax = default[1] if config.tmax is None else config.tmax
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
    tmin, tmax = default_window(config, recording)
    if config.picks is not None:
        missing = [c for c in config.picks if c not in recording.ch_names]
        if missing:
            raise ValueError(
                f"channels named by the configuration are missing from {recording.source}: "
                f"{missing}; available: {recording.ch_names}"
            )
    stage = _spatial_stage(
        config, len(recording.ch_names) if config.picks is None else len(config.picks)
    )
    spatial, matrix = stage, None
    if eog is not None:  # the regression first, then the stage: one matrix
        picks = list(config.picks or recording.ch_names)
        matrix = eog if stage is None else spatial_operator(stage, picks) @ eog
        spatial = "eog" if stage is None else f"{stage}+eog"
    return Preprocessor(
        ch_names=recording.ch_names,
        sfreq=recording.sfreq,
        tmin=tmin,
        tmax=tmax,
        picks=config.picks,
        features=config.features,
        l_freq=config.l_freq if config.features == "waveform" else None,
        h_freq=config.h_freq if config.features == "waveform" else None,
        bands=config.bands,
        n_times=None if config.features in ("spectral", "covariance") else config.n_times,
        baseline=config.baseline if config.features == "waveform" else None,
        scaling=config.scaling,
        filter_length=config.filter_length,
        spatial=spatial,
        spatial_matrix=matrix,
        reference=config.reference,
    )


def eog_matrix(config: CalibrationConfig, recordings) -> np.ndarray | None:
    """Return the EOG regression of ``config.eog`` fitted on the runs, or None.

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
    if config.eog is None:
        return None
    picks = list(config.picks or recordings[0].ch_names)
    data = []
    for rec in recordings:
        missing = [c for c in picks if c not in rec.ch_names]
        if missing:
            raise ValueError(f"'eog': channels {missing} are missing from {rec.source}")
        data.append(rec.data[[rec.ch_names.index(c) for c in picks]])
    R = eog_regression(data, picks, config.eog)
    logger.info("EOG regression: %s regressed out of %d channels", list(config.eog), len(picks))
    return R


def _spatial_stage(config: CalibrationConfig, n_channels: int) -> str | None:
    """Return the spatial stage of a fixed path, with ``"default"`` resolved."""
    if config.spatial != "default":
        return config.spatial
    linear_or_covariance = config.features in ("waveform", "covariance")
    return None if linear_or_covariance or n_channels < 3 else "car"


def calibrate(
    recordings,
    *,
    config: CalibrationConfig | str | Path | None = None,
    progress=None,
    **overrides,
) -> BCIModel:
    """Calibrate a model on labelled recordings.

    Parameters
    ----------
    recordings : path | Recording | list of them
        One or more runs (concatenated runs of one session); any format
        :func:`sblr_rt.io.read_recording` reads.
    config : CalibrationConfig | path | None
        Configuration object or TOML file; None for the defaults.
    progress : callable | None
        ``progress(done, total, stage)`` during the search, e.g.
        :class:`sblr_rt.calibration.progress.TerminalProgress`.
    **overrides
        Configuration fields that win over ``config`` (None values ignored), e.g.
        ``classes=["T1", "T2"]``, ``features="bandpower"``, ``cv="loo"``.

    Returns
    -------
    model : BCIModel
        Fitted; ``model.metadata`` holds the selection report, epoch counts and the
        configuration. Save it with :func:`sblr_rt.io.save_model`.

    Examples
    --------
    Two runs of the shipped PhysioNet recording (paths from the repository's root), with
    the feature path, spatial stage, rank and penalties chosen by cross-validation:

    >>> import sblr_rt
    >>> from sblr_rt.calibration import calibrate
    >>> runs = [f"recordings/physionet-eegmmidb-S001/S001R{r:02d}.edf" for r in (6, 10)]
    >>> model = calibrate(runs, classes={"T1": "fists", "T2": "feet"}, tmin=0.5, tmax=3.5)
    >>> model
    <BCIModel | ..., classes ['fists', 'feet'], ..., 64 channels at 160 Hz, ...>
    >>> path = sblr_rt.save_model(model, "s001.sblr.npz")
    >>> sblr_rt.load_model("s001.sblr.npz").classes
    ['fists', 'feet']

    Notes
    -----
    The calibration runs with BLAS limited to one thread (``threadpoolctl``), as the
    solver's fits always did: its matrix products are small, and OpenBLAS's threads cost
    more than they give there. ``sblr-rt calibrate`` at the paper's scale on two cores
    took 3.7-4.2 s with OpenBLAS's default two threads outside the fits and 3.4-3.6 s with
    one.
    """
    with single_threaded_blas():
        return _calibrate(recordings, config=config, progress=progress, **overrides)


def _calibrate(recordings, *, config, progress, **overrides) -> BCIModel:
    """:func:`calibrate`'s work, with BLAS limited to one thread."""
    from sblr_rt import __version__

    t0 = time.perf_counter()
    if isinstance(config, CalibrationConfig):
        config = config.replace(**overrides)
    else:
        config = load_config(config, **overrides)
    recs = _as_recordings(recordings)
    eog = eog_matrix(config, recs)
    members = []
    if config.features == "auto":
        pre, est, epochs, report, members = select_auto(
            recs,
            config,
            build_preprocessor=lambda c: build_preprocessor(c, recs[0], eog),
            progress=progress,
        )
    else:
        pre = build_preprocessor(config, recs[0], eog)
        epochs = extract_epochs(
            recs,
            pre,
            config.class_map,
            reject=config.reject,
            flat=config.flat,
            clip_run=config.clip_run,
        )
        if config.recentre:
            epochs = epochs.centred()
        est, report, _ = select(
            epochs.Z, epochs.y, config=config, center=not pre.is_linear, progress=progress
        )
        pre.fit_scaling(epochs.Z)  # what select() scaled the final fit's input with
    logger.info(
        "%d epochs (%s) of shape %s; rejected %s",
        len(epochs.y),
        epochs.per_class(),
        epochs.Z.shape[1:],
        epochs.rejected,
    )
    X = pre.scale(epochs.Z)
    train_acc = float(np.mean(est.predict(X) == epochs.y))
    metadata = {
        "software_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sources": [str(r.source) for r in recs],
        "unit": recs[0].unit,
        "excluded_channels": _excluded(recs),
        "config": config.to_dict(),
        "epochs": {
            "found": epochs.n_found,
            "used": len(epochs.y),
            "per_class": epochs.per_class(),
            "rejected": epochs.rejected,
            "markers": epochs.markers,
        },
        "selection": report,
        "train_accuracy": train_acc,
        "objective": _objective_list(est),
        "seconds": time.perf_counter() - t0,
    }
    if len(members) > 1:
        return BCIModel.ensemble(
            [
                fitted_model(p, e, epochs.classes, ref, config.recentre_warmup)
                for p, e, ref in members
            ],
            metadata,
        )
    return fitted_model(
        pre, est, epochs.classes, epochs.reference, config.recentre_warmup, metadata
    )


def fitted_model(pre, est, classes, reference, warmup, metadata=None) -> BCIModel:
    """Return one fitted model, run-centred when its epochs were.

    Parameters
    ----------
    pre : Preprocessor
        Fitted.
    est : SparseBilinearLogisticRegression
        Fitted on ``pre``'s (run-centred) output.
    classes : list of str
        The class labels.
    reference : ndarray | None
        The calibration reference of run-centred epochs (:attr:`EpochSet.reference`);
        None: no run centring.
    warmup : float
        The reference's weight in a new run's running mean, in trials.
    metadata : dict | None
        As for :class:`~sblr_rt.bci_model.BCIModel`.

    Returns
    -------
    model : BCIModel
    """
    centring = None
    if reference is not None:
        centring = RunCentring.from_fit(
            lambda Z: est.decision_function(pre.scale(Z)), reference, warmup
        )
    model = BCIModel(
        preprocessor=pre,
        estimator=est,
        classes=classes,
        metadata=metadata,
        run_centring=centring,
    )
    return model


def _objective_list(est):
    obj = getattr(est, "objective_", None)
    if obj is None:
        return None
    if isinstance(obj, list):
        return [np.asarray(o).tolist() for o in obj]
    return np.asarray(obj).tolist()

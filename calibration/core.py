"""``calibrate``: recordings -> epochs -> selection -> a fitted :class:`BCIModel`."""

from __future__ import annotations

import datetime as _dt
import logging
import os
import time
from pathlib import Path

import numpy as np
from sblr_rt.calibration.assembly import (
    as_recordings,
    build_preprocessor,
    check_against_model,
    default_window,
    eog_matrix,
    excluded_channels,
    fitted_model,
    member_metadata,
    objective_traces,
    run_of_each,
    train_accuracy,
)
from sblr_rt.calibration.auto import select_auto
from sblr_rt.calibration.config import CalibrationConfig, load_config
from sblr_rt.calibration.epochs import extract_epochs
from sblr_rt.calibration.prior import (
    MAX_TRIALS,
    check_prior,
    combine_with_prior,
    first_trials,
    start_from_prior,
)
from sblr_rt.calibration.probability import calibrate_probability
from sblr_rt.calibration.selection import select

from sblr_rt.bci_model import BCIModel, EnsembleModel
from sblr_rt.bci_model.search_record import name_candidate
from sblr_rt.model.solver import single_threaded_blas

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["build_preprocessor", "calibrate", "default_window", "fitted_model"]


def calibrate(
    recordings,
    *,
    config: CalibrationConfig | str | Path | None = None,
    progress=None,
    prior=None,
    max_trials: int | None = None,
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
    prior : BCIModel | path | None
        A prior across people (:func:`~sblr_rt.calibration.build_prior`) or its file:
        with few trials the prior, refitted with the person's trials, is the model; with
        more, the person's own model is calibrated too and the prior's weight in the
        result is chosen by cross-validation (:mod:`sblr_rt.calibration.prior`). The
        window is the prior's.
    max_trials : int | None
        Use only the first ``max_trials`` class cues, in time order (the first recording
        first); None: all.
    **overrides
        Configuration fields that win over ``config`` (None values ignored), e.g.
        ``classes=["T1", "T2"]``, ``features="bandpower"``, ``cv="loo"``, or
        ``rename_channels="EEG C3-REF=C3,EEG C4-REF=C4"`` (applied to every recording as it
        is read; :class:`sblr_rt.io.labels.ChannelRenaming`).

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
    <EnsembleModel | ensemble, classes ['fists', 'feet'], ..., 64 channels at 160 Hz, ...>
    >>> path = sblr_rt.save_model(model, "s001.sblr.npz")
    >>> sblr_rt.load_model("s001.sblr.npz").classes
    ['fists', 'feet']

    Notes
    -----
    The calibration runs with BLAS limited to one thread (``threadpoolctl``), as the
    solver's fits always did: its matrix products are small, and BLAS threads cost more
    than they give there (docs/benchmarks.md, "Calibration search").
    """
    with single_threaded_blas():
        if prior is None and max_trials is None:
            return _calibrate(recordings, config=config, progress=progress, **overrides)
        max_trials = MAX_TRIALS.check("max_trials", max_trials)  # before any file is read
        if isinstance(config, CalibrationConfig):
            config = config.replace(**overrides)
        else:
            config = load_config(config, **overrides)
        recs = as_recordings(recordings, rename=config.preprocessing.rename_channels)
        if prior is None:
            recs = first_trials(recs, config.class_map, max_trials)
            if not recs:
                raise ValueError("'max_trials' left no class cue in the recordings")
            return _calibrate(recs, config=config, progress=progress, renamed=True)
        if not isinstance(prior, BCIModel):
            if not isinstance(prior, str | os.PathLike):
                raise TypeError(
                    "'prior' must be a prior (a BCIModel) or the path of its file, got "
                    f"{type(prior).__name__} {prior!r:.80}"
                )
            from sblr_rt.io.model_file import load_model

            prior = load_model(prior)
        check_prior(prior, class_map=config.class_map)
        _check_prior_channels(prior, recs)
        recs = check_against_model(recs, prior, what="the prior")
        config = config.replace(tmin=prior.tmin, tmax=prior.tmax)
        start = start_from_prior(recs, config, prior, max_trials=max_trials)
        person, why = None, None
        if start.wants_person:
            try:
                person = _calibrate(
                    start.recordings, config=config, progress=progress, renamed=True
                )
            except ValueError as err:  # e.g. too few trials of a class for the CV's folds
                why = f"the person's own model could not be calibrated: {err}"
                logger.info("%s; the adapted prior alone.", why)
        model = combine_with_prior(start.adapted, person, start.recordings, config,
                                   prior_evidence=start.evidence, why_alone=why)  # fmt: skip
        # The prior was laid on the recording's channels to read it; the model reads only
        # its members' picks, so a stream (or cap) needs those, not the recording's others.
        model = model.for_channels(model.picks)
        return _dated(model, prior)


def _check_prior_channels(prior: BCIModel, recs) -> None:
    """Refuse recordings that lack channels the prior reads, naming close labels."""
    from sblr_rt.io.labels import close_matches_text

    for rec in recs:
        missing = [c for c in prior.picks if c not in rec.ch_names]
        if missing:
            raise ValueError(
                f"the recordings must hold the {len(prior.picks)} channels the prior reads, "
                f"got {len(missing)} missing from {rec.source}: {', '.join(missing)}"
                f"{close_matches_text(missing, rec.ch_names)}"
            )


def _dated(model: BCIModel, prior: BCIModel) -> BCIModel:
    """Date a model calibrated with ``prior`` now; the prior's own date goes to its notes."""
    from sblr_rt import __version__

    md = model.metadata
    built = prior.record.created
    if built and "prior" in md:
        md["prior"] = {**model.record.prior.to_dict(), "created": built}
    md["created"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    md["software_version"] = __version__
    return model


def _calibrate(recordings, *, config, progress, renamed=False, **overrides) -> BCIModel:
    """:func:`calibrate`'s work, with BLAS limited to one thread.

    ``renamed``: the recordings' channels already carry the configuration's new labels
    (``rename_channels`` is not applied again).
    """
    from sblr_rt import __version__

    t0 = time.perf_counter()
    if isinstance(config, CalibrationConfig):
        config = config.replace(**overrides)
    else:
        config = load_config(config, **overrides)
    rename = None if renamed else config.preprocessing.rename_channels
    recs = as_recordings(recordings, rename=rename)
    eog = eog_matrix(config, recs)
    members = ()
    if config.preprocessing.features == "auto":
        selection = select_auto(
            recs,
            config,
            build_preprocessor=lambda c: build_preprocessor(c, recs[0], eog),
            progress=progress,
        )
        members, epochs, report = selection.members, selection.epochs, selection.report
        pre, est = selection.chosen.preprocessor, selection.chosen.estimator
    else:
        pre = build_preprocessor(config, recs[0], eog)
        epochs = extract_epochs(
            recs,
            pre,
            config.class_map,
            config.rejection,
        )
        if config.online.recentre:
            epochs = epochs.centred(run_of_each(recs))
        est, report, scaling = select(
            epochs.Z, epochs.y, config=config, center=pre.centres_rows, progress=progress,
            name=name_candidate(pre.features, pre.spatial),
        )  # fmt: skip
        pre.use_scaling(scaling)  # what select() scaled the final fit's input with
    logger.info(
        "%d epochs (%s) of shape %s; rejected %s",
        len(epochs.y),
        epochs.per_class(),
        epochs.Z.shape[1:],
        epochs.rejected,
    )
    metadata = {
        "software_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sources": [str(r.source) for r in recs],
        "unit": recs[0].unit,
        "excluded_channels": excluded_channels(recs),
        "config": config.to_dict(),
        "epochs": {
            "found": epochs.n_found,
            "used": len(epochs.y),
            "per_class": epochs.per_class(),
            "rejected": epochs.rejected,
            "markers": epochs.markers,
        },
        "selection": report,
        "seconds": time.perf_counter() - t0,
    }
    if len(members) > 1:  # the ensemble's own figures; each member keeps its own
        singles = [
            fitted_model(m.preprocessor, m.estimator, epochs.classes, m.calibration_mean,
                         config.online.recentre_warmup,
                         member_metadata(m.name, m.estimator, m.scores, epochs.y))
            for m in members
        ]  # fmt: skip
        model = EnsembleModel(singles, metadata=metadata)
        scores = np.tensordot(model.member_weights, [m.scores for m in members], axes=1)
        model.metadata["train_accuracy"] = train_accuracy(scores, epochs.y, model.multi_class)
        return _with_probability(model, recs, config)
    X = pre.scale(epochs.Z)
    metadata["train_accuracy"] = float(np.mean(est.predict(X) == epochs.y))
    metadata["objective"] = objective_traces(est)
    if members:
        metadata["name"] = members[0].name
    model = fitted_model(
        pre, est, epochs.classes, epochs.calibration_mean, config.online.recentre_warmup, metadata
    )
    return _with_probability(model, recs, config)


def _with_probability(model: BCIModel, recs, config) -> BCIModel:
    """Fit and store the model's probability calibration (none with too few trials)."""
    t0 = time.perf_counter()
    calibration = calibrate_probability(model, recs, config, model.classes)
    if calibration is not None:
        model.metadata["probability"] = calibration.to_dict()
        model.metadata["seconds"] = (model.record.seconds or 0.0) + (time.perf_counter() - t0)
        logger.info(
            "probability calibration: sharpness %s at window ends %s s",
            [round(a, 2) for a in calibration.sharpness],
            list(calibration.ends),
        )
    return model

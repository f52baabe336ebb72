"""``features="auto"``: choose the feature path, spatial stage, rank and penalties per person.

On real people the path that carries the class differs from person to person: a slow
potential (waveform), power changing over the trial (band power), which frequencies
change (spectral), or which channels co-vary (covariance), seen through the raw channels,
their common average or their surface Laplacian. ``auto`` evaluates them all on the
person's own calibration epochs and averages the best few, with every choice nested
inside the calibration data. Each run's features are centred on that run's own mean first
(run centring, :mod:`sblr_rt.model.run_centring`), as the online loop will centre the
next run.

The candidates
    every feature path x every spatial stage that applies: the power and covariance paths
    need filter warm-up before each epoch (continuous recordings), the covariance path
    takes no spatial stage, band power needs two channels, and the surface Laplacian needs
    a scalp position for every channel; the waveform path also on a coarse 20 Hz grid
    where that halves its points or more (:data:`SLOW_WAVEFORM_RATE`). All candidates use
    the same epochs (cut once with the longest warm-up) and the same folds.
The search per candidate (small on purpose: 30 trials cannot rank a large grid)
    ranks ``auto_ranks``, ``mu2 = nu2`` in ``auto_l2``, and for each a warm-started l1
    path over ``auto_l1`` (fractions of the largest useful penalty of the training fold).
    The paths of one fold and rank run in lockstep (:func:`~sblr_rt.model.penalty_path.
    fit_penalty_paths`); scaling is fitted on each training fold only.
The criterion
    the out-of-fold **log-loss** over ``cv_repeats`` repetitions of stratified ``cv``-fold
    CV, minimised jointly over candidates and grid points (the later repetitions only for
    the ``auto_keep`` candidates that lead after the first). Accuracy on six test epochs per
    fold moves in steps of 0.17 and ties everywhere; AUC is ordinal and rewards
    over-confident models whose offset does not transfer to the next run. The log-loss
    scores the calibrated probability of every epoch, so it separates candidates at 30
    trials and penalises exactly what fails between runs (the measurements behind this
    choice: docs/benchmarks.md, "Accuracy across runs").
The final model
    the ``auto_ensemble`` candidates of lowest log-loss among the finalists (4 by
    default), each with its preprocessing, its scaling fitted on all epochs and its chosen
    path point refitted on all epochs (the computation that was cross-validated); the
    model's score is the mean of theirs (an :class:`~sblr_rt.bci_model.EnsembleModel`). A
    member must beat chance in its own CV (:func:`sblr_rt.bci_model.verdict.above_chance`): one
    that does not is left out and named in ``report["dropped"]``; when none does, the
    first is kept alone and the verdict says the model is not clearly above chance. Thirty
    trials cannot tell ten candidates apart, and the winner is often lucky: averaging the
    best few spreads that luck (measured: docs/benchmarks.md, "Accuracy across runs").

Every candidate's scores at every grid point are kept in the report (``report["candidates"]``,
:func:`~.search.search_report`), which the model
file stores and ``sblr-rt inspect`` prints.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sblr_rt.calibration.assembly import run_of_each
from sblr_rt.calibration.criteria import CRITERIA, pool, pooled_scores
from sblr_rt.calibration.epochs import RawEpochs, cut_raw_epochs
from sblr_rt.calibration.search import (
    Candidate,
    FoldSettings,
    Stage,
    candidate_report,
    chosen,
    cross_validate,
    fit_point,
    make_splits,
    search_report,
    summarise,
)

from sblr_rt.bci_model.search_record import name_candidate
from sblr_rt.model.run_centring import centre_runs
from sblr_rt.montage import channel_positions
from sblr_rt.preprocessing.features import centres_rows
from sblr_rt.preprocessing.spatial import MIN_CSD_CHANNELS

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["AutoMember", "AutoSelection", "auto_candidates", "select_auto"]

#: Feature paths in the order ``auto`` lists them.
PATHS = ("waveform", "bandpower", "spectral", "covariance")
#: Spatial stages in the order ``auto`` lists them.
SPATIAL = (None, "car", "csd")
#: Rate in Hz of the waveform's second, coarse grid: slow potentials (readiness and
#: lateralised potentials, ERPs) lie below 10 Hz, and decimating to 20 Hz is the field's
#: standard for them (Krusienski et al. 2006 for P300, Blankertz et al. 2011 for ERPs).
SLOW_WAVEFORM_RATE = 20.0


def auto_candidates(recordings, picks) -> list[tuple[str, str | None]]:
    """Return the (feature path, spatial stage) pairs that apply to these recordings.

    Parameters
    ----------
    recordings : list of Recording
        The calibration runs.
    picks : list of str
        The model's channels.

    Returns
    -------
    candidates : list of (str, str | None)
        Power paths only for continuous recordings (an epoched file has no samples
        before its trials for the filters' warm-up); ``"csd"`` only where every channel
        has a scalp position.
    """
    continuous = all(not r.epoch_length for r in recordings)
    paths = PATHS if continuous else ("waveform",)
    has_positions = len(channel_positions(picks)) == len(picks)
    stages = SPATIAL if has_positions and len(picks) >= MIN_CSD_CHANNELS else (None, "car")
    if len(picks) < 3:
        stages = (None,)
    if not has_positions:
        logger.info("auto: no surface Laplacian (channels without a scalp position)")
    if len(picks) < 2:  # band power relative to the mean over channels: zero for one channel
        paths = tuple(p for p in paths if p != "bandpower")
        logger.info("auto: no band-power path on one channel (its reference is that channel)")
    # The covariance path takes no spatial stage: a common average (or a Laplacian, a
    # linear map of the channels) only re-expresses the covariance it already holds.
    return [(p, s) for p in paths for s in stages if p != "covariance" or s is None]


def _with_grids(candidates, probe, config) -> list[tuple[str, str | None, int | None]]:
    """Key each candidate by (path, spatial stage, grid); add the waveform's coarse grid.

    The waveform path resamples to ``min(100, n_window)`` points by default; each waveform
    candidate is also tried on the :data:`SLOW_WAVEFORM_RATE` grid when that has at most
    half as many points and the user did not set ``n_times`` (grid None: the path's
    default). Fewer, smoother time points give the temporal factor fewer coefficients to
    fit; where the two grids differ by less than a factor of two they give near-copies of
    each waveform model (the measurements behind the factor: docs/benchmarks.md, "Accuracy
    across runs").
    """
    keys = [(features, spatial, None) for features, spatial in candidates]
    slow = round(probe.n_window * SLOW_WAVEFORM_RATE / probe.sfreq)
    if config.preprocessing.n_times is None and 2 <= slow <= probe.n_columns // 2:
        keys += [(f, s, slow) for f, s, _ in keys if f == "waveform"]
    return keys


def _preprocessors(config, keys, build) -> dict:
    """Return one (unfitted) preprocessor per candidate key."""
    return {
        (features, spatial, grid): build(
            config.replace(features=features, spatial=spatial or "none")
            if grid is None
            else config.replace(features=features, spatial=spatial or "none", n_times=grid)
        )
        for features, spatial, grid in keys
    }


def _features(raw: RawEpochs, pres: dict, runs, *, recentre: bool) -> tuple[dict, dict]:
    """Return the unscaled features of every candidate from the same raw epochs.

    Each feature path filters once; the spatial stages are applied to the filtered
    windows (filtering acts per channel, so this equals filtering transformed samples).
    A path's filtered windows are released once its candidates are computed. ``runs``
    is the run of each recording (:func:`~sblr_rt.calibration.assembly.run_of_each`).

    Returns
    -------
    features : dict
        Candidate key -> features, shape (n_epochs, ...), in the order of ``pres``.
    means : dict
        Candidate key -> its calibration reference (run centring only; else empty).
    """
    by_path = {}
    for key in pres:
        by_path.setdefault(key[0], []).append(key)  # the grids of one path share its filter
    done, means = {}, {}
    for keys in by_path.values():
        first = pres[keys[0]]
        window = raw.data[:, :, raw.data.shape[2] - first.n_times_raw :]
        filtered = first.filter_epochs(window, spatial=False)
        for key in keys:
            pre = pres[key]
            Z = pre.features_from_filtered(pre.apply_spatial(filtered))
            if recentre:
                Z, means[key] = centre_runs(Z, np.asarray(runs)[raw.runs])
            done[key] = Z
        del filtered
    return {key: done[key] for key in pres}, means


def _stages(config) -> list[Stage]:
    """Return the auto plan's grid: every rank, ``mu2 = nu2`` in ``auto_l2``, l1 paths."""
    settings = config.selection
    groups = tuple(((l2, l2), tuple((f, f) for f in settings.auto_l1)) for l2 in settings.auto_l2)
    return [Stage(r, groups) for r in settings.auto_ranks]


def _cross_validate(candidates: list[Candidate], y, config, progress):
    """Rows of every candidate's grid points, averaged over the CV repeats.

    Every candidate runs the first repetition of the k-fold CV; only the ``auto_keep``
    best (by that repetition's log-loss) run the others, and the choice is made among
    them on the mean over all repetitions. The candidates left out were behind on every
    fold of the first repetition, and skipping them saves most of the time when there
    are nine.

    Returns
    -------
    table : dict
        Candidate key -> its rows (:func:`~.search.summarise`).
    kept : list
        The keys of the candidates that ran every repetition.
    repeats : int
    stages : list of Stage
    """
    settings = config.selection
    repeats = 1 if settings.cv == "loo" else settings.cv_repeats  # loo: nothing to reshuffle
    splits = make_splits(y, settings.cv, settings.random_state, repeats)
    stages = _stages(config)
    fit = FoldSettings(
        CRITERIA[settings.criterion or "log-loss"](),
        config.fit_params() | {"max_iter": settings.auto_max_iter},
        config.preprocessing.scaling,
        np.dtype(np.float32 if settings.search_dtype == "float32" else np.float64),
        settings.n_jobs,
        tol_for=config.cv_tol_for,
    )
    n_folds = len(splits) // repeats
    first = range(n_folds)
    keep = min(len(candidates), settings.auto_keep)
    # One bar: every candidate on the first repetition's folds, the best on the others.
    stage = f"auto: {len(candidates)} candidates" + (
        f", the best {keep} repeated" if repeats > 1 else ""
    )
    total = n_folds * (len(candidates) + keep * (repeats - 1))
    seen = cross_validate(candidates, y, splits, stages, fit, split_ids=first,
                          progress=progress, stage_name=stage, span=(0, total))  # fmt: skip
    table = {
        c.key: summarise(seen[c.key], y, splits, stages, fit.criterion, split_ids=first)
        for c in candidates
    }
    keys = [c.key for c in candidates]
    if repeats == 1:
        return _with_auc(table, seen, y, splits, first, 1, fit), keys, 1, stages
    ranked = sorted(
        (c for c in candidates if table[c.key]), key=lambda c: chosen(table[c.key])["loss"]
    )
    kept = ranked[:keep]
    rest = range(n_folds, len(splits))
    done = n_folds * len(candidates)
    cross_validate(kept, y, splits, stages, fit, split_ids=rest, progress=progress,
                   stage_name=stage, observed=seen,
                   span=(done, done + n_folds * len(kept) * (repeats - 1)))  # fmt: skip
    every = range(len(splits))
    for c in kept:
        table[c.key] = summarise(
            seen[c.key], y, splits, stages, fit.criterion, split_ids=every, n_repeats=repeats
        )
    table = _with_auc(table, seen, y, splits, every, repeats, fit, {c.key for c in kept})
    return table, [c.key for c in kept], repeats, stages


def _with_auc(table, seen, y, splits, split_ids, repeats, fit, kept=None) -> dict:
    """Add the AUC (mean over repetitions) to each candidate's best row.

    Candidates not in ``kept`` (None: all) ran the first repetition only. A criterion that
    observes labels, not probabilities, gives no AUC.
    """
    if not fit.criterion.probabilistic:
        return table
    n_folds = len(splits) // repeats
    for key, rows in table.items():
        if not rows:
            continue
        best = chosen(rows)
        ids = list(split_ids) if kept is None or key in kept else list(range(n_folds))
        j = best["index"]
        observed = [seen[key][i][j][0] for i in ids]
        pooled = pool(observed, [splits[i] for i in ids], len(y), len(ids) // n_folds)
        best["auc"] = float(np.mean([pooled_scores(P, y, auc=True)["auc"] for P in pooled]))
    return table


def _name(candidate) -> str:
    return name_candidate(*candidate)  # (features, spatial, grid)


@dataclass(frozen=True)
class AutoMember:
    """One of the best candidates ``auto`` keeps, fitted on all epochs.

    Attributes
    ----------
    preprocessor : Preprocessor
        Its preprocessing, scaling fitted on all epochs.
    estimator : SparseBilinearLogisticRegression
        Fitted on all epochs.
    calibration_mean : ndarray | None
        Its calibration reference (the runs' mean features; None without run centring).
    name : str
        The candidate's name (``"bandpower+car"``).
    scores : ndarray
        Its scores of the (run-centred) training epochs.
    """

    preprocessor: object
    estimator: object
    calibration_mean: object
    name: str
    scores: np.ndarray


@dataclass(frozen=True)
class AutoSelection:
    """What :func:`select_auto` chose and fitted.

    Attributes
    ----------
    members : tuple of AutoMember
        The ``auto_ensemble`` best candidates above chance, the chosen one first.
    epochs : EpochSet
        The chosen candidate's unscaled features and labels.
    report : dict
        The search report (:func:`~.search.search_report`): every candidate's best point
        and scores, the criterion, the choice and the ensemble.
    """

    members: tuple
    epochs: object
    report: dict

    @property
    def chosen(self) -> AutoMember:
        """The best candidate (the first member)."""
        return self.members[0]


def select_auto(recordings, config, *, build_preprocessor, progress=None):
    """Choose and fit the best (path, spatial stage, rank, penalties) for these runs.

    Parameters
    ----------
    recordings : list of Recording
        Calibration runs.
    config : CalibrationConfig
        Settings (``features="auto"``; ``cv``, ``cv_repeats``, ``auto_*``, rejection).
    build_preprocessor : callable
        ``build_preprocessor(config) -> Preprocessor`` for the first recording.
    progress : callable | None
        ``progress(done, total, stage)``.

    Returns
    -------
    selection : AutoSelection
        The members (the chosen candidate first), the chosen one's epochs and the report.
    """
    t0 = time.perf_counter()
    probe = build_preprocessor(config.replace(features="waveform"))
    keys = _with_grids(auto_candidates(recordings, probe.pick_names), probe, config)
    pres = _preprocessors(config, keys, build_preprocessor)
    longest = max(pres.values(), key=lambda p: p.n_times_raw)
    raw = cut_raw_epochs(
        recordings,
        longest,
        config.class_map,
        config.rejection,
    )
    runs = run_of_each(recordings)
    feats, means = _features(raw, pres, runs, recentre=config.online.recentre)
    t_features = time.perf_counter() - t0
    candidates = [Candidate(key, _name(key), Z, centres_rows(key[0])) for key, Z in feats.items()]
    table, finalists, repeats, stages = _cross_validate(candidates, raw.y, config, progress)
    best = {c: chosen(rows) for c, rows in table.items() if rows}
    if not best:
        raise RuntimeError("auto: no candidate could be cross-validated; check the epochs")
    ranked = sorted((c for c in finalists if c in best), key=lambda c: best[c]["loss"])
    n_classes = max(2, len(raw.classes))
    ensemble, dropped, level = _members_above_chance(
        ranked[: config.selection.auto_ensemble], best, len(raw.y), n_classes
    )
    chosen_key = ensemble[0]
    fits = {c: _final_fit(pres[c], feats[c], raw.y, stages, best[c], config) for c in ensemble}
    est, l1_max, start = fits[chosen_key]
    epochs = raw.with_features(feats[chosen_key], means.get(chosen_key))
    seconds = time.perf_counter() - t0
    b = best[chosen_key]
    logger.info(
        "auto chose %s (rank %d, mu2 = nu2 = %g, l1 fraction %g): CV log-loss %s, accuracy "
        "%.3f, AUC %s; %d candidates in %.1f s",
        _name(chosen_key), b["rank"], b["mu2"], b["mu1_fraction"], b.get("log_loss"),
        b["accuracy"], b.get("auc"), len(best), seconds,
    )  # fmt: skip
    members = tuple(
        AutoMember(pres[c], fits[c][0], means.get(c), _name(c),
                   fits[c][0].decision_function(pres[c].scale(feats[c])))
        for c in ensemble
    )  # fmt: skip
    settings = config.selection
    report = search_report(
        search="auto",
        criterion=CRITERIA[settings.criterion or "log-loss"](),
        cv=settings.cv,
        repeats=repeats,
        n_splits=repeats * (len(raw.y) if settings.cv == "loo" else int(settings.cv)),
        search_tol=config.cv_tol_for((len(raw.y), *feats[chosen_key].shape[1:])),
        grid={
            "ranks": list(settings.auto_ranks),
            "l2": list(settings.auto_l2),
            "l1_fractions": list(settings.auto_l1),
        },
        candidates=[
            candidate_report(
                _name(c),
                table[c],
                best[c],
                features=c[0],
                spatial=c[1],
                n_times=pres[c].n_columns,
                repeats=repeats if c in finalists else 1,
            )
            for c in best
        ],
        ensemble=[_name(c) for c in ensemble],
        dropped=dropped,
        chance_level=level,
        ranks=[],
        estimator=est,
        best=b,
        l1_penalty_max=l1_max,
        final_start=start,
        seconds={"features": t_features, "total": seconds},
        n_jobs=effective_n_jobs(settings.n_jobs),  # the jobs that ran, not the setting
    )
    return AutoSelection(members, epochs, report)


def _members_above_chance(leaders, best, n_trials, n_classes) -> tuple[list, list, float]:
    """Keep the leaders whose own CV accuracy beats chance; say why the others went.

    A member whose CV accuracy does not exceed :func:`~sblr_rt.bci_model.verdict.chance_level` for
    ``n_trials`` adds a guess to the model's average. When no leader beats chance, the
    first (lowest log-loss) is kept alone, and the verdict says the model is not clearly
    above chance.

    Parameters
    ----------
    leaders : list of tuple
        Candidate keys, lowest log-loss first (at most ``auto_ensemble``).
    best : dict
        Candidate key -> its best grid row (``"accuracy"``).
    n_trials, n_classes : int
        The calibration epochs and classes.

    Returns
    -------
    kept : list of tuple
        The members, in the order of ``leaders`` (never empty).
    dropped : list of dict
        ``{"name", "accuracy", "reason"}`` for each leader left out.
    level : float
        The chance level the accuracies were compared with.
    """
    # here, not at the top: the workers import this module and need not import scipy.stats
    from sblr_rt.bci_model.verdict import above_chance, chance_level

    kept = [c for c in leaders if above_chance(best[c]["accuracy"], n_trials, n_classes)]
    level = chance_level(n_trials, n_classes)
    if not kept:
        kept = leaders[:1]
    dropped = [
        {
            "name": _name(c),
            "accuracy": best[c]["accuracy"],
            "reason": (
                f"CV accuracy {best[c]['accuracy']:.3f} not above the chance level "
                f"{level:.3f} ({n_trials} trials)"
            ),
        }
        for c in leaders
        if c not in kept
    ]
    return kept, dropped, level


def _final_fit(pre, Z, y, stages, row, config):
    """Fit the scaling of ``pre`` on all epochs and the estimator at the CV's chosen point.

    Returns what :func:`~.search.fit_point` returns.
    """
    pre.fit_scaling(Z)  # the preprocessor's own rule: centred rows on the non-linear paths
    return fit_point(pre.scale(Z), y, stages, row, config.fit_params())

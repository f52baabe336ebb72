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
    member must beat chance in its own CV (:func:`sblr_rt.verdict.above_chance`): one that
    does not is left out and named in ``report["auto"]["dropped"]``; when none does, the
    first is kept alone and the verdict says the model is not clearly above chance. Thirty
    trials cannot tell ten candidates apart, and the winner is often lucky: averaging the
    best few spreads that luck (measured: docs/benchmarks.md, "Accuracy across runs").

Every candidate's scores are kept in the report (``report["auto"]``), which the model
file stores and ``sblr-rt inspect`` prints.
"""

from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np
from joblib import delayed, effective_n_jobs
from sblr_rt.calibration.epochs import RawEpochs, cut_raw_epochs
from sblr_rt.calibration.selection import folds_paths, make_splits, run_path, scaled_fold
from sblr_rt.calibration.workers import parallel
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold

from sblr_rt.model import ZeroTrapWarning
from sblr_rt.model.run_centring import centre_runs
from sblr_rt.montage import channel_positions
from sblr_rt.preprocessing.features import FEATURE_PATHS
from sblr_rt.preprocessing.spatial import MIN_CSD_CHANNELS

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["auto_candidates", "select_auto"]

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
    if config.preprocessing.n_times is None and 2 <= slow <= probe.n_times // 2:
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


def _features(raw: RawEpochs, pres: dict, *, recentre: bool) -> tuple[dict, dict]:
    """Return the unscaled features of every candidate from the same raw epochs.

    Each feature path filters once; the spatial stages are applied to the filtered
    windows (filtering acts per channel, so this equals filtering transformed samples).
    A path's filtered windows are released once its candidates are computed.

    Returns
    -------
    features : dict
        Candidate key -> features, shape (n_epochs, ...), in the order of ``pres``.
    references : dict
        Candidate key -> its calibration reference (run centring only; else empty).
    """
    by_path = {}
    for key in pres:
        by_path.setdefault(key[0], []).append(key)  # the grids of one path share its filter
    done, references = {}, {}
    for keys in by_path.values():
        first = pres[keys[0]]
        window = raw.data[:, :, raw.data.shape[2] - first.n_times_raw :]
        filtered = first.filter_epochs(window, spatial=False)
        for key in keys:
            pre = pres[key]
            Z = pre.features_from_filtered(pre.apply_spatial(filtered))
            if recentre:
                Z, references[key] = centre_runs(Z, raw.runs)
            done[key] = Z
        del filtered
    return {key: done[key] for key in pres}, references


def _grid(config) -> list[tuple[int, float, float]]:
    return [
        (r, l2, f)
        for r in config.selection.auto_ranks
        for l2 in config.selection.auto_l2
        for f in config.selection.auto_l1
    ]


def _fold_task(Zs, y, splits, config, centers, dtype):
    """Out-of-fold class probabilities of every grid point, per candidate and split.

    Every (candidate, fold) is a training set of one lockstep per rank
    (:func:`~.selection.folds_paths`): the candidates of one feature path have the same
    shape and share the solver's batches. Returns ``out[c][i]``, one entry per grid point
    (None: no such rank) for candidate ``c`` on split ``i``.
    """
    sets = [
        (c, i, *scaled_fold(Z, train, test, config.preprocessing.scaling, center, dtype))
        for c, (Z, center) in enumerate(zip(Zs, centers, strict=True))
        for i, (train, test) in enumerate(splits)
    ]
    groups = [
        ((l2, l2), [(f, f) for f in config.selection.auto_l1]) for l2 in config.selection.auto_l2
    ]
    largest = max((Xtr.shape for _, _, Xtr, _ in sets), key=math.prod)
    est_params = config.fit_params() | {
        "max_iter": config.selection.auto_max_iter,
        "tol": config.cv_tol_for(largest),
    }
    out = [[[] for _ in splits] for _ in Zs]
    n_points = len(config.selection.auto_l2) * len(config.selection.auto_l1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        for rank in config.selection.auto_ranks:
            fit = [st for st in sets if rank <= min(st[2].shape[1:])]
            for c, i, *_ in sets:
                if rank > min(Zs[c].shape[1:]):
                    out[c][i] += [None] * n_points
            if not fit:
                continue
            res = folds_paths(
                [(Xtr, y[splits[i][0]]) for _, i, Xtr, _ in fit],
                rank,
                groups,
                est_params,
                # the test set is checked once, not at every point
                lambda f, e, fit=fit: e.predict_proba(fit[f][3], check_input=False),
            )
            for (c, i, *_), r in zip(fit, res, strict=True):
                out[c][i] += [proba for path in r for proba in path]
    return out


def _scores(proba: np.ndarray, y: np.ndarray, *, auc: bool = True) -> dict:
    """Log-loss, accuracy and AUC of pooled out-of-fold probabilities (one repeat).

    The AUC is :func:`sklearn.metrics.roc_auc_score` (one class against the rest, macro
    mean, for more than two classes); ``auc=False`` leaves it out.
    """
    p_true = np.clip(proba[np.arange(len(y)), y], 1e-12, 1.0)
    out = {
        "log_loss": float(-np.mean(np.log(p_true))),
        "accuracy": float(np.mean(np.argmax(proba, axis=1) == y)),
    }
    if auc and proba.shape[1] == 2:
        out["auc"] = float(roc_auc_score(y, proba[:, 1]))
    elif auc:
        labels = np.arange(proba.shape[1])
        out["auc"] = float(roc_auc_score(y, proba, multi_class="ovr", labels=labels))
    return out


def _run_folds(feats, y, splits, tasks, config, proba, progress, done_total, stage=""):
    """Fill ``proba[c][repeat, point][test]`` for ``tasks`` ([candidate, ...], [split, ...]).

    Progress counts candidates (a task runs several in lockstep): ``done_total`` is the
    count before these tasks and the total to report.
    """
    dtype = np.float32 if config.selection.search_dtype == "float32" else np.float64
    pool = parallel(config.selection.n_jobs, return_as="generator")
    jobs = (
        delayed(_fold_task)(
            [feats[c] for c in cands],
            y,
            [splits[i] for i in idx],
            config,
            [not FEATURE_PATHS[c[0]].linear for c in cands],
            dtype,
        )
        for cands, idx in tasks
    )
    n_folds = len(splits) // config.selection.cv_repeats
    done, total = done_total
    for (cands, idx), result in zip(tasks, pool(jobs), strict=True):
        for c, per_split in zip(cands, result, strict=True):
            for i, res in zip(idx, per_split, strict=True):
                test = splits[i][1]
                for j, p in enumerate(res):
                    if p is not None:
                        proba[c][i // n_folds, j][test] = p
        done += len(cands)
        if progress is not None:
            progress(done, total, stage)
    return done


def _tasks(cands, folds) -> list[tuple[list, list]]:
    """One task per feature path and grid: its candidates on ``folds``, in one lockstep."""
    by_path = {}
    for c in cands:
        by_path.setdefault((c[0], c[2]), []).append(c)
    return [(cs, list(folds)) for cs in by_path.values()]


def _table(proba, y, grid, repeats) -> dict:
    """Mean scores over ``repeats`` of every candidate's grid points.

    Every point has its log-loss and accuracy; the point of lowest log-loss (the one the
    report keeps) has its AUC too.
    """
    table = {}
    for c, P in proba.items():
        rows = []
        for j, point in enumerate(grid):
            if np.isnan(P[repeats, j]).any():  # a rank the candidate's shape cannot have
                continue
            reps = [_scores(P[r, j], y, auc=False) for r in repeats]
            mean = {k: float(np.mean([s[k] for s in reps])) for k in reps[0]}
            rows.append({"point": point, "index": j, **mean})
        if rows:
            best = min(rows, key=lambda r: r["log_loss"])
            best["auc"] = float(np.mean([_scores(P[r, best["index"]], y)["auc"] for r in repeats]))
        table[c] = [{k: v for k, v in r.items() if k != "index"} for r in rows]
    return table


def _cross_validate(feats, y, config, progress):
    """Scores of every candidate and grid point, averaged over the CV repeats.

    Every candidate runs the first repetition of the k-fold CV; only the ``auto_keep``
    best (by that repetition's log-loss) run the others, and the choice is made among
    them on the mean over all repetitions. The candidates left out were behind on every
    fold of the first repetition, and skipping them saves most of the time when there
    are nine.
    """
    if config.selection.cv == "loo":  # one repetition: leave-one-out has no shuffle to repeat
        config = config.replace(cv_repeats=1)
        splits = make_splits(y, "loo")
    else:
        make_splits(y, config.selection.cv)  # says clearly when a class has too few epochs
        cv = RepeatedStratifiedKFold(
            n_splits=int(config.selection.cv),
            n_repeats=config.selection.cv_repeats,
            random_state=config.selection.random_state,
        )
        splits = list(cv.split(np.zeros(len(y)), y))
    n_folds, keys, grid = len(splits) // config.selection.cv_repeats, list(feats), _grid(config)
    n_classes = int(y.max()) + 1
    proba = {
        c: np.full((config.selection.cv_repeats, len(grid), len(y), n_classes), np.nan)
        for c in keys
    }
    keep = min(len(keys), config.selection.auto_keep)
    first = _tasks(keys, range(n_folds))
    # One unit per candidate and CV repetition: every candidate once, the best again.
    stage = f"auto: {len(keys)} candidates" + (
        f", the best {keep} repeated" if config.selection.cv_repeats > 1 else ""
    )
    total = len(keys) + keep * (config.selection.cv_repeats - 1)
    done = _run_folds(feats, y, splits, first, config, proba, progress, (0, total), stage)
    if config.selection.cv_repeats == 1:
        return _table(proba, y, grid, [0]), keys, 1
    table = _table(proba, y, grid, [0])
    ranked = sorted(
        (c for c in keys if table[c]), key=lambda c: min(r["log_loss"] for r in table[c])
    )
    kept = ranked[:keep]
    rest = [
        task for r in range(1, config.selection.cv_repeats)
        for task in _tasks(kept, range(r * n_folds, (r + 1) * n_folds))
    ]  # fmt: skip
    total = done + len(kept) * (config.selection.cv_repeats - 1)  # fewer when candidates failed
    _run_folds(feats, y, splits, rest, config, proba, progress, (done, total), stage)
    full = _table({c: proba[c] for c in kept}, y, grid, list(range(config.selection.cv_repeats)))
    return {c: full.get(c, table[c]) for c in keys}, kept, config.selection.cv_repeats


def _name(candidate) -> str:
    features, spatial, grid = candidate
    return f"{features}/{spatial or 'none'}" + ("" if grid is None else f"/{grid}t")


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
    pre : Preprocessor
        The chosen preprocessing, scaling fitted on all epochs.
    estimator : SparseBilinearLogisticRegression
        Fitted on all epochs.
    epochs : EpochSet
        The chosen candidate's unscaled features and labels.
    report : dict
        JSON-serialisable selection report with ``report["auto"]``: every candidate's
        best point and scores, the criterion, the choice and the ensemble.
    members : list of tuple
        ``(Preprocessor, SparseBilinearLogisticRegression, reference, name, scores)``:
        the ``auto_ensemble`` best candidates (the chosen one first), each fitted on all
        epochs, with its calibration reference (None without run centring), its name and
        its scores of the (run-centred) training epochs.
    """
    t0 = time.perf_counter()
    probe = build_preprocessor(config.replace(features="waveform"))
    keys = _with_grids(auto_candidates(recordings, probe.picks), probe, config)
    pres = _preprocessors(config, keys, build_preprocessor)
    longest = max(pres.values(), key=lambda p: p.n_times_raw)
    raw = cut_raw_epochs(
        recordings,
        longest,
        config.class_map,
        reject=config.rejection.reject,
        flat=config.rejection.flat,
        clip_run=config.rejection.clip_run,
    )
    feats, references = _features(raw, pres, recentre=config.online.recentre)
    t_features = time.perf_counter() - t0
    table, finalists, repeats = _cross_validate(feats, raw.y, config, progress)
    best = {c: min(rows, key=lambda r: r["log_loss"]) for c, rows in table.items() if rows}
    if not best:
        raise RuntimeError("auto: no candidate could be cross-validated; check the epochs")
    ranked = sorted((c for c in finalists if c in best), key=lambda c: best[c]["log_loss"])
    n_classes = max(2, len(raw.classes))
    ensemble, dropped, level = _members_above_chance(
        ranked[: config.selection.auto_ensemble], best, len(raw.y), n_classes
    )
    chosen = ensemble[0]
    fits = {c: _final_fit(pres[c], feats[c], raw.y, best[c]["point"], config) for c in ensemble}
    rank, l2, fraction = best[chosen]["point"]
    pre, est = pres[chosen], fits[chosen]
    epochs = raw.with_features(feats[chosen], references.get(chosen))
    candidates_report = [
        {
            "name": _name(c),
            "features": c[0],
            "spatial": c[1],
            "n_times": pres[c].n_times,
            "rank": best[c]["point"][0],
            "l2": best[c]["point"][1],
            "l1_fraction": best[c]["point"][2],
            "log_loss": best[c]["log_loss"],
            "accuracy": best[c]["accuracy"],
            "auc": best[c]["auc"],
            "repeats": repeats if c in finalists else 1,
        }
        for c in best
    ]
    seconds = time.perf_counter() - t0
    logger.info(
        "auto chose %s (rank %d, mu2 = nu2 = %g, l1 fraction %g): CV log-loss %.3f, accuracy "
        "%.3f, AUC %.3f; %d candidates in %.1f s",
        _name(chosen),
        rank,
        l2,
        fraction,
        best[chosen]["log_loss"],
        best[chosen]["accuracy"],
        best[chosen]["auc"],
        len(best),
        seconds,
    )
    members = [
        (pres[c], fits[c], references.get(c), _name(c),
         fits[c].decision_function(pres[c].scale(feats[c])))
        for c in ensemble
    ]  # fmt: skip
    report = {
        "cv": f"{config.selection.cv}-fold x {repeats} repeats",
        "search": "auto",
        "grid": [],
        "rank": rank,
        "best": {
            "mu1_fraction": fraction,
            "mu2": l2,
            "nu1_fraction": fraction,
            "nu2": l2,
            "mean": best[chosen]["accuracy"],
            "std": None,
        },
        "params": {
            "rank": rank,
            "mu1": float(est.mu1),
            "mu2": float(est.mu2),
            "nu1": float(est.nu1),
            "nu2": float(est.nu2),
        },
        "auto": {
            "criterion": "out-of-fold log-loss",
            "cv": f"stratified {config.selection.cv}-fold x {repeats} repeats",
            "grid": {
                "ranks": list(config.selection.auto_ranks),
                "l2": list(config.selection.auto_l2),
            }
            | {"l1_fractions": list(config.selection.auto_l1)},
            "chosen": _name(chosen),
            "ensemble": [_name(c) for c in ensemble],
            "chance_level": level,
            "dropped": dropped,
            "candidates": candidates_report,
        },
        "seconds": {"features": t_features, "total": seconds},
        "n_jobs": effective_n_jobs(config.selection.n_jobs),  # the jobs that ran, not the setting
    }
    return pre, est, epochs, report, members


def _members_above_chance(leaders, best, n_trials, n_classes) -> tuple[list, list, float]:
    """Keep the leaders whose own CV accuracy beats chance; say why the others went.

    A member whose CV accuracy does not exceed :func:`~sblr_rt.verdict.chance_level` for
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
    from sblr_rt.verdict import above_chance, chance_level

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


def _final_fit(pre, Z, y, point, config):
    """Fit the scaling of ``pre`` on all epochs and the estimator at the CV's chosen point."""
    rank, l2, fraction = point
    pre.fit_scaling(Z)  # the preprocessor's own rule: centred rows on the non-linear paths
    l1path = [(f, f) for f in config.selection.auto_l1]
    stop = list(config.selection.auto_l1).index(fraction)
    est_params = config.fit_params()
    est, _, _ = run_path(pre.scale(Z), y, rank, (l2, l2), l1path, est_params, stop=stop)
    return est

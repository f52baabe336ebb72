"""Calibrated probabilities: what a score of a window ending early in the trial is worth.

A model's raw probabilities are over-confident on trials it did not train on, and more so
for a window that ends early in the trial: the sliding windows the online loop decides
after a cue hold less of the imagery and some EEG from before it, yet their scores are as
large. Early decisions (``--early P``) read those probabilities, so an over-confident one
stops a trial on a coin toss.

:func:`window_end_scores` scores every calibration trial, at several window ends relative
to its cue, with the model refitted on the other trials (contiguous blocks in time order,
each member at its chosen feature path and penalties, as
:func:`~sblr_rt.calibration.member_evidence.blocked_evidence`); windows that end before ``tmax``
are centred on the run's mean trial window, as the online loop centres its sliding windows.
:func:`fit_probability` fits a curve of two numbers to those scores: a window ending ``e``
seconds after the cue gets the sharpness (the factor on its scores) ``c (e / tmax) ** b``,
``b >= 0``, so that a window ending earlier is never believed more; ``c``, the trial
window's, is held near 1 (the probabilities as the model gives them) by a prior worth
:data:`TRIAL_PRIOR` trials. The result is a
:class:`~sblr_rt.model.link.ProbabilityCalibration` that the model applies wherever scores
become probabilities.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
from sblr_rt.calibration.assembly import run_of_each
from sblr_rt.calibration.epochs import extract_epochs
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from sblr_rt.bci_model import BCIModel
from sblr_rt.model import ZeroTrapWarning
from sblr_rt.model.link import MAX_SHARPNESS, ProbabilityCalibration, proba_from_scores

__all__ = [
    "calibrate_probability",
    "expected_calibration_error",
    "fit_probability",
    "window_end_scores",
]

#: Seconds between the window ends the calibration is fitted at.
END_STEP = 0.25
#: Contiguous blocks of trials, each scored by the model refitted on the others.
N_BLOCKS = 5
#: Fewer trials scored than this: no calibration (the raw probabilities); an end that fewer
#: windows reach is not believed (sharpness 0).
MIN_TRIALS = 10
#: Weight, in trials, of the belief that the trial window's probabilities are right as the
#: model gives them: :func:`fit_probability` subtracts ``TRIAL_PRIOR / 2 * log(c) ** 2``
#: from the scores' log-likelihood per trial. Chosen by leaving people out
#: (``benchmarks/prior.py``'s docstring gives the grid).
TRIAL_PRIOR = 30.0
#: Largest exponent ``b`` of the curve (a window ending at half the trial window is then
#: believed ``2 ** -50`` as much: not at all).
MAX_DECAY = 50.0
CURVE = "sharpness c (e / tmax) ** b for a window ending e seconds after the cue"
#: How a model's calibration was fitted (its own trials, refitted without each block).
HOW = (
    CURVE + ", fitted on {n} trials each scored by the model refitted on the others "
    "({blocks} contiguous blocks in time order)"
)
#: How a prior's calibration was fitted (its people, each scored by the prior of the others).
HELD_OUT_PEOPLE = (
    CURVE + ", fitted on {n} trials of {people} people, each person's scored by the prior "
    "trained on the others"
)


def window_ends(tmin: float, tmax: float, step: float = END_STEP) -> np.ndarray:
    """Window ends relative to the cue, from the cue (or ``tmax - window``) to ``tmax``.

    Examples
    --------
    >>> window_ends(0.5, 1.5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
    """
    n = int(np.floor(max(tmax, 0.0) / step + 1e-9))
    return np.round(tmax - step * np.arange(n, -1, -1), 9)


def window_end_scores(
    model: BCIModel, recordings, config, classes, ends, n_blocks=N_BLOCKS, *, refit=True
):
    """Score every trial at each window end with the model refitted on the other trials.

    Parameters
    ----------
    model : BCIModel
        The model (its members refitted here; the model is not changed). A member with a
        pool (a prior across people adapted to these trials) is refitted on its pool and
        the other blocks' trials.
    recordings : list of Recording
        The trials it was calibrated on, in time order.
    config : CalibrationConfig
        The class map and rejection thresholds.
    classes : list of str
        The class order of the scores.
    ends : array-like of float
        Window ends relative to the cue (seconds); ``model.tmax`` is the trial window.
    n_blocks : int
        Contiguous blocks of trials (at least 2).
    refit : bool
        False: every trial scored by the model as it is (out of fold only for a model that
        never trained on these trials: a prior across people and a person it never saw).

    Returns
    -------
    scores : ndarray, shape (n_ends, n_trials) or (n_ends, n_trials, n_classes)
        NaN where a window could not be cut or a block's training trials lack a class.
    y : ndarray of int, shape (n_trials,)
    """
    order = {c: k for k, c in enumerate(classes)}
    ends = np.asarray(ends, dtype=np.float64)
    runs_of = np.asarray(run_of_each(recordings))
    model = model.for_channels(recordings[0].ch_names)
    per_member = []
    for m in model.members:
        pre = m.preprocessor
        ep = extract_epochs(
            recordings,
            pre,
            config.class_map,
            config.rejection,
        )
        per_member.append((pre, ep))
    keys = sorted(set.intersection(*(set(map(tuple, ep.onsets)) for _, ep in per_member)))
    n = len(keys)
    shape = (len(ends), n) if len(classes) == 2 else (len(ends), n, len(classes))
    scores = np.zeros(shape)
    missing = np.zeros(shape[:2], dtype=bool)
    blocks = (
        np.array_split(np.arange(n), max(2, min(int(n_blocks), n))) if refit else [np.arange(n)]
    )
    y = np.zeros(0, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ZeroTrapWarning)
        for m, w, (pre, ep) in zip(model.members, model.member_weights, per_member, strict=True):
            at = {tuple(o): i for i, o in enumerate(ep.onsets)}
            rows = [at[k] for k in keys]
            y = np.array([order[ep.classes[c]] for c in ep.y[rows]], dtype=np.int64)
            Z0 = ep.Z[rows]
            run = runs_of[[k[0] for k in keys]]
            Zs = _shifted_features(recordings, pre, keys, ends - model.tmax)
            if m.run_centring is not None:  # every window from its run's mean trial window
                for r in np.unique(run):
                    mean = Z0[run == r].mean(axis=0)
                    Zs[:, run == r] -= mean
                    Z0 = Z0.copy()
                    Z0[run == r] -= mean
            for test in blocks:
                train = np.setdiff1d(np.arange(n), test) if refit else None
                if not refit:
                    fold_pre, est = pre, m.estimator
                elif len(np.unique(y[train])) < len(classes):
                    missing[:, test] = True
                    continue
                elif m.pool is None:
                    fold_pre = copy.deepcopy(pre)
                    fold_pre.fit_scaling(Z0[train])
                    est = copy.deepcopy(m.estimator).set_params(warm_start=False)
                    est.fit(fold_pre.scale(Z0[train]), y[train])
                else:  # a prior across people: adapted with the other blocks' trials only
                    fold_pre, est = pre, _adapted_without(m, Z0[train], y[train])
                for j in range(len(ends)):
                    Z = Zs[j, test]
                    ok = np.isfinite(Z.reshape(len(Z), -1)).all(axis=1)
                    s = np.full(scores[j, test].shape, np.nan)
                    if ok.any():
                        s[ok] = est.decision_function(fold_pre.scale(Z[ok]))
                    scores[j, test] += w * s
    scores[missing] = np.nan
    return scores, y


def _shifted_features(recordings, pre, keys, shifts) -> np.ndarray:
    """Features of the window of each trial ``(recording, onset)`` moved by each shift (s).

    Shape (n_shifts, n_trials, n_rows, n_times); NaN where the window leaves the recording.
    A trial whose every shifted window lies in one stretch of its recording is filtered
    once over that stretch (:meth:`~sblr_rt.preprocessing.Preprocessor.filter_stretch`)
    and its windows sliced from it; any other trial window by window. Both equal, to
    rounding, each padded window filtered alone, as the online loop's windows are.
    """
    off = round(pre.tmin * pre.sfreq) - pre.n_pad
    ds = [round(float(shift) * pre.sfreq) for shift in shifts]
    d_lo, d_hi = min(ds), max(ds)
    data = {r: _in_model_order(recordings[r], pre) for r in {r for r, _ in keys}}
    stretches = {}  # trial -> its filtered stretch, from shift d_lo
    for i, (r_idx, onset) in enumerate(keys):
        lo = onset + off + d_lo
        hi = onset + off + d_hi + pre.n_times_raw
        if _contiguous(recordings[r_idx], onset, lo, hi):
            stretches[i] = pre.filter_stretch(data[r_idx][:, lo:hi])
    n_win = pre.n_times_raw - pre.n_pad
    per_shift = []
    for d in ds:
        sliced, raws, ok = {}, {}, []
        for i, (r_idx, onset) in enumerate(keys):
            lo = onset + off + d
            if i in stretches:
                sliced[i] = stretches[i][:, d - d_lo : d - d_lo + n_win]
            elif _contiguous(recordings[r_idx], onset, lo, lo + pre.n_times_raw):
                raws[i] = data[r_idx][:, lo : lo + pre.n_times_raw]
            ok.append(i in sliced or i in raws)
        if raws:  # the other trials' windows, filtered together
            sliced.update(zip(raws, pre.filter_epochs(np.stack(list(raws.values()))), strict=True))
        windows = [sliced[i] for i in sorted(sliced)]
        feats = pre.features_from_filtered(np.stack(windows)) if windows else None
        per_shift.append((ok, feats))
    shape = next(f.shape[1:] for _, f in per_shift if f is not None)  # the trial window's
    out = np.full((len(shifts), len(keys), *shape), np.nan)
    for j, (ok, feats) in enumerate(per_shift):
        if feats is not None:
            out[j, np.flatnonzero(ok)] = feats
    return out


def _contiguous(rec, onset: int, lo: int, hi: int) -> bool:
    """Whether samples ``lo .. hi - 1`` are one stretch of the trial at ``onset``.

    Inside the recording, across no gap, and for an epoched file inside the cue's own
    trial (the samples before it belong to another trial).
    """
    first, last = (onset, onset + rec.epoch_length) if rec.epoch_length else (0, rec.n_samples)
    return first <= lo and hi <= last and not any(lo < g < hi for g, _ in rec.gaps)


def _in_model_order(rec, pre) -> np.ndarray:
    if list(pre.ch_names) == list(rec.ch_names):
        return rec.data
    index = {c: i for i, c in enumerate(rec.ch_names)}
    return np.asarray(rec.data)[[index[c] for c in pre.ch_names]]


def _log_loss_sum(scores, y, multi_class, sharpness) -> float:
    proba = proba_from_scores(scores, multi_class, sharpness)
    return float(-np.sum(np.log(np.clip(proba[np.arange(len(y)), y], 1e-12, 1.0))))


def fit_probability(scores, y, ends, multi_class="ovr", how="") -> ProbabilityCalibration | None:
    """Fit the sharpness curve ``c (e / tmax) ** b`` to out-of-fold scores.

    ``log c`` and ``b`` (in ``[0, MAX_DECAY]``) maximise the log-likelihood of the
    scores at every end after the cue, averaged over the ends (the windows of one trial
    err together: a trial counts once), minus ``TRIAL_PRIOR / 2 * log(c) ** 2``. A window
    ending at or before the cue, or at an end fewer than :data:`MIN_TRIALS` windows
    reach, gets sharpness 0 and so does every earlier end: never more belief earlier.

    Parameters
    ----------
    scores : ndarray, shape (n_ends, n_trials) or (n_ends, n_trials, n_classes)
        Out-of-fold scores (NaN: not scored).
    y : ndarray of int, shape (n_trials,)
    ends : array-like of float, shape (n_ends,)
        Increasing window ends relative to the cue; the last is ``tmax``.
    multi_class : str
        How scores become probabilities.
    how : str
        How the scores were made, in words (the fitted ``c`` and ``b`` are added).

    Returns
    -------
    calibration : ProbabilityCalibration | None
        None when fewer than :data:`MIN_TRIALS` trials of the trial window were scored.
    """
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.float64)
    tmax = float(ends[-1])
    ok = [np.isfinite(s.reshape(len(s), -1)).all(axis=1) for s in scores]
    if ok[-1].sum() < MIN_TRIALS or tmax <= 0:
        return None
    used = [j for j in range(len(ends)) if ends[j] > 0 and ok[j].sum() >= MIN_TRIALS]
    log_ratio = {j: float(np.log(ends[j] / tmax)) for j in used}

    def objective(theta):
        log_c, b = theta
        loss = sum(
            _log_loss_sum(
                scores[j][ok[j]],
                y[ok[j]],
                multi_class,
                min(np.exp(log_c + b * log_ratio[j]), MAX_SHARPNESS),
            )
            for j in used
        )
        return loss / len(used) + TRIAL_PRIOR / 2.0 * log_c**2

    res = minimize(
        objective,
        x0=[0.0, 1.0],
        method="L-BFGS-B",
        bounds=[(-np.log(MAX_SHARPNESS) * 3, np.log(MAX_SHARPNESS)), (0.0, MAX_DECAY)],
    )
    log_c, b = (float(v) for v in res.x)
    sharp = np.zeros(len(ends))
    for j in used:
        sharp[j] = round(min(float(np.exp(log_c + b * log_ratio[j])), MAX_SHARPNESS), 4)
    sharp = np.minimum.accumulate(sharp[::-1])[::-1]
    how = (
        f"{how}; c = {np.exp(log_c):.3f}, b = {b:.3f}"
        if how
        else f"c = {np.exp(log_c):.3f}, b = {b:.3f}"
    )
    return ProbabilityCalibration(tuple(float(e) for e in ends), tuple(sharp.tolist()), how)


def _adapted_without(prior, Z, y):
    """Return the prior's estimator refitted on its pool and these trials only.

    As :func:`~sblr_rt.calibration.prior.adapt_prior` refits it (the pool's scaling kept,
    each trial weighing ``pool.trial_weight`` pooled epochs), started from its current
    factors.
    """
    pool = prior.pool
    Z = np.concatenate([np.asarray(pool.Z, dtype=np.float64), Z])
    weights = np.concatenate([np.ones(pool.n_epochs), np.full(len(y), pool.trial_weight)])
    est = copy.deepcopy(prior.estimator).set_params(warm_start=True)
    est.fit(prior.preprocessor.scale(Z), np.concatenate([pool.y, y]), sample_weight=weights)
    return est.set_params(warm_start=False)


def calibrate_probability(model: BCIModel, recordings, config, classes):
    """Fit the model's :class:`ProbabilityCalibration` on its calibration trials.

    Returns
    -------
    calibration : ProbabilityCalibration | None
        None with too few trials.
    """
    ends = window_ends(model.tmin, model.tmax)
    scores, y = window_end_scores(model, recordings, config, classes, ends)
    how = HOW.format(n=len(y), blocks=min(N_BLOCKS, len(y)))
    return fit_probability(scores, y, ends, model.multi_class, how)


def expected_calibration_error(proba, y, n_bins: int = 10) -> float:
    """Return the expected calibration error of the top class (equal-width bins).

    Parameters
    ----------
    proba : ndarray, shape (n_trials, n_classes)
    y : ndarray of int, shape (n_trials,)
    n_bins : int

    Returns
    -------
    ece : float
        ``sum_b |B_b| / n * |accuracy(B_b) - confidence(B_b)|``.

    Examples
    --------
    >>> import numpy as np
    >>> expected_calibration_error(np.array([[0.1, 0.9], [0.1, 0.9]]), np.array([1, 0]))
    0.4
    """
    proba = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y)
    conf = proba.max(axis=1)
    right = np.argmax(proba, axis=1) == y
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        sel = bins == b
        total += sel.sum() * abs(right[sel].mean() - conf[sel].mean())
    return round(float(total / len(y)), 12)

"""Evidence over a trial: the smoothing rules, early decisions, and the loop publishing them."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from sblr_rt.online import Evidence, OnlineClassifier, OnlineLoop, Smoothing
from sblr_rt.online.evidence import check_smoothing
from sblr_rt.online.run_info import RunInfo

SFREQ = 100.0


def _d(p, t, trial=False, cue=None):
    return {"proba": {"a": p, "b": 1 - p}, "window_end": t, "trial": trial, "cue": cue}


def _logit(p):
    return math.log(p / (1 - p))


def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize("hop", [0.02, 0.05, 0.25])
def test_ema_of_the_log_odds_depends_on_time_not_on_the_hop(hop):
    """A step of evidence reaches 1 - exp(-t / tau) of its log-odds after t seconds."""
    ev = Evidence(["a", "b"], Smoothing("ema", tau=0.5))
    ev.observe(_d(0.5, 0.0))  # log-odds 0 before the step
    n = round(1.0 / hop)
    for k in range(1, n + 1):
        d = _d(0.9, k * hop)
        ev.observe(d)
    expected = _sigmoid(_logit(0.9) * (1 - math.exp(-1.0 / 0.5)))
    assert d["proba_smoothed"]["a"] == pytest.approx(expected, rel=1e-9)
    assert d["proba_smoothed"]["b"] == pytest.approx(1 - expected, rel=1e-9)
    assert d["proba"] == {"a": 0.9, "b": pytest.approx(0.1)}  # the raw one is kept
    assert d["early"] is False


def test_mean_since_the_cue_restarts_at_each_cue_and_counts_decisions_before_the_marker():
    ev = Evidence(["a", "b"], Smoothing("mean"))
    for k, p in enumerate((0.1, 0.2, 0.8, 0.6)):
        ev.observe(_d(p, 10.0 + k))
    # the marker of a cue at 11.5 arrives after the decisions of 12 and 13: they count
    ev.cue(11.5, "a")
    assert ev.smoothed["a"] == pytest.approx(_sigmoid((_logit(0.8) + _logit(0.6)) / 2), 1e-5)
    d = _d(0.3, 14.0)
    ev.observe(d)
    mean = (_logit(0.8) + _logit(0.6) + _logit(0.3)) / 3
    assert d["proba_smoothed"]["a"] == pytest.approx(_sigmoid(mean), rel=1e-9)
    ev.cue(20.0, "b")  # a new cue, ahead of the decisions: it opens when they reach it
    assert ev.trial == (11.5, "a")
    d = _d(0.7, 20.5)
    ev.observe(d)
    assert d["proba_smoothed"]["a"] == pytest.approx(0.7)


def test_no_smoothing_gives_the_window_itself_and_extreme_probabilities_stay_finite():
    ev = Evidence(["a", "b"], Smoothing("none"))
    for p in (0.3, 0.0, 1.0):
        d = _d(p, 1.0)
        ev.observe(d)
        assert d["proba_smoothed"]["a"] == pytest.approx(p, abs=1e-5)
    ev = Evidence(["a", "b"], Smoothing("mean"))
    for p in (0.0, 1.0, 1.0):
        d = _d(p, 1.0)
        ev.observe(d)
    assert all(math.isfinite(v) for v in d["proba_smoothed"].values())
    assert d["proba_smoothed"]["a"] > 0.99  # two confident windows outweigh one


def test_three_classes_smoothed_is_a_distribution_of_the_mean_log_probabilities():
    ev = Evidence(["x", "y", "z"], Smoothing("mean"))
    probas = [(0.6, 0.3, 0.1), (0.2, 0.5, 0.3)]
    for k, p in enumerate(probas):
        d = {"proba": dict(zip("xyz", p, strict=True)), "window_end": k, "trial": False}
        ev.observe(d)
    logp = np.log(probas).mean(axis=0)
    expected = np.exp(logp) / np.exp(logp).sum()
    np.testing.assert_allclose([d["proba_smoothed"][c] for c in "xyz"], expected, rtol=1e-9)


def test_early_decides_the_open_trial_once_after_its_cue():
    ev = Evidence(["a", "b"], Smoothing("mean", early=0.8))
    assert ev.observe(_d(0.95, 1.0)) is None  # no trial open
    ev.cue(2.0, "a")
    assert ev.observe(_d(0.6, 2.1)) is None
    assert ev.observe(_d(0.9, 2.2)) is None  # mean log-odds (0.41 + 2.20) / 2: p 0.79
    d = _d(0.99, 2.3)
    assert ev.observe(d) == (2.0, "a")
    assert d["proba_smoothed"]["a"] >= 0.8
    assert ev.observe(_d(0.99, 2.4)) is None  # decided: not twice
    # a trial decided at tmax closes the trial too
    ev.cue(5.0, "b")
    trial = _d(0.5, 6.0, trial=True, cue="b")
    assert ev.observe(trial) is None and ev.trial is None
    assert trial["early"] is False and "proba_smoothed" in trial
    assert ev.observe(_d(0.999, 6.1)) is None


def test_no_early_decision_before_early_after():
    ev = Evidence(["a", "b"], Smoothing("ema", tau=0.1, early=0.8, early_after=0.5))
    ev.cue(1.0, "a")
    for k in range(1, 5):  # confident, but within 0.5 s of the cue
        assert ev.observe(_d(0.99, 1.0 + 0.1 * k)) is None
    assert ev.observe(_d(0.99, 1.5)) == (1.0, "a")


def test_a_trial_decision_reads_the_evidence_without_storing_it():
    ev = Evidence(["a", "b"], Smoothing("mean"))
    ev.cue(0.0, "a")
    ev.observe(_d(0.8, 0.5))
    trial = _d(0.6, 0.6, trial=True, cue="a")
    ev.observe(trial)
    mean = (_logit(0.8) + _logit(0.6)) / 2
    assert trial["proba_smoothed"]["a"] == pytest.approx(_sigmoid(mean), rel=1e-9)
    assert ev.smoothed["a"] == pytest.approx(0.8, abs=1e-6)


def test_smoothing_settings_are_checked(make_model):
    with pytest.raises(ValueError, match="'smoothing' must be 'none', 'ema' or 'mean', got"):
        Smoothing("median")
    with pytest.raises(ValueError, match="'tau'"):
        Smoothing("ema", tau=0)
    with pytest.raises(ValueError, match="'early'"):
        Smoothing(early=1.0)
    with pytest.raises(TypeError, match="'early'"):
        Smoothing(early="0.8")
    with pytest.raises(ValueError, match="'early_after'"):
        Smoothing(early=0.8, early_after=-1)
    clf = OnlineClassifier(make_model())
    with pytest.raises(ValueError, match="mode='trial'"):
        check_smoothing(Smoothing(early=0.8), clf, "sliding", 0.1)
    with pytest.raises(ValueError, match="'hop' > 0"):
        check_smoothing(Smoothing(early=0.8), clf, "trial", 0.0)
    with pytest.raises(ValueError, match="exceed chance"):
        check_smoothing(Smoothing(early=0.5), clf, "trial", 0.1)
    with pytest.raises(TypeError, match="Smoothing or None"):
        check_smoothing("ema", clf, "trial", 0.1)


def test_the_model_run_configuration_gives_the_default_and_options_win(make_model):
    model = make_model()
    model.metadata = {"config": {"smoothing": "ema", "tau": 2.0, "early": 0.9}}
    smoothing = RunInfo.from_model(model).smoothing
    assert smoothing == Smoothing("ema", 2.0, 0.9)
    assert smoothing.override(early_after=0.5).early_after == 0.5
    assert smoothing.override(method="mean", early=None) == Smoothing("mean", 2.0, 0.9)
    assert smoothing.override(early=0.7).early == 0.7
    assert smoothing.override(early="off").early is None
    assert smoothing.override(tau=0.5).tau == 0.5
    model.metadata = {}
    assert RunInfo.from_model(model).smoothing == Smoothing()
    loop = OnlineLoop(
        model,
        object(),
        markers=object(),
        mode="trial",
        hop=0.1,
        smoothing=Smoothing("mean"),
    )
    assert loop.smoothing == Smoothing("mean")


def test_the_command_line_offers_every_smoothing():
    from sblr_rt.cli.run import SMOOTHING as CLI_SMOOTHING

    from sblr_rt.online.evidence import SMOOTHING

    assert CLI_SMOOTHING == SMOOTHING


# ---------------------------------------------------------------------------- the loop
def _trial_loop(fakes, model, n_total, smoothing, onsets):
    clf = OnlineClassifier(model)
    data = np.random.default_rng(3).standard_normal((n_total, len(clf.ch_names)))
    times = 50.0 + np.arange(n_total) / SFREQ
    source = fakes.Source(data, times, clf.ch_names, SFREQ)
    markers, sink, clock = fakes.Markers(), fakes.Sink(), fakes.Clock(times[0])
    loop = OnlineLoop(
        clf,
        source,
        markers=markers,
        sink=sink,
        clock=clock,
        mode="trial",
        hop=0.05,
        smoothing=smoothing,
    )
    loop.start(thread=False)
    for onset, value in onsets.items():
        markers.add(times[onset] + 0.001, value)
    while source.sent < n_total:
        source.send(min(5, n_total - source.sent))
        clock.t = times[source.sent - 1] + 0.002
        loop.step_once()
    return loop.pop_decisions(), [json.loads(s) for s in sink.sent]


@pytest.mark.parametrize("method", ["ema", "mean"])
def test_the_loop_publishes_smoothed_probabilities_and_early_trial_decisions(
    make_model, fakes, method
):
    model = make_model()
    n = model.n_times_raw
    classes = list(model.classes)
    onsets = {n + 10: classes[0], 2 * n + 40: classes[1]}
    # a threshold every trial reaches at once vs one no trial reaches
    early, _ = _trial_loop(fakes, model, 4 * n, Smoothing(method, 0.3, early=0.5001), onsets)
    late, sent = _trial_loop(fakes, model, 4 * n, Smoothing(method, 0.3, early=0.999999), onsets)
    tmax = round(model.preprocessor.tmax * SFREQ)
    for decisions in (early, late):
        assert all("proba_smoothed" in d and "early" in d for d in decisions)
        assert [d["cue"] for d in decisions if d["trial"]] == [classes[0], classes[1]]
    trials = [d for d in early if d["trial"]]
    assert all(d["early"] for d in trials)
    for d, onset in zip(trials, onsets, strict=True):
        assert d["window_stop_index"] < onset + tmax  # before the cue's tmax
        assert d["window_end"] >= model_time(d, onset)
        smoothed = d["proba_smoothed"]
        assert d["label"] == max(smoothed, key=smoothed.get)
        assert smoothed[d["label"]] >= 0.5001
    late_trials = [d for d in late if d["trial"]]
    assert not any(d["early"] for d in late_trials)
    assert [d["window_stop_index"] for d in late_trials] == [o + tmax for o in onsets]
    # on the wire: the added fields, the same decisions
    assert [p["early"] for p in sent if p["trial"]] == [False, False]
    assert all(set(p["proba_smoothed"]) == set(classes) for p in sent)


def model_time(decision, onset):
    """The cue's time: the early decision's window ends at or after it."""
    return 50.0 + onset / SFREQ


@pytest.mark.parametrize("method", ["ema", "mean"])
def test_the_loop_weighs_windows_by_the_model_calibration_of_their_end(make_model, fakes, method):
    """Windows the calibration does not believe (sharpness 0) never decide a trial early."""
    from sblr_rt.model.link import ProbabilityCalibration

    model = copy.deepcopy(make_model())  # the factory's model is shared: not changed here
    n = model.n_times_raw
    classes = list(model.classes)
    onsets = {n + 10: classes[0], 2 * n + 40: classes[1]}
    tmax = model.preprocessor.tmax
    model.metadata["probability"] = ProbabilityCalibration(
        [0.0, tmax - 0.1, tmax], [0.0, 0.0, 1.0]
    ).to_dict()
    decisions, _ = _trial_loop(fakes, model, 4 * n, Smoothing(method, 0.3, early=0.5001), onsets)
    trials = [d for d in decisions if d["trial"]]
    assert [d["cue"] for d in trials] == [classes[0], classes[1]]
    for d, onset in zip(trials, onsets, strict=True):
        assert d["window_end"] - model_time(d, onset) >= tmax - 0.1 - 1e-9
    # the sliding windows' own probabilities are the trial window's (sharpness 1 here)
    clf = OnlineClassifier(model)
    assert clf.probability.trial == 1.0


def test_a_swapped_model_brings_its_calibration_to_the_evidence(make_model, fakes):
    from sblr_rt.model.link import ProbabilityCalibration

    model = make_model()
    clf = OnlineClassifier(model)
    n = model.n_times_raw
    data = np.random.default_rng(4).standard_normal((3 * n, len(clf.ch_names)))
    times = 50.0 + np.arange(3 * n) / SFREQ
    source = fakes.Source(data, times, clf.ch_names, SFREQ)
    clock = fakes.Clock(times[0])
    loop = OnlineLoop(
        clf, source, markers=fakes.Markers(), sink=fakes.Sink(), clock=clock,
        mode="trial", hop=0.05, smoothing=Smoothing("mean", early=0.9),
    )  # fmt: skip
    loop.start(thread=False)
    source.send(n)
    clock.t = times[n - 1]
    loop.step_once()
    evidence = loop._scheduler.evidence
    assert evidence.calibration is None
    new = copy.deepcopy(make_model())
    new.metadata["probability"] = ProbabilityCalibration([0.0, 1.0], [0.2, 0.5]).to_dict()
    loop.swap_model(new)
    source.send(5)
    clock.t = times[n + 4]
    loop.step_once()
    assert loop._scheduler.evidence is evidence
    assert evidence.calibration == new.probability

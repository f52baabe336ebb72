"""The verdict on a model: chance level, interval, words, rank used, eye warning, advice."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sblr_rt.bci_model import EnsembleModel, SingleModel
from sblr_rt.bci_model.regions import WARN_SHARE, weight_regions
from sblr_rt.bci_model.verdict import (
    WORDS,
    accuracy_interval,
    chance_level,
    model_verdict,
    rank_used,
    spread_text,
    verdict_word,
)
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.preprocessing import Preprocessor

CHANNELS = ["Fp1", "Fp2", "AF3", "C3", "Cz", "C4", "CP3", "CP4", "Pz", "O1"]


def _model(loaded, *, metadata=None, rank=1):
    """A waveform model whose class lives on the channels in ``loaded``."""
    rng = np.random.default_rng(0)
    pre = Preprocessor(ch_names=CHANNELS, sfreq=50.0, tmin=0.0, tmax=1.0, n_times=10)
    y = np.arange(60) % 2
    raw = rng.standard_normal((60, len(CHANNELS), pre.n_times_raw))
    for ch in loaded:
        raw[:, CHANNELS.index(ch)] += 2.0 * (2 * y[:, None] - 1)
    est = SparseBilinearLogisticRegression(rank=rank, mu1=0.05, nu1=0.01)
    est.fit(pre.fit(raw).transform(raw), y)
    return SingleModel(preprocessor=pre, estimator=est, classes=["l", "r"], metadata=metadata)


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [(30, 2, 19 / 30), (40, 2, 25 / 40), (100, 2, 0.58), (30, 3, 14 / 30), (60, 4, 21 / 60)],
)
def test_chance_level_is_the_binomial_bound(n, k, expected):
    level = chance_level(n, k)
    assert level == pytest.approx(stats.binom.ppf(0.95, n, 1 / k) / n)
    assert level == pytest.approx(expected)
    # chance exceeds it with probability below 0.05, and only just
    hits = round(level * n)
    assert stats.binom.sf(hits, n, 1 / k) < 0.05 <= stats.binom.sf(hits - 1, n, 1 / k)


def test_chance_level_of_the_best_of_many_candidates():
    assert chance_level(30, 2, n_candidates=10) == pytest.approx(
        stats.binom.ppf(1 - 0.005, 30, 0.5) / 30
    )
    assert chance_level(30, 2, n_candidates=10) == pytest.approx(22 / 30)
    assert chance_level(30, 2, n_candidates=10) > chance_level(30, 2)


@pytest.mark.parametrize(("k", "n"), [(21, 30), (0, 30), (30, 30), (55, 100), (7, 9)])
def test_interval_is_wilson_as_scipy(k, n):
    expected = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    low, high = accuracy_interval(k / n, n)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="'n_classes'"):
        chance_level(30, 1)
    with pytest.raises(ValueError, match="'alpha'"):
        chance_level(30, 2, alpha=1.5)
    with pytest.raises(ValueError, match="'accuracy' must lie in"):
        accuracy_interval(1.2, 30)


@pytest.mark.parametrize(
    ("accuracy", "n", "candidates", "word"),
    [
        (0.600, 30, 1, WORDS[0]),  # issue 38's S005 figure: 18/30 is at chance
        (0.633, 30, 1, WORDS[0]),  # the bound itself is not above it
        (0.667, 30, 1, WORDS[1]),  # 20/30 beats one guesser
        (0.700, 30, 10, WORDS[0]),  # but 21/30 as the best of ten does not
        (0.833, 30, 10, WORDS[1]),  # lower end 0.664 < 0.70
        (0.900, 30, 10, WORDS[2]),  # lower end 0.744 >= 0.70
        (0.780, 400, 1, WORDS[2]),  # many trials: a narrow interval above 0.70
        (0.650, 400, 1, WORDS[1]),
    ],
)
def test_words_follow_the_stated_rule(accuracy, n, candidates, word):
    assert verdict_word(accuracy, n_trials=n, n_classes=2, n_candidates=candidates) == word


def test_strong_threshold_for_three_classes():
    # 0.4 of the way from 1/3 to 1 is 0.6: the interval's lower end must reach it
    assert verdict_word(0.75, n_trials=300, n_classes=3) == "strong"
    assert verdict_word(0.62, n_trials=300, n_classes=3) == "likely usable"


def test_rank_used_counts_components_that_are_not_zero():
    model = _model(["C3", "C4"], rank=2)
    est = model.estimator
    est.spatial_ = np.ones_like(est.spatial_)
    est.temporal_ = np.ones_like(est.temporal_)
    assert rank_used(est) == 2
    est.spatial_[:, 1] = 0.0  # component 2 switched off in U
    assert rank_used(est) == 1
    est.spatial_[:, 1] = 1.0
    est.temporal_[:, 1] = 0.0  # ... or in V
    assert rank_used(est) == 1
    assert "estimator: rank 2 (1 used)" in model.summary()
    assert "rank used: 1 (rank 2 fitted; 1 component(s) switched off" in model.summary()


def test_rank_used_of_several_outputs():
    class Est:
        rank = 2
        spatial_ = np.zeros((3, 4, 2))
        temporal_ = np.ones((3, 5, 2))

    Est.spatial_[1, 2, 1] = 0.5  # component 2 on for one class only
    assert rank_used(Est) == 1
    Est.spatial_[0, 0, 0] = 1.0
    assert rank_used(Est) == 2


def test_eye_warning_on_a_model_that_reads_fp1_fp2():
    model = _model(["Fp1", "Fp2"])
    regions = weight_regions(model)
    assert regions.shares["eye"] > WARN_SHARE
    assert regions.flagged() == ["eye"]
    warning = regions.warning
    assert "Fp1" in warning and "Fp2" in warning and "--eog" in warning
    assert f"above the {WARN_SHARE:.0%}" in warning
    assert "WARNING" in model.summary() and "--eog" in model.summary()


def test_no_warning_on_a_sensorimotor_model():
    model = _model(["C3", "C4"])
    assert weight_regions(model).warning is None
    assert "WARNING" not in model.summary()


def _metadata(accuracy, *, n=30, auto=False):
    md = {
        "epochs": {"found": n, "used": n, "per_class": {"l": n // 2, "r": n - n // 2}},
        "selection": {"cv": "5-fold", "search": "fast", "best": {"mean": accuracy, "std": None}},
    }
    if auto:
        names = [f"waveform/{s}" for s in ("none", "car", "csd")]
        md["selection"]["auto"] = {
            "chosen": names[0],
            "ensemble": names[:1],
            "candidates": [{"name": c, "accuracy": accuracy} for c in names],
        }
    return md


def test_verdict_of_a_weak_model_says_so_and_advises():
    model = _model(["C3", "C4"], metadata=_metadata(0.6))
    verdict = model_verdict(model)
    assert verdict.word == "not clearly above chance"
    assert verdict.chance == pytest.approx(19 / 30) and verdict.n_trials == 30
    assert verdict.advice and "more trials" in verdict.advice[0]
    text = "\n".join(verdict.lines())
    assert "NOT CLEARLY ABOVE CHANCE: CV accuracy 0.600 on 30 trials" in text
    assert "chance level: 0.633" in text and "what to try next" in text
    assert "+/- n/a" not in model.summary()


def test_verdict_of_a_good_model_gives_no_advice():
    verdict = model_verdict(_model(["C3", "C4"], metadata=_metadata(0.95)))
    assert verdict.word == "strong" and verdict.advice == ()


def test_verdict_counts_auto_candidates():
    verdict = model_verdict(_model(["C3"], metadata=_metadata(0.7, auto=True)))
    assert verdict.n_candidates == 3
    assert verdict.chance_best == pytest.approx(chance_level(30, 2, n_candidates=3))
    assert "the best of 3 candidates" in "\n".join(verdict.lines())
    assert verdict.members[0].name == "waveform/none"


def test_verdict_without_metadata():
    model = _model(["C3"])
    verdict = model_verdict(model)
    assert verdict.word is None and verdict.accuracy is None
    assert verdict.lines()[0] == "verdict: no cross-validated accuracy in this model file"
    assert model.summary().splitlines()[0] == "sblr-rt model"  # no "created ?"


def test_ensemble_flags_a_member_at_chance():
    a = _model(["C3", "C4"])
    b = _model(["C4"])
    md = _metadata(0.8, auto=True)
    md["selection"]["auto"]["ensemble"] = ["waveform/none", "waveform/csd"]
    md["selection"]["auto"]["candidates"][2]["accuracy"] = 0.467
    verdict = model_verdict(EnsembleModel([a, b], metadata=md))
    assert [m.above_chance for m in verdict.members] == [True, False]
    assert any("waveform/csd (0.467)" in w for w in verdict.warnings)
    assert "rank used per member: waveform/none 1; waveform/csd 1" in "\n".join(verdict.lines())


def test_spread_text():
    assert spread_text(None) == "" and spread_text(float("nan")) == ""
    assert spread_text(0.0412) == " +/- 0.041"

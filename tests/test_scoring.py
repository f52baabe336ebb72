"""Scores of decided trials: the figures a BCI researcher reports, against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics

from sblr_rt.scoring import score_trials, wolpaw_bits


def test_fifteen_trials_must_beat_chance_with_twelve_correct():
    # 15 two-class trials: 11 correct happen by guessing with p = 0.059, 12 with p = 0.018
    s = score_trials(["l"] * 15, ["l"] * 12 + ["r"] * 3, ["l", "r"])
    assert s.n_correct_needed == 12 and s.chance_level == pytest.approx(11 / 15)
    assert s.above_chance and s.p_value == pytest.approx(0.0176, abs=1e-4)
    assert "takes 12 of 15 correct (0.800" in "\n".join(s.lines())
    eleven = score_trials(["l"] * 15, ["l"] * 11 + ["r"] * 4, ["l", "r"])
    assert not eleven.above_chance and eleven.p_value == pytest.approx(0.0592, abs=1e-4)


def test_the_figures_are_scikit_learns():
    rng = np.random.default_rng(0)
    classes = ["a", "b", "c"]
    y_true = rng.choice(classes, 60).tolist()
    y_pred = [t if rng.random() < 0.6 else rng.choice(classes) for t in y_true]
    s = score_trials(y_true, y_pred, classes, seconds_per_trial=4.0)
    assert s.accuracy == metrics.accuracy_score(y_true, y_pred)
    assert s.balanced_accuracy == pytest.approx(metrics.balanced_accuracy_score(y_true, y_pred))
    assert s.kappa == pytest.approx(metrics.cohen_kappa_score(y_true, y_pred))
    np.testing.assert_array_equal(
        s.confusion, metrics.confusion_matrix(y_true, y_pred, labels=classes)
    )
    assert s.bits_per_minute == pytest.approx(wolpaw_bits(s.accuracy, 3) * 15)
    low, high = s.interval
    assert low < s.accuracy < high
    assert s.to_dict()["confusion"] == [list(r) for r in s.confusion]


def test_undecided_trials_are_counted_apart_and_labels_are_checked():
    s = score_trials(["l", "r", "r"], ["l", None, "r"], ["l", "r"])
    assert (s.n_trials, s.n_undecided, s.accuracy) == (2, 1, 1.0)
    assert score_trials(["l"], [None], ["l", "r"]).lines() == [
        "trials: none scored (1 more given no decision)"
    ]
    with pytest.raises(ValueError, match=r"among the classes \['l', 'r'\], got \['x'\]"):
        score_trials(["l"], ["x"], ["l", "r"])
    with pytest.raises(ValueError, match="one entry per trial, got 2 and 1"):
        score_trials(["l", "r"], ["l"], ["l", "r"])


def test_wolpaw_bits():
    assert wolpaw_bits(1.0, 2) == 1.0 and wolpaw_bits(1.0, 4) == 2.0
    assert wolpaw_bits(0.5, 2) == 0.0 and wolpaw_bits(0.3, 2) == 0.0  # at or below guessing
    assert wolpaw_bits(0.8, 2) == pytest.approx(1 + 0.8 * np.log2(0.8) + 0.2 * np.log2(0.2))

"""Scores to probabilities: one rule, for arrays and for one window."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.model.link import proba_from_scores, proba_of_window


@pytest.mark.parametrize("score", [-800.0, -3.0, 0.0, 0.7, 40.0, 800.0])
def test_one_window_equals_the_array_rule_for_two_classes(score):
    expected = proba_from_scores(np.array([score]))[0]
    np.testing.assert_allclose(proba_of_window([score]), expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("multi_class", ["ovr", "multinomial"])
def test_one_window_equals_the_array_rule_for_three_classes(multi_class):
    scores = np.array([0.3, -1.2, 2.0])
    expected = proba_from_scores(scores[None], multi_class)[0]
    np.testing.assert_allclose(proba_of_window(scores, multi_class), expected)
    assert sum(proba_of_window(scores, multi_class)) == pytest.approx(1.0)

"""A decision: one JSON and one numeric encoding, and the mapping the dicts of before were."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from sblr_rt.online import Decision, decision_to_json, public_decision

PROBA = {"left": 0.25, "right": 0.75}


def test_the_json_holds_the_public_fields_and_the_loops_when_set():
    d = Decision("right", PROBA, 1.1, window_end=np.float64(3.5), trial=True, cue="right")
    assert json.loads(d.to_json()) == {
        "label": "right", "proba": PROBA, "window_end": 3.5, "trial": True, "cue": "right",
    }  # fmt: skip
    loop = dataclasses.replace(
        d, model_version=2, proba_smoothed={"left": 0.4, "right": 0.6}, early=True, step_time=1e-4
    )
    public = json.loads(loop.to_json())
    assert public["model_version"] == 2 and public["early"] is True
    assert "step_time" not in public and "score" not in public
    assert decision_to_json(loop) == loop.to_json() == decision_to_json(dict(loop))
    assert public_decision(loop) == loop.public()


def test_the_numbers_are_the_numeric_outlets_sample():
    d = Decision("right", PROBA, 1.1, trial=True, model_version=3)
    np.testing.assert_array_equal(
        d.to_numeric(["left", "right"]), np.float32([0.25, 0.75, 0.25, 0.75, 1, 0, 3])
    )


def test_a_decision_reads_as_the_dict_it_was():
    d = Decision("left", PROBA, -1.1, window_end=2.0)
    assert d["label"] == "left" and d.get("early") is None and "early" not in d
    assert dict(d) == {
        "label": "left", "proba": PROBA, "score": -1.1, "window_end": 2.0, "trial": False,
        "cue": None,
    }  # fmt: skip
    assert d == dict(d) and d == Decision("left", PROBA, -1.1, window_end=2.0)

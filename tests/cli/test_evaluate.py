"""``sblr-rt evaluate``: a model scored on a labelled recording, as ``run`` decides."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sblr_rt.cli import main

PRIOR = "shipped:physionet-eegmmidb-left-right"


@pytest.fixture(scope="module")
def s001(physionet_dir):
    return str(physionet_dir / "S001R04.edf")


def test_evaluate_scores_the_shipped_prior_on_a_person_it_never_saw(s001, capsys):
    # The same decisions as the model's own run-centred scoring of the run's cues.
    from sblr_rt.calibration.epochs import cut_raw_epochs

    from sblr_rt.io import read_recording
    from sblr_rt.io.model_file import load_model
    from sblr_rt.priors import resolve_model_path

    assert main(["evaluate", "--model", PRIOR, s001, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    model = load_model(resolve_model_path(PRIOR))
    rec = read_recording(s001)
    m = model.for_channels(rec.ch_names)
    epochs = cut_raw_epochs([rec], m, {"T1": "left", "T2": "right"})
    labels = m.predict_run(epochs.data)
    assert [t["label"] for t in result["trials"]] == labels.tolist()
    truth = [epochs.classes[k] for k in epochs.y]
    assert [t["true"] for t in result["trials"]] == truth
    score = result["score"]
    assert score["n_trials"] == 15 and score["n_correct"] == int(np.sum(labels == truth))
    assert score["chance_level"] == pytest.approx(11 / 15) and score["n_correct_needed"] == 12
    assert result["run_centred"] and {"kappa", "balanced_accuracy", "bits_per_minute"} <= set(
        score
    )
    assert [t["marker"] for t in result["trials"]] == [
        v for v in rec.marker_values if v in ("T1", "T2")
    ]

    assert main(["evaluate", "--model", PRIOR, s001, "--static", "--trials"]) == 0
    out = capsys.readouterr().out
    assert "every trial alone from the calibration reference" in out
    assert "S001R04.edf trial 15 at " in out
    assert "above chance at p < 0.05 takes 12 of 15 correct" in out
    assert "confusion matrix:" in out and "Cohen's kappa" in out


def test_evaluate_refuses_a_missing_model_in_one_line(s001, tmp_path, capsys, one_line_error):
    assert main(["evaluate", "--model", str(tmp_path / "none.npz"), s001]) == 1
    assert "'--model' file not found" in one_line_error(capsys.readouterr().err, "evaluate")

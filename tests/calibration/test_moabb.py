"""MOABB from the installed package: the pipeline, its pipeline file, on FakeDataset."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration.moabb import (
    SelectedSBLR,
    evaluate,
    write_pipeline_file,
)

pytest.importorskip("moabb")


def _fake(n_subjects=2):
    from moabb.datasets.fake import FakeDataset

    return FakeDataset(
        event_list=("left_hand", "right_hand"),
        n_subjects=n_subjects,
        n_sessions=1,
        n_runs=1,
        duration=60,
        n_events=40,
        channels=("C3", "Cz", "C4"),
        seed=0,
    )


def test_selected_sblr_is_a_classifier_on_trials_in_volts():
    rng = np.random.default_rng(0)
    y = np.repeat(["left_hand", "right_hand"], 20)
    X = rng.standard_normal((40, 3, 25)) * 1e-5
    X[:, 0, 5:15] += 1e-5 * (y == "right_hand")[:, None]
    clf = SelectedSBLR(search="none", ranks=(1,), cv=4).fit(X, y)
    assert clf.score(X, y) > 0.8
    assert set(clf.predict(X)) <= set(y)
    assert clf.predict_proba(X).shape == (40, 2)
    assert clf.decision_function(X).shape == (40,)


def test_evaluate_within_session_on_fake_dataset(tmp_path, monkeypatch):
    (tmp_path / "mne_data").mkdir()  # MNE refuses an MNE_DATA that does not exist
    monkeypatch.setenv("MNE_DATA", str(tmp_path / "mne_data"))
    scores = evaluate(_fake(), search="none", ranks=(1,), results=tmp_path / "res")
    sblr = scores[scores["pipeline"] == "SBLR"]
    assert sorted(sblr["subject"].astype(int)) == [1, 2]
    assert set(scores["pipeline"]) == {"SBLR", "CSP+LDA"}
    assert np.all((sblr["score"] >= 0) & (sblr["score"] <= 1))
    assert (sblr["samples"] == 40).all()


def test_the_pipeline_file_is_read_by_moabb_and_evaluated(tmp_path, monkeypatch):
    (tmp_path / "mne_data").mkdir()  # MNE refuses an MNE_DATA that does not exist
    monkeypatch.setenv("MNE_DATA", str(tmp_path / "mne_data"))
    from moabb.evaluations import WithinSessionEvaluation
    from moabb.paradigms import LeftRightImagery
    from moabb.pipelines.utils import parse_pipelines_from_directory

    path = write_pipeline_file(tmp_path / "pipelines")
    assert path.name == "SBLR.yml"
    (config,) = parse_pipelines_from_directory(str(path.parent))
    assert config["name"] == "SBLR"
    assert {"LeftRightImagery", "MotorImagery"} <= set(config["paradigms"])
    step = config["pipeline"].steps[-1][1]
    assert isinstance(step, SelectedSBLR) and tuple(step.ranks) == (1, 2)
    config["pipeline"].set_params(selectedsblr__search="none", selectedsblr__ranks=(1,))
    evaluation = WithinSessionEvaluation(
        paradigm=LeftRightImagery(fmin=8.0, fmax=30.0, resample=100.0),
        datasets=[_fake(n_subjects=1)],
        overwrite=True,
        hdf5_path=str(tmp_path / "res"),
        random_state=0,
    )
    scores = evaluation.process({config["name"]: config["pipeline"]})
    assert list(scores["pipeline"]) == ["SBLR"] and 0 <= float(scores["score"].iloc[0]) <= 1


def test_the_recipe_with_moabb_benchmark(tmp_path, monkeypatch):
    # the module's recipe, moabb.benchmark() reading the pipeline folder, on FakeDataset
    # instead of a download; the file's search made the quickest (the file as written is
    # read in test_the_pipeline_file_is_read_by_moabb_and_evaluated, the search tested
    # in tests/calibration/test_search.py)
    (tmp_path / "mne_data").mkdir()  # MNE refuses an MNE_DATA that does not exist
    monkeypatch.setenv("MNE_DATA", str(tmp_path / "mne_data"))
    monkeypatch.chdir(tmp_path)
    from moabb import benchmark

    path = write_pipeline_file("pipelines")
    text = path.read_text(encoding="utf-8")
    quick = text.replace("search: fast", "search: none").replace("ranks: [1, 2]", "ranks: [1]")
    assert quick != text
    path.write_text(quick, encoding="utf-8")
    results = benchmark(
        pipelines="pipelines",
        evaluations=["WithinSession"],
        paradigms=["LeftRightImagery"],
        include_datasets=[_fake(n_subjects=1)],
        n_jobs=1,
    )
    assert list(results["pipeline"]) == ["SBLR"]
    assert 0.5 < float(results["score"].iloc[0]) <= 1.0, results["score"]

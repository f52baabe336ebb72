"""The MOABB benchmark evaluates the SBLR pipeline on MOABB's FakeDataset (no download)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "moabb.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_moabb", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_moabb_within_session_on_fake_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("MNE_DATA", str(tmp_path / "mne_data"))
    from moabb.datasets.fake import FakeDataset

    bench = _module()
    dataset = FakeDataset(
        event_list=("left_hand", "right_hand"),
        n_subjects=2,
        n_sessions=1,
        n_runs=1,
        duration=60,
        n_events=40,
        channels=("C3", "Cz", "C4"),
        seed=0,
    )
    scores = bench.evaluate(dataset, search="none", ranks=(1,), results=tmp_path / "res")
    sblr = scores[scores["pipeline"] == "SBLR"]
    assert sorted(sblr["subject"].astype(int)) == [1, 2]
    assert set(scores["pipeline"]) == {"SBLR", "CSP+LDA"}
    assert np.all((sblr["score"] >= 0) & (sblr["score"] <= 1))
    assert (sblr["samples"] == 40).all()


def test_selected_sblr_is_a_classifier_on_epochs():
    bench = _module()
    rng = np.random.default_rng(0)
    y = np.repeat(["left_hand", "right_hand"], 20)
    X = rng.standard_normal((40, 3, 25)) * 1e-5
    X[:, 0, 5:15] += 1e-5 * (y == "right_hand")[:, None]
    clf = bench.SelectedSBLR(search="none", ranks=(1,), cv=4).fit(X, y)
    assert clf.score(X, y) > 0.8
    assert set(clf.predict(X)) <= set(y)
    assert clf.predict_proba(X).shape == (40, 2)

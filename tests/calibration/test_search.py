"""The selection engine: candidates x grid x folds, a pluggable criterion, one report."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.criteria import Accuracy, LogLoss, best_point
from sblr_rt.calibration.search import (
    Candidate,
    FoldSettings,
    Stage,
    cross_validate,
    make_splits,
    summarise,
)

from sblr_rt.bci_model.search_record import search_record
from sblr_rt.bci_model.verdict import model_verdict
from sblr_rt.io import Recording, load_model, save_model


def _problem(n=40, seed=0):
    """Epochs whose class moves channel 1 at times 2-5: a rank-one difference."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    Z = rng.standard_normal((n, 6, 12))
    Z[y == 1, 1, 2:5] += 1.5
    return Z, y


def _row(loss, rank=1, l1=0.0, l2=0.0, **extra):
    return {"loss": loss, "rank": rank, "mu1_fraction": l1, "nu1_fraction": l1, "mu2": l2,
            "nu2": l2, **extra}  # fmt: skip


def test_best_point_breaks_ties_towards_the_most_regularised():
    rows = [_row(0.3), _row(0.3, l1=0.1), _row(0.3, l1=0.1, l2=1.0), _row(0.4, l1=0.4)]
    assert best_point(rows) == 2  # equal loss: larger l1, then larger l2
    rows = [_row(0.3, rank=2), _row(0.3, rank=1)]
    assert best_point(rows) == 1  # then the smaller rank
    rows = [_row(0.1, unbounded=True), _row(0.5)]
    assert best_point(rows) == 1  # an unbounded point is never chosen


def test_criteria_summarise_observations_over_folds_and_repeats():
    y = np.array([0, 1, 0, 1])
    splits = [(np.array([2, 3]), np.array([0, 1])), (np.array([0, 1]), np.array([2, 3]))]
    labels = [np.array([0, 1]), np.array([1, 1])]  # fold accuracies 1.0 and 0.5
    row = Accuracy().summarise(labels, y, splits, 1)
    assert row["accuracy"] == 0.75 and row["accuracy_std"] == 0.25 and row["loss"] == -0.75
    assert row["log_loss"] is None
    proba = [np.array([[0.8, 0.2], [0.4, 0.6]]), np.array([[0.3, 0.7], [0.1, 0.9]])]
    row = LogLoss().summarise(proba, y, splits, 1)
    want = -np.mean(np.log([0.8, 0.6, 0.3, 0.9]))  # every epoch's held-out probability
    assert row["loss"] == row["log_loss"] == pytest.approx(want)
    assert row["accuracy"] == 0.75  # the arg max, pooled


def test_engine_observes_what_the_criterion_asks_and_covers_every_point():
    Z, y = _problem()
    splits = make_splits(y, 3, 0, repeats=2)
    stages = [Stage(r, (((0.01, 0.01), ((0.2, 0.2), (0.0, 0.0))),)) for r in (1, 2)]
    candidates = [Candidate("a", "a", Z, False), Candidate("b", "b", Z[:, :2, :3], False)]
    for criterion, shape in ((Accuracy(), (None,)), (LogLoss(), (None, 2))):
        fit = FoldSettings(criterion, {"max_iter": 100, "tol": 1e-3}, "channel")
        seen = cross_validate(candidates, y, splits, stages, fit)
        assert set(seen) == {"a", "b"}
        for key in seen:
            assert len(seen[key]) == len(splits) and all(len(s) == 4 for s in seen[key])
        observed = seen["a"][0][0][0]
        assert observed.shape[1:] == shape[1:] and observed.shape[0] == len(splits[0][1])
        rows = summarise(seen["a"], y, splits, stages, criterion, n_repeats=2)
        points = [(r["rank"], r["mu1_fraction"]) for r in rows]
        assert points == [(1, 0.2), (1, 0.0), (2, 0.2), (2, 0.0)]
        assert max(r["accuracy"] for r in rows) > 0.8  # the class difference is found
        # candidate b's 2 x 3 epochs admit rank 2: all four points are there
        assert len(summarise(seen["b"], y, splits, stages, criterion, n_repeats=2)) == 4


def _recording(n_trials=24, seed=0):
    rng = np.random.default_rng(seed)
    ch = ["F3", "Fz", "F4", "C3", "Cz", "C4", "P3", "Pz", "P4"]
    n_times = 50
    labels = np.arange(n_trials) % 2
    data = rng.standard_normal((len(ch), n_trials * n_times))
    for k, c in enumerate(labels):
        data[3 + c, k * n_times + 10 : k * n_times + 30] += 1.5  # C3 or Cz rises
    return Recording(
        data=data, sfreq=100.0, ch_names=ch, marker_times=np.arange(n_trials) * n_times / 100,
        marker_values=[str(v) for v in labels], epoch_length=n_times, unit="uV",
    )  # fmt: skip


@pytest.fixture(scope="module")
def both_plans():
    rec = _recording()
    small = dict(cv=3, n_jobs=1, ranks=(1, 2), l1_fractions=(0.0, 0.1), l2_values=(0.0, 1.0))
    fixed = calibrate(rec, features="waveform", **small)
    auto = calibrate(rec, cv_repeats=1, auto_ensemble=2, **small)
    return fixed, auto


def test_both_search_plans_write_one_report_format(both_plans, tmp_path):
    fixed, auto = both_plans
    a, b = fixed.metadata["selection"], auto.metadata["selection"]
    assert set(a) - {"n_jobs"} == set(b) - {"n_jobs"}
    assert (a["search"], a["criterion"], b["search"], b["criterion"]) == (
        "fast", "accuracy", "auto", "log-loss"
    )  # fmt: skip
    assert len(a["candidates"]) == 1 and len(b["candidates"]) == 6  # 3 stages x 2 grids
    assert [r["rank"] for r in a["ranks"]] == [1, 2] and b["ranks"] == []
    for sel in (a, b):
        keys = {k for c in sel["candidates"] for p in c["points"] for k in p}
        assert {"rank", "mu1_fraction", "nu1_fraction", "mu2", "nu2", "accuracy"} <= keys
        assert sel["best"]["accuracy"] > 0.8 and sel["chosen"] == sel["ensemble"][0]
        assert sel["params"]["rank"] == sel["rank"] == sel["best"]["rank"]
    for model in (fixed, auto):  # what the file stores is read back the same
        path = save_model(model, tmp_path / "m.sblr.npz")
        assert load_model(path).metadata["selection"] == model.metadata["selection"]


def test_the_criterion_is_a_setting_of_either_plan():
    rec = _recording()
    small = dict(cv=3, n_jobs=1, ranks=(1,), l1_fractions=(0.0, 0.1), l2_values=(1.0,))
    model = calibrate(rec, features="waveform", criterion="log-loss", **small)
    sel = model.metadata["selection"]
    assert sel["criterion"] == "log-loss" and sel["best"]["log_loss"] is not None
    loss = [p["log_loss"] for p in sel["candidates"][0]["points"]]
    assert sel["best"]["log_loss"] == min(loss)
    auto = calibrate(rec, criterion="accuracy", cv_repeats=1, **small)
    assert auto.metadata["selection"]["criterion"] == "accuracy"
    want = "'criterion' must be None, 'accuracy' or 'log-loss', got 'auc'"
    with pytest.raises(ValueError, match=want):
        calibrate(rec, criterion="auc", **small)


def test_older_reports_read_in_the_current_format(both_plans):
    auto = both_plans[1]
    old_fixed = {
        "config": {"features": "waveform", "spatial": "car"},
        "selection": {
            "cv": 5, "search": "fast", "rank": 1,
            "ranks": [{"rank": 1, "mean": 0.7, "std": 0.1, "folds": [0.7] * 5}],
            "grid": [{"mu1_fraction": 0.1, "mu2": 0.0, "nu1_fraction": 0.1, "nu2": 0.0,
                      "mean": 0.7, "std": 0.1, "collapsed": 0, "raced": 0,
                      "unbounded": False, "group": 0, "step": 0}],
            "best": {"mu1_fraction": 0.1, "mu2": 0.0, "nu1_fraction": 0.1, "nu2": 0.0,
                     "mean": 0.7, "std": 0.1},
        },
    }  # fmt: skip
    record = search_record(old_fixed)
    assert record["criterion"] == "accuracy" and record["chosen"] == "waveform/car"
    assert record["ranks"][0]["accuracy"] == 0.7 and record["best"]["accuracy_std"] == 0.1
    assert record["candidates"][0]["points"][0]["accuracy"] == 0.7
    old_auto = {
        "selection": {
            "cv": "3-fold x 2 repeats", "search": "auto", "grid": [], "rank": 2,
            "best": {"mean": 0.8, "std": None},
            "auto": {"criterion": "out-of-fold log-loss", "cv": "stratified 3-fold x 2 repeats",
                     "chosen": "bandpower/car", "ensemble": ["bandpower/car", "waveform/none"],
                     "chance_level": 0.6, "dropped": [],
                     "candidates": [{"name": "bandpower/car", "features": "bandpower",
                                     "spatial": "car", "rank": 2, "l2": 1.0, "l1_fraction": 0.05,
                                     "log_loss": 0.5, "accuracy": 0.8, "auc": 0.9},
                                    {"features": "waveform", "spatial": None, "rank": 1,
                                     "l2": 0.01, "l1_fraction": 0.0, "log_loss": 0.6,
                                     "accuracy": 0.7, "auc": 0.8}]},
        }
    }  # fmt: skip
    record = search_record(old_auto)
    assert record["ensemble"] == ["bandpower/car", "waveform/none"]
    assert [c["name"] for c in record["candidates"]] == ["bandpower/car", "waveform/none"]
    assert record["candidates"][0]["mu1_fraction"] == 0.05 and record["best"]["accuracy"] == 0.8
    # the readers read both through the record: the same verdict words on old and new
    auto.metadata = dict(auto.metadata) | old_auto
    verdict = model_verdict(auto)
    assert verdict.accuracy == 0.8 and verdict.n_candidates == 2
    assert "bandpower/car" in auto.summary()


# the weakly penalised waveform point stops at max_iter, in the engine and the Pipeline alike
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_the_engine_scores_what_the_pipeline_predicts_out_of_fold(features):
    """A cold point's out-of-fold probabilities equal the scikit-learn Pipeline's.

    The engine computes the preprocessing's fixed steps once and fits the one learnt step,
    the scaling, per fold (:class:`~sblr_rt.preprocessing.FeatureScaler`): the same as the
    whole Pipeline fitted on each fold's raw epochs.
    """
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import Pipeline

    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor, make_steps
    from tests.models import simulated_epochs

    ch = ["C3", "Cz", "C4", "CP3", "CP4", "Pz"]
    pre = Preprocessor(ch_names=ch, sfreq=100.0, tmin=0.0, tmax=1.0, features=features)
    raw, y = simulated_epochs(
        pre, n_epochs=36, n_classes=2, informative=["C3", "C4"], effect=1.5,
        signal="waveform", rng=np.random.default_rng(0),
    )  # fmt: skip
    splits = make_splits(y, 3, 0)
    params = {"max_iter": 200, "tol": 1e-4}
    stages = [Stage(1, (((0.01, 0.01), ((0.0, 0.0),)),))]
    fit = FoldSettings(LogLoss(), params, pre.scaling)
    Z = pre.features_from_filtered(pre.filter_epochs(raw))  # the fixed steps, once
    seen = cross_validate([Candidate("c", "c", Z, not pre.is_linear)], y, splits, stages, fit)
    engine = np.empty((len(y), 2))
    for (_, test), point in zip(splits, seen["c"], strict=True):
        engine[test] = point[0][0]
    est = SparseBilinearLogisticRegression(rank=1, mu2=0.01, nu2=0.01, solver="paper", **params)
    pipe = Pipeline([*make_steps(pre), ("sblr", est)])
    want = cross_val_predict(pipe, raw, y, cv=splits, method="predict_proba")
    np.testing.assert_allclose(engine, want, rtol=1e-6, atol=1e-9)
    assert np.mean(np.argmax(want, axis=1) == y) > 0.7  # a model that learnt, not a constant

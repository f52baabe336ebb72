"""``features="auto"``: the candidates, the search, what the model keeps of it."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.auto import auto_candidates
from sblr_rt.calibration.criteria import pooled_scores

from sblr_rt.io.model_file import load_model, save_model
from sblr_rt.io.reading import Recording

CLASSES = {"T1": "fists", "T2": "feet"}


def _recording(ch_names, epoch_length=None):
    return Recording(
        data=np.zeros((len(ch_names), 1000)), sfreq=100.0, ch_names=ch_names,
        epoch_length=epoch_length,
    )  # fmt: skip


def test_candidates_follow_the_data():
    eeg = ["C3", "Cz", "C4", "CP3", "CP4"]
    every = auto_candidates([_recording(eeg)], eeg)
    assert len(every) == 10 and ("spectral", "csd") in every and ("waveform", None) in every
    # the covariance path takes no spatial stage (a linear map of the channels)
    assert [s for p, s in every if p == "covariance"] == [None]
    # trials without samples before them: no filter warm-up, so the waveform path only
    epoched = auto_candidates([_recording(eeg, epoch_length=50)], eeg)
    assert epoched == [("waveform", None), ("waveform", "car"), ("waveform", "csd")]
    # a channel without a scalp position: no surface Laplacian
    odd = [*eeg, "EMG1"]
    assert all(s != "csd" for _, s in auto_candidates([_recording(odd)], odd))
    # one channel: no band power (relative to the mean over channels it is zero)
    one = auto_candidates([_recording(["C3"])], ["C3"])
    assert ("bandpower", None) not in one and ("waveform", None) in one


def test_waveform_adds_the_coarse_grid_only_where_it_halves_the_points():
    from sblr_rt.calibration.auto import _with_grids
    from sblr_rt.calibration.config import CalibrationConfig

    from sblr_rt.preprocessing import Preprocessor

    eeg = ["C3", "Cz", "C4"]
    cands = [("waveform", None), ("waveform", "car"), ("bandpower", "car")]
    config = CalibrationConfig()
    short = Preprocessor(sfreq=100.0, tmin=-0.5, tmax=0.0, ch_names=eeg)  # 50 points
    keys = _with_grids(cands, short, config)
    # 0.5 s at 20 Hz: 10 points, one coarse twin per waveform candidate, none for power
    assert keys[3:] == [("waveform", None, 10), ("waveform", "car", 10)]
    assert keys[:3] == [(f, s, None) for f, s in cands]
    # 3 s at 160 Hz: 100 points by default, 60 at 20 Hz -- near-copies, not added
    long = Preprocessor(sfreq=160.0, tmin=0.5, tmax=3.5, ch_names=eeg)
    assert all(grid is None for *_, grid in _with_grids(cands, long, config))
    # a grid the user chose is kept
    assert len(_with_grids(cands, short, config.replace(n_times=25))) == 3


def test_auto_on_epoched_trials_averages_both_grids_and_saves_them(bcicomp2003_path, tmp_path):
    from sblr_rt.io import read_recording

    rec = read_recording(bcicomp2003_path)
    model = calibrate(rec, cv=3, cv_repeats=1, n_jobs=1)
    auto = model.metadata["selection"]
    names = {c["name"]: c["n_times"] for c in auto["candidates"]}
    assert names == {
        "waveform/none": 50, "waveform/car": 50, "waveform/csd": 50,
        "waveform/none/10t": 10, "waveform/car/10t": 10, "waveform/csd/10t": 10,
    }  # fmt: skip
    assert model.is_ensemble and len(model.members) == 4
    columns = [m.preprocessor.n_columns for m in model.members]
    assert columns == [names[n] for n in auto["ensemble"]]
    assert all(np.abs(m.estimator.coef_).max() > 0 for m in model.members)  # not collapsed
    n = rec.epoch_length
    X = rec.data.reshape(rec.n_channels, -1, n).transpose(1, 0, 2)
    save_model(model, tmp_path / "bci.sblr.npz")
    loaded = load_model(tmp_path / "bci.sblr.npz")
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert np.mean(model.predict(X) == np.asarray(rec.marker_values)) > 0.75  # it learned


def test_scores_are_log_loss_accuracy_and_auc():
    y = np.array([0, 0, 1, 1])
    proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.45, 0.55]])
    s = pooled_scores(proba, y, auc=True)
    assert s["accuracy"] == 1.0 and s["auc"] == 1.0
    assert s["log_loss"] == pytest.approx(-np.mean(np.log([0.9, 0.6, 0.7, 0.55])))


def _pairwise_auc(positive, score):
    """The Mann-Whitney statistic over (positive, negative) pairs, ties one half."""
    diff = score[positive][:, None] - score[~positive][None, :]
    return ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size


@pytest.mark.parametrize("n_classes", [2, 3])
def test_auc_is_the_pairwise_statistic_with_ties(n_classes):
    """scikit-learn's AUC gives the values of the pair count auto used before, ties too."""
    rng = np.random.default_rng(n_classes)
    y = np.arange(40) % n_classes
    proba = rng.dirichlet(np.ones(n_classes), size=40).round(1)  # rounding makes ties
    proba /= proba.sum(axis=1, keepdims=True)
    want = (
        _pairwise_auc(y == 1, proba[:, 1])
        if n_classes == 2
        else np.mean([_pairwise_auc(y == c, proba[:, c]) for c in range(n_classes)])
    )
    assert pooled_scores(proba, y, auc=True)["auc"] == pytest.approx(want, rel=1e-12)


def test_auto_calibration_keeps_every_candidates_scores(physionet_dir, tmp_path, capsys):
    from sblr_rt.cli import main

    files = [physionet_dir / "S001R06.edf", physionet_dir / "S001R10.edf"]
    calls = []
    model = calibrate(
        files, classes=CLASSES, tmin=0.5, tmax=3.5, cv=3, cv_repeats=2, auto_keep=2, n_jobs=1,
        progress=lambda done, total, stage: calls.append((done, total, stage)),
    )  # fmt: skip
    # the progress bar counts (candidate, fold) fits: ten candidates on 3 folds, the two
    # best on 3 more
    stages = [c for c in calls if c[2].startswith("auto:")]
    assert stages[-1][:2] == (36, 36) and all(d <= t for d, t, _ in stages)
    assert {c[2] for c in stages} == {"auto: 10 candidates, the best 2 repeated"}
    sel = model.metadata["selection"]
    assert sel["n_jobs"] == 1 and sel["criterion"] == "log-loss" and sel["search"] == "auto"
    names = [c["name"] for c in sel["candidates"]]
    assert len(names) == 10 and sel["chosen"] in names
    chosen = sel["candidates"][names.index(sel["chosen"])]
    member = next(m for m in model.members if m.name == sel["chosen"])  # members keep names
    pre = member.preprocessor
    assert (pre.features, pre.spatial) == (chosen["features"], chosen["spatial"])
    assert chosen["log_loss"] == min(c["log_loss"] for c in sel["candidates"] if c["repeats"] == 2)
    assert sum(c["repeats"] == 2 for c in sel["candidates"]) == 2  # auto_keep
    assert member.estimator.rank == chosen["rank"]
    # every candidate keeps every grid point; its own figures are its best point's
    for c in sel["candidates"]:
        assert len(c["points"]) >= len(sel["grid"]["l2"]) * len(sel["grid"]["l1_fractions"])
        assert c["log_loss"] == min(p["log_loss"] for p in c["points"])
    path = tmp_path / "auto.sblr.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert loaded.metadata["selection"]["chosen"] == sel["chosen"]
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"*{sel['chosen']}" in text and "log-loss" in text


def _candidate_features(seed=0, n=30):
    """Three candidates' unscaled features: two of one shape (one batch), one of another."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    feats = {}
    for c, (s, t) in {("waveform", None, None): (6, 12), ("waveform", "car", None): (6, 12),
                      ("spectral", None, None): (6, 5)}.items():  # fmt: skip
        Z = rng.standard_normal((n, s, t))
        Z[y == 1, 1, 2:5] += 0.7
        feats[c] = 3.0 * Z + 1.0
    return feats, y


def _candidates(feats):
    from sblr_rt.calibration.search import Candidate

    return [Candidate(k, "/".join(map(str, k)), Z, False) for k, Z in feats.items()]


def test_lockstep_route_chooses_and_scores_as_one_task_per_candidate_and_fold(monkeypatch):
    import sblr_rt.calibration.auto as auto
    import sblr_rt.calibration.search as search
    from sblr_rt.calibration.config import CalibrationConfig

    feats, y = _candidate_features()
    config = CalibrationConfig(features="auto", cv=3, cv_repeats=2, auto_keep=2, n_jobs=1)
    fast_table, fast_kept, _, _ = auto._cross_validate(_candidates(feats), y, config, None)
    # The reference route: every (candidate, fold) fitted on its own, as before the lockstep.
    monkeypatch.setattr(
        search, "_plan",
        lambda cands, ids, stages, n: [([c], [i], 0, 1) for c in range(len(cands)) for i in ids],
    )  # fmt: skip
    ref_table, ref_kept, _, _ = auto._cross_validate(_candidates(feats), y, config, None)
    assert fast_kept == ref_kept
    assert fast_table.keys() == ref_table.keys()
    point = ("rank", "mu1_fraction", "mu2", "nu1_fraction", "nu2")
    for c, rows in ref_table.items():
        assert [[r[k] for k in point] for r in fast_table[c]] == [
            [r[k] for k in point] for r in rows
        ]
        for key in ("log_loss", "accuracy"):
            np.testing.assert_allclose(
                [r[key] for r in fast_table[c]], [r[key] for r in rows], rtol=0, atol=1e-9
            )
    best = {c: search.chosen(rows) for c, rows in ref_table.items()}
    fast_best = {c: search.chosen(rows) for c, rows in fast_table.items()}
    for c, b in best.items():  # the AUC is computed for the point the report keeps
        assert fast_best[c]["auc"] == pytest.approx(b["auc"], abs=1e-9)
        assert [b[k] for k in point] == [fast_best[c][k] for k in point]


def test_search_stops_at_search_tol_and_the_final_fit_at_tol(monkeypatch):
    import sblr_rt.calibration.auto as auto
    import sblr_rt.calibration.search as search
    import sblr_rt.calibration.selection as selection
    from sblr_rt.calibration.config import CalibrationConfig

    from sblr_rt.preprocessing.scaling import apply_scaling, fit_scaling

    class Scaling:  # what _final_fit asks of a preprocessor
        is_linear = True

        def fit_scaling(self, Z):
            self.row_offset_, self.row_scale_, self.col_scale_ = fit_scaling(Z, "channel")
            return self

        def scale(self, Z):
            return apply_scaling(Z, self.row_offset_, self.row_scale_, self.col_scale_)

    feats, y = _candidate_features()
    Z = feats["waveform", None, None]
    one = _candidates({("waveform", None, None): Z})
    config = CalibrationConfig(features="auto", cv=3, cv_repeats=1, n_jobs=1, search_tol=5e-3)
    # unset: the paper's rule on small folds, large_search_tol on large ones
    default = CalibrationConfig()
    assert default.cv_tol_for(Z.shape) == default.selection.tol == 1e-3
    assert default.cv_tol_for((168, 118, 100)) == default.selection.large_search_tol == 2e-2
    seen = []
    folds_paths = search.folds_paths

    def spy(folds, rank, groups, est_params, score, stop_early=None):
        seen.append(est_params["tol"])
        return folds_paths(folds, rank, groups, est_params, score, stop_early)

    monkeypatch.setattr(search, "folds_paths", spy)
    table, _, _, stages = auto._cross_validate(one, y, config, None)
    assert seen and set(seen) == {5e-3}
    row = search.chosen(table["waveform", None, None])
    final, _, _ = auto._final_fit(Scaling(), Z, y, stages, row, config)
    assert final.tol == config.selection.tol == 1e-3
    # the fixed paths' search alike (the same engine): its folds at search_tol, the chosen
    # point at tol
    seen.clear()
    fixed = config.replace(features="waveform", ranks=(1,), l1_fractions=(0.0, 0.1))
    est, _, _ = selection.select(Z, y, config=fixed, center=False)
    assert seen and set(seen) == {5e-3}
    assert est.tol == 1e-3
    # a fold counted as large (here every fold) stops at large_search_tol; the final fit
    # still at tol, in both searches
    large = CalibrationConfig(
        features="waveform", cv=3, cv_repeats=1, n_jobs=1, ranks=(1,),
        l1_fractions=(0.0, 0.1), large_fold=1, large_search_tol=3e-2,
    )  # fmt: skip
    seen.clear()
    dtypes = []
    run_path = search.run_path

    def spy_run_path(X, *args, **kwargs):
        dtypes.append(X.dtype)
        return run_path(X, *args, **kwargs)

    monkeypatch.setattr(search, "run_path", spy_run_path)
    est, report, _ = selection.select(Z, y, config=large, center=False)
    assert seen and set(seen) == {3e-2} and report["search_tol"] == 3e-2
    assert est.tol == 1e-3
    assert dtypes == [np.float32]  # the final fit of a large problem reads float32 epochs
    assert np.any(est.spatial_) and np.any(est.temporal_)
    dtypes.clear()
    selection.select(Z, y, config=fixed, center=False)
    assert dtypes == [np.float64]  # a small one, the epochs as given
    seen.clear()
    auto._cross_validate(one, y, large.replace(features="auto"), None)
    assert seen and set(seen) == {3e-2}


def _noise_recording(seed=0, n=40, n_times=50):
    """Epoched noise with balanced random labels: no candidate can beat chance by skill."""
    rng = np.random.default_rng(seed)
    ch = ["F3", "Fz", "F4", "C3", "Cz", "C4", "P3", "Pz", "P4"]
    return Recording(
        data=rng.standard_normal((len(ch), n * n_times)), sfreq=100.0, ch_names=ch,
        marker_times=np.arange(n) * n_times / 100.0,
        marker_values=[str(v) for v in rng.permutation(np.arange(n) % 2)], epoch_length=n_times,
        unit="uV",
    )  # fmt: skip


def test_members_must_beat_chance_in_their_own_cv():
    from sblr_rt.calibration.auto import _members_above_chance

    from sblr_rt.bci_model.verdict import chance_level

    level = chance_level(30, 2)  # 0.633
    keys = [("waveform", s, None) for s in (None, "car", "csd")] + [("bandpower", "car", None)]
    best = {k: {"accuracy": a} for k, a in zip(keys, (0.6, 0.8, 0.633, 0.7), strict=True)}
    kept, dropped, got = _members_above_chance(keys, best, 30, 2)
    assert got == level and kept == [keys[1], keys[3]]  # the order of the log-loss kept
    assert [d["name"] for d in dropped] == ["waveform/none", "waveform/csd"]
    assert "not above the chance level 0.633 (30 trials)" in dropped[0]["reason"]
    # none above chance: the first (lowest log-loss) alone
    chance_only = {key: {"accuracy": 0.5} for key in keys}
    kept, dropped, _ = _members_above_chance(keys, chance_only, 30, 2)
    assert kept == keys[:1] and len(dropped) == 3


def test_auto_on_noise_keeps_one_model_and_says_why(tmp_path):
    from sblr_rt.bci_model.verdict import WORDS, model_verdict

    model = calibrate(_noise_recording(), cv=3, cv_repeats=1, n_jobs=1)
    auto = model.metadata["selection"]
    assert not model.is_ensemble and auto["ensemble"] == [auto["chosen"]]
    assert len(auto["dropped"]) == 3  # the other three of the four of lowest log-loss
    assert all(d["accuracy"] <= auto["chance_level"] for d in auto["dropped"])
    save_model(model, tmp_path / "noise.sblr.npz")
    loaded = load_model(tmp_path / "noise.sblr.npz")
    assert loaded.metadata["selection"]["dropped"] == auto["dropped"]
    text = loaded.summary()
    assert f"left out (CV accuracy not above the chance level {auto['chance_level']:.3f})" in text
    assert auto["dropped"][0]["name"] in text and "kept alone" in text
    assert model_verdict(loaded).word == WORDS[0]

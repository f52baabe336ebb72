"""The calibration report (text and PNG) for the spectral path, the spatial stage, auto."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import report
from sblr_rt.calibration.report import auto_candidates, column_axis, report_text, write_report

from sblr_rt.bci_model import BCIModel, EnsembleModel, SingleModel
from sblr_rt.io.model_file import load_model, save_model
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.preprocessing import Preprocessor

NAMES = ["FC3", "FCz", "FC4", "C3", "C1", "Cz", "C2", "C4", "CP3", "CPz", "CP4", "Pz"]

#: What calibration.auto stores: best point and scores per candidate.
AUTO = {
    "criterion": "out-of-fold log-loss",
    "cv": "stratified 5-fold x 2 repeats",
    "grid": {"ranks": [1, 2], "l2": [0.01], "l1_fractions": [0.0, 0.1]},
    "chosen": "spectral/csd",
    "candidates": [
        {"features": f, "spatial": s, "rank": 1, "l2": 0.01, "l1_fraction": 0.1,
         "log_loss": ll, "accuracy": acc, "auc": auc}
        for f, s, ll, acc, auc in [
            ("waveform", None, 0.693, 0.5, 0.51),
            ("bandpower", "car", 0.412, 0.81, 0.88),
            ("spectral", "csd", 0.301, 0.9, 0.95),
        ]
    ],
}  # fmt: skip


def spectral_model(*, spatial="csd", auto=False, seed=0) -> BCIModel:
    """A small spectral model on noise with a 10 Hz rhythm over C3 in class 1."""
    rng = np.random.default_rng(seed)
    pre = Preprocessor(
        ch_names=NAMES, sfreq=100.0, tmin=0.0, tmax=2.0, features="spectral", spatial=spatial
    )
    n = 40
    y = np.repeat([0, 1], n // 2)
    raw = rng.standard_normal((n, len(NAMES), pre.n_times_raw))
    t = np.arange(pre.n_times_raw) / pre.sfreq
    raw[y == 1, NAMES.index("C3")] += 2 * np.sin(2 * np.pi * 10 * t)
    est = SparseBilinearLogisticRegression(rank=1, max_iter=100, tol=1e-3).fit(
        pre.fit(raw).transform(raw), y
    )
    metadata = {}
    if auto:
        best = {"rank": 1, "mu1": 0.0, "mu2": 0.01, "nu1": 0.0, "nu2": 0.01, "mean": 0.9}
        metadata["selection"] = {
            "cv": "5-fold x 2 repeats",
            "search": "auto",
            "best": {**best, "std": float("nan")},
            "auto": AUTO,
            "seconds": {"features": 1.0, "total": 2.0},
        }
    return SingleModel(
        preprocessor=pre, estimator=est, classes=["rest", "move"], metadata=metadata
    )


@pytest.fixture(scope="module")
def auto_model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "auto.sblr"
    save_model(spectral_model(auto=True), path)
    return path


def test_spectral_columns_are_frequencies():
    model = spectral_model()
    axis, label = column_axis(model.preprocessor)
    assert label == "frequency (Hz)"
    np.testing.assert_allclose(axis, np.arange(7.0, 34.0, 2.0))  # 2 Hz bands 6-34 Hz
    assert axis.shape == (model.estimator.temporal_.shape[0],)
    # the other paths keep the epoch's time axis
    wave = Preprocessor(ch_names=NAMES, sfreq=100.0, tmin=0.0, tmax=1.0)
    times, label = column_axis(wave)
    assert label == "time from cue (s)"
    np.testing.assert_allclose(times, wave.times)


def test_auto_candidates_best_first_with_the_chosen_marked(auto_model_file):
    rows = auto_candidates(load_model(auto_model_file))
    assert [r["name"] for r in rows] == ["spectral/csd", "bandpower/car", "waveform/none"]
    assert [r["chosen"] for r in rows] == [True, False, False]
    assert auto_candidates(spectral_model()) == []


def test_report_text_names_the_spatial_stage_and_lists_every_candidate(auto_model_file):
    # a saved and loaded auto model: no penalty grid, NaN std stored as null
    text = report_text(load_model(auto_model_file))
    assert "spatial stage: surface Laplacian (CSD)" in text
    assert "chosen by out-of-fold log-loss: spectral/csd" in text
    lines = text.splitlines()
    for c in AUTO["candidates"]:
        name = f"{c['features']}/{c['spatial'] or 'none'}"
        (line,) = [x for x in lines if name in x and f"{c['log_loss']:.3f}" in x]
        assert f"{c['accuracy']:.3f}" in line and f"{c['auc']:.3f}" in line
        assert line.lstrip().startswith("*") == (name == AUTO["chosen"])
    assert "grid points (mean +/- std" not in text  # auto has no penalty grid to list


def test_report_text_of_a_grid_search_keeps_its_grid():
    model = spectral_model(spatial="car")
    assert "spatial stage: common average" in report_text(model)
    assert "auto:" not in report_text(model)


def drawn_figures(monkeypatch) -> list:
    """Collect every figure :func:`write_report` draws from now on."""
    figures = []
    draw = report.report_figure
    monkeypatch.setattr(report, "report_figure", lambda m: figures.append(draw(m)) or figures[-1])
    return figures


def test_write_report_leaves_pyplots_figures_and_backend_alone(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    backend = plt.get_backend()
    mine = plt.figure()
    try:
        write_report(spectral_model(spatial="car"), tmp_path / "report")
        assert plt.get_fignums() == [mine.number]
        assert plt.get_backend() == backend
    finally:
        plt.close(mine)


def test_write_report_spectral_auto(auto_model_file, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    figures = drawn_figures(monkeypatch)
    model = load_model(auto_model_file)
    text_path, png_path = write_report(model, tmp_path / "report")
    assert text_path.read_text() == report_text(model)
    image = imread(png_path)
    assert image.shape[0] > 300 and image.shape[1] > 600
    # V is drawn over the band centres in Hz, with its values
    (fig,) = figures
    (ax,) = [a for a in fig.axes if a.get_xlabel() == "frequency (Hz)"]
    line = ax.get_lines()[0]  # then the zero line
    _, V = model.estimator.canonical_factors()
    np.testing.assert_allclose(line.get_xdata(), model.preprocessor.freqs)
    np.testing.assert_allclose(line.get_ydata(), V[:, 0])
    assert not [a for a in fig.axes if "time" in a.get_xlabel()]
    # the auto table: every candidate, the chosen one starred
    (table,) = [t for a in fig.axes for t in a.tables]
    cells = {c.get_text().get_text() for c in table.get_celld().values()}
    assert {"* spectral/csd", "bandpower/car", "waveform/none", "0.301"} <= cells
    texts = [t.get_text() for a in fig.axes for t in a.texts]
    assert any("spatial surface Laplacian (CSD)" in t for t in texts)


def test_report_text_names_the_search_stopping_rule():
    model = spectral_model(spatial="car")
    point = {"mu1_fraction": 0.1, "mu2": 0.1, "nu1_fraction": 0.05, "nu2": 0.1}
    model.metadata["selection"] = {
        "cv": 5,
        "search": "fast",
        "best": {**point, "mean": 0.9, "std": 0.05},
        "grid": [{**point, "mean": 0.9, "std": 0.05, "collapsed": 0}],
        "l1_penalty_max": [1.0, 1.0],
        "seconds": {"total": 2.5},
        "n_jobs": 2,
        "search_tol": 0.02,
    }
    (line,) = [x for x in report_text(model).splitlines() if x.startswith("search time")]
    assert "CV fits stopped at q^k <= 0.02, the final fit at 0.001" in line
    assert line.startswith("search time: 2.5 s (2 parallel jobs)")
    assert "+/- 0.050" in report_text(model)  # a spread where the CV has one
    del model.metadata["selection"]["search_tol"]  # a model file from before the rule
    (line,) = [x for x in report_text(model).splitlines() if x.startswith("search time")]
    assert "stopped" not in line
    # the final fit's start: named only when the cold start replaced the path's fit
    assert not [x for x in report_text(model).splitlines() if x.startswith("final fit")]
    start = {"start": "cold", "path_objective": 0.574, "cold_objective": 0.4}
    model.metadata["selection"]["final_start"] = start
    (line,) = [x for x in report_text(model).splitlines() if x.startswith("final fit")]
    assert "started cold (objective 0.4)" in line and "worse minimum (0.574)" in line
    model.metadata["selection"]["final_start"] = start | {"start": "path"}
    assert not [x for x in report_text(model).splitlines() if x.startswith("final fit")]


def test_report_says_the_jobs_that_ran_and_no_missing_numbers():
    model = spectral_model(auto=True)
    text = report_text(model)
    assert "n_jobs=None" not in text and "+/- n/a" not in text and "nan" not in text
    model.metadata["selection"]["n_jobs"] = 1
    assert "search time: 2.0 s (1 job)" in report_text(model)


def test_png_draws_only_the_components_in_use(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")

    figures = drawn_figures(monkeypatch)
    model = spectral_model(spatial="car")  # a member: no selection metadata
    est = model.estimator
    est.spatial_ = np.concatenate([est.spatial_, np.zeros_like(est.spatial_)], axis=1)
    est.temporal_ = np.concatenate([est.temporal_, np.ones_like(est.temporal_)], axis=1)
    est.rank = 2  # rank 2 fitted, component 2 switched off
    write_report(model, tmp_path / "member")
    (fig,) = figures
    titles = [a.get_title() for a in fig.axes]
    assert "spectral 1" in titles and "spectral 2" not in titles
    texts = " ".join(t.get_text() for a in fig.axes for t in a.texts)
    assert "rank 2 (1 used)" in texts and "nan" not in texts
    assert "rank used: 1 (rank 2 fitted" in report_text(model)


def covariance_model(seed=2) -> BCIModel:
    """A small covariance model on noise with C3 louder in class 1."""
    rng = np.random.default_rng(seed)
    pre = Preprocessor(
        ch_names=NAMES, sfreq=100.0, tmin=0.0, tmax=2.0, features="covariance", spatial="car"
    )
    y = np.repeat([0, 1], 20)
    raw = rng.standard_normal((y.size, len(NAMES), pre.n_times_raw))
    raw[y == 1, NAMES.index("C3")] *= 3.0
    est = SparseBilinearLogisticRegression(rank=1, max_iter=100, tol=1e-3).fit(
        pre.fit(raw).transform(raw), y
    )
    return SingleModel(preprocessor=pre, estimator=est, classes=["rest", "move"])


def test_write_report_draws_every_member_of_an_ensemble(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")

    figures = drawn_figures(monkeypatch)
    members = [spectral_model(), spectral_model(spatial="car", seed=1), covariance_model()]
    model = EnsembleModel(members, metadata={"selection": {}}, weights=[0.5, 0.3, 0.2])
    path = tmp_path / "ensemble.sblr"
    save_model(model, path)
    model = load_model(path)
    write_report(model, tmp_path / "report")
    (fig,) = figures
    top, *blocks = fig.subfigs
    assert len(blocks) == 3
    texts = [t.get_text() for a in top.axes for t in a.texts]
    assert any("ensemble of 3 members" in t for t in texts)
    for k, (block, member) in enumerate(zip(blocks, model.members, strict=True)):
        title = block._suptitle.get_text()
        name = ["spectral/surface Laplacian (CSD)", "spectral/common average",
                "covariance/common average"][k]  # fmt: skip
        weight = model.member_weights[k]
        assert title.startswith(f"member {k} of 3: {name}, weight {weight:.2f} in the decision")
        _, V = member.estimator.canonical_factors()
        if member.features == "spectral":  # a scalp map of U, V over frequency
            (ax,) = [a for a in block.axes if a.get_xlabel() == "frequency (Hz)"]
            np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), V[:, 0])
            assert [a.get_title() for a in block.axes] == ["spatial 1", "spectral 1"]
        else:  # the covariance path's columns are channels: V is a second scalp map
            assert [a.get_title() for a in block.axes] == ["spatial 1", "second spatial (V) 1"]

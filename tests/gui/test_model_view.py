"""The Model tab draws exactly the model's factors, from a model file alone."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def model_tab(qtbot):
    from sblr_rt.gui.app import configure_pyqtgraph
    from sblr_rt.gui.model_view import ModelTab

    configure_pyqtgraph()
    tab = ModelTab()
    qtbot.addWidget(tab)
    tab.resize(1400, 900)
    return tab


def test_factor_plots_hold_the_model_values(model_tab, sim_model_file):
    from sblr_rt.io.model_file import load_model

    model_tab.load_file(sim_model_file)
    model = load_model(sim_model_file)
    U, V = model.estimator.canonical_factors()
    times = model.preprocessor.times
    assert len(model_tab.components) == model.estimator.rank
    for k, view in enumerate(model_tab.components):
        np.testing.assert_allclose(view.bars.opts["height"], U[:, k])
        x, y = view.temporal_curve.getData()
        np.testing.assert_allclose(x, times)
        np.testing.assert_allclose(y, V[:, k])
        (scalp,) = view.scalps
        np.testing.assert_allclose(scalp.values, U[:, k])
        # the colour scale is centred on zero
        assert scalp.limit == pytest.approx(np.abs(U[:, k]).max())
        # channels the penalty removed are marked as zero, the others are not
        zero_x = view.zero_marks.getData()[0]
        np.testing.assert_array_equal(zero_x, np.flatnonzero(U[:, k] == 0))
    np.testing.assert_allclose(model_tab.weights_image.image, U @ V.T)
    lo, hi = model_tab.colorbar.levels()
    assert lo == pytest.approx(-hi)
    assert model_tab.summary.ch_names == model.preprocessor.row_names
    assert model_tab.summary.axis_label == "time after cue (s)"
    # the objective trace and the CV grid come from the file
    np.testing.assert_allclose(model_tab.objective_curves[0].yData, model.metadata["objective"])
    assert model_tab.cv_image is not None
    grid = model_tab.cv_image.image
    assert grid.shape == (3, 4)
    assert np.nanmax(grid) == pytest.approx(0.8)


def test_multiclass_and_bandpower_summaries(model_tab):
    from sblr_rt.gui.summary import summarize_model

    from sblr_rt.bci_model import BCIModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor

    rng = np.random.default_rng(0)
    names = ["C3", "Cz", "C4", "CP3", "CP4", "FC3", "FC4", "Pz"]
    pre = Preprocessor(
        ch_names=names,
        sfreq=100.0,
        tmin=0.0,
        tmax=2.0,
        features="bandpower",
        bands=[(8, 13), (13, 30)],
    )
    raw = rng.standard_normal((45, len(names), pre.n_times_raw))
    y = np.repeat([0, 1, 2], 15)
    raw[y == 1, 0] *= 2
    raw[y == 2, 2] *= 2
    est = SparseBilinearLogisticRegression(rank=1, max_iter=100, tol=1e-2).fit(
        pre.fit(raw).transform(raw), y
    )
    model = BCIModel(preprocessor=pre, estimator=est, classes=["a", "b", "c"])
    summary = summarize_model(model)
    assert [s.title for s in summary.scores] == ["a vs rest", "b vs rest", "c vs rest"]
    assert summary.axis_label == "band-power time bin"
    assert [g[0] for g in summary.groups] == ["8-13 Hz", "13-30 Hz"]
    assert summary.scalp_names[: len(names)] == names
    model_tab.set_summary(summary)
    assert model_tab.score_box.count() == 3
    model_tab.score_box.setCurrentIndex(2)
    U, _ = est.canonical_factors()
    np.testing.assert_allclose(model_tab.components[0].bars.opts["height"], U[2][:, 0])
    assert len(model_tab.components[0].scalps) == 2

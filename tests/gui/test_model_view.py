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

    from sblr_rt.bci_model import SingleModel
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
    model = SingleModel(preprocessor=pre, estimator=est, classes=["a", "b", "c"])
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


def _spectral_model(*, auto: bool):
    """A spectral model with the CSD stage on noise plus a 10 Hz rhythm over C3."""
    from sblr_rt.bci_model import SingleModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor

    names = ["FC3", "FCz", "FC4", "C3", "C1", "Cz", "C2", "C4", "CP3", "CPz", "CP4", "Pz"]
    rng = np.random.default_rng(1)
    pre = Preprocessor(
        ch_names=names, sfreq=100.0, tmin=0.0, tmax=2.0, features="spectral", spatial="csd"
    )
    y = np.repeat([0, 1], 20)
    raw = rng.standard_normal((y.size, len(names), pre.n_times_raw))
    t = np.arange(pre.n_times_raw) / pre.sfreq
    raw[y == 1, names.index("C3")] += 2 * np.sin(2 * np.pi * 10 * t)
    est = SparseBilinearLogisticRegression(rank=2, max_iter=100, tol=1e-3).fit(
        pre.fit(raw).transform(raw), y
    )
    metadata = {}
    if auto:
        scores = [("bandpower", "car", 0.41, 0.8, 0.9), ("spectral", "csd", 0.3, 0.9, 0.95)]
        metadata["selection"] = {
            "search": "auto",
            "best": {"rank": 2, "mean": 0.9, "std": None},
            "auto": {
                "criterion": "out-of-fold log-loss",
                "cv": "stratified 5-fold x 2 repeats",
                "chosen": "spectral/csd",
                "candidates": [
                    {"features": f, "spatial": s, "rank": 2, "l2": 0.01, "l1_fraction": 0.1,
                     "log_loss": ll, "accuracy": acc, "auc": auc}
                    for f, s, ll, acc, auc in scores
                ],
            },
        }  # fmt: skip
    return SingleModel(
        preprocessor=pre, estimator=est, classes=["rest", "move"], metadata=metadata
    )


def test_spectral_summary_is_over_frequency():
    from sblr_rt.gui.summary import summarize_model

    model = _spectral_model(auto=False)
    summary = summarize_model(model)
    U, V = model.estimator.canonical_factors()
    assert summary.axis_label == "frequency (Hz)"
    assert summary.axis_is_frequency and not summary.axis_is_time
    np.testing.assert_allclose(summary.axis, model.preprocessor.freqs)
    assert summary.axis.shape == (V.shape[0],)
    # rows are channels: one scalp map of all of them, as on the waveform path
    assert summary.ch_names == list(model.preprocessor.pick_names)
    assert summary.groups == [("", list(range(len(summary.ch_names))))]
    np.testing.assert_allclose(summary.scores[0].spatial, U)
    np.testing.assert_allclose(summary.scores[0].temporal, V)
    assert summary.spatial == "surface Laplacian (CSD)"
    assert summary.candidates == []


def test_model_tab_draws_a_spectral_model(model_tab):
    model = _spectral_model(auto=False)
    model_tab.set_model(model)
    model_tab.grab()  # renders offscreen
    U, V = model.estimator.canonical_factors()
    for k, view in enumerate(model_tab.components):
        x, y = view.temporal_curve.getData()
        np.testing.assert_allclose(x, model.preprocessor.freqs)
        np.testing.assert_allclose(y, V[:, k])
        assert view.temporal_plot.getAxis("bottom").labelText == "frequency (Hz)"
        assert "spectral factor" in view.temporal_plot.titleLabel.text
        (scalp,) = view.scalps
        np.testing.assert_allclose(scalp.values, U[:, k])
    np.testing.assert_allclose(model_tab.weights_image.image, U @ V.T)
    header = model_tab.header.text()
    assert "spatial stage = surface Laplacian (CSD)" in header
    assert "14 frequency bands" in header
    assert model_tab.auto_table.isHidden()


def test_model_tab_lists_the_auto_candidates(model_tab, tmp_path):
    from sblr_rt.io.model_file import save_model

    path = tmp_path / "auto.sblr"
    save_model(_spectral_model(auto=True), path)
    model_tab.load_file(path)
    model_tab.grab()
    table = model_tab.auto_table
    assert not table.isHidden()
    cells = [[table.item(i, j).text() for j in range(table.columnCount())] for i in range(2)]
    assert cells[0] == ["★ spectral/csd", "0.300", "0.900", "0.950", "2"]  # best first
    assert cells[1] == ["bandpower/car", "0.410", "0.800", "0.900", "2"]
    assert table.item(0, 0).font().bold() and not table.item(1, 0).font().bold()
    assert "features='auto'" in model_tab.header.text()
    # the auto search has no penalty grid: no empty CV plot
    assert model_tab.cv_plot is None
    # a model without auto hides the table again
    model_tab.set_model(_spectral_model(auto=False))
    assert table.isHidden()


def test_model_tab_header_says_the_rate_and_the_verdict(model_tab):
    model = _spectral_model(auto=True)
    model.metadata["epochs"] = {"found": 30, "used": 30, "per_class": {"rest": 15, "move": 15}}
    model.metadata["selection"]["best"]["mean"] = 0.6
    model.preprocessor.sfreq = 1000.0  # as a 1 kHz amplifier's model reads it
    model_tab.set_model(model)
    header = model_tab.header.text()
    assert "sfreq = 1000 Hz" in header and "1e+03" not in header
    assert "verdict: NOT CLEARLY ABOVE CHANCE: CV accuracy 0.600 on 30 trials" in header
    assert "chance level: 0.633" in header and "what to try next" in header


def _click_row(qtbot, table, row: int) -> None:
    from PyQt5 import QtCore

    rect = table.visualItemRect(table.item(row, 1))
    qtbot.mouseClick(table.viewport(), QtCore.Qt.LeftButton, pos=rect.center())


def test_a_click_on_a_member_row_draws_that_member(model_tab, qtbot, sim_ensemble_file):
    from sblr_rt.io.model_file import load_model

    model = load_model(sim_ensemble_file)
    model_tab.load_file(sim_ensemble_file)
    model_tab.grab()
    table = model_tab.member_table
    assert not table.isHidden() and table.rowCount() == 3
    cells = [[table.item(i, j).text() for j in range(table.columnCount())] for i in range(3)]
    assert cells == [
        ["0", "waveform/none", "0.50", "2 of 2", "no"],
        ["1", "bandpower/none", "0.30", "1 of 1", "no"],
        ["2", "waveform/none", "0.20", "1 of 1", "yes"],
    ]
    assert model_tab.member.index == 0  # the first member is drawn at first
    for k in (2, 1, 0):
        _click_row(qtbot, table, k)
        member = model.members[k]
        assert model_tab.member.index == k
        assert table.item(k, 0).font().bold()
        assert sum(table.item(i, 0).font().bold() for i in range(3)) == 1
        U, V = member.estimator.canonical_factors()
        assert len(model_tab.components) == member.estimator.rank
        for c, view in enumerate(model_tab.components):
            np.testing.assert_allclose(view.bars.opts["height"], U[:, c])
            x, y = view.temporal_curve.getData()
            np.testing.assert_allclose(y, V[:, c])
            np.testing.assert_allclose(x, model_tab.shown.axis)
        np.testing.assert_allclose(model_tab.weights_image.image, U @ V.T)
        np.testing.assert_allclose(
            model_tab.objective_curves[0].yData, member.estimator.objective_
        )
        weight = model.member_weights[k]
        assert f"member {k}: " in model_tab.header.text()
        assert f"weight {weight:.2f} in the decision" in model_tab.header.text()
    # the band-power member: one scalp map per band, V over the time bins
    _click_row(qtbot, table, 1)
    assert len(model_tab.components[0].scalps) == 2
    assert model_tab.shown.axis_label == "band-power time bin"
    with pytest.raises(ValueError, match="'index' must name a member \\(0 to 2\\), got 3"):
        model_tab.select_member(3)
    # a summary can open on any member
    model_tab.set_summary(model_tab.summary, member=2)
    assert model_tab.member.index == 2 and model_tab.member.prior
    assert model_tab.member_table.item(2, 0).font().bold()
    with pytest.raises(ValueError, match="'member' must name a member \\(0 to 2\\), got 5"):
        model_tab.set_summary(model_tab.summary, member=5)
    # a single model hides the table again and draws as before
    model_tab.set_model(model.members[0])
    assert table.isHidden() and model_tab.member is None
    with pytest.raises(ValueError, match="needs an ensemble"):
        model_tab.select_member(0)


def test_drawing_member_after_member_replaces_the_views(model_tab, qtbot, sim_ensemble_file):
    from PyQt5 import QtWidgets

    model_tab.load_file(sim_ensemble_file)
    # redrawing a drawn member, then others, crashed Qt when the views were cleared item by
    # item (a segmentation fault on a calibrated S001 ensemble): the views are replaced
    for k in (0, 0, 1, 2, 1, 0, 2, 2):
        model_tab.select_member(k)
        QtWidgets.QApplication.processEvents()
        model_tab.grab()
        assert model_tab.member.index == k
        assert f"member {k}: " in model_tab.header.text()
    # one overview view in the layout: the old ones are gone, not stacked above the new
    right = model_tab.overview_widget.parentWidget()
    views = [w for w in right.findChildren(type(model_tab.overview_widget)) if not w.isHidden()]
    assert views == [model_tab.overview_widget]
    assert "features = ensemble" in model_tab.header.text()

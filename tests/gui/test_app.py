"""The main window, the gui command's screenshots and calibration from the Calibrate tab."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gui


def test_gui_command_writes_one_screenshot_per_tab(qapp, tmp_path, sim_model_file):
    from PyQt5 import QtGui

    from sblr_rt.cli import main

    target = tmp_path / "dash.png"
    assert main(["gui", "--model", str(sim_model_file), "--screenshot", str(target)]) == 0
    for name in ("live", "model", "calibrate", "paradigm"):
        path = tmp_path / f"dash-{name}.png"
        image = QtGui.QImage(str(path))
        assert not image.isNull(), path
        assert image.width() >= 800 and image.height() >= 400


def test_gui_command_refuses_a_missing_model(tmp_path, capsys):
    from sblr_rt.cli import main

    assert main(["gui", "--model", str(tmp_path / "nope.npz"), "--screenshot", "x.png"]) == 1
    assert "no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_tab_trains_in_a_worker_and_switches_the_model(qtbot, tmp_path, physionet_dir):
    from gui.app import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    tab = window.calibrate_tab
    tab.use_file.setChecked(True)
    tab.file_edit.setText(str(physionet_dir / "S001R06.edf"))
    tab.classes_edit.setText("T1, T2")
    tab.tmin_spin.setValue(0.5)
    tab.tmax_spin.setValue(2.5)
    tab.search_box.setCurrentText("none")
    tab.cv_spin.setValue(2)
    config = tmp_path / "calibration.toml"
    config.write_text("ranks = [1]\nn_times = 20\nn_jobs = 1\n")
    tab.config_edit.setText(str(config))
    tab.out_edit.setText(str(tmp_path / "calibrated.sblr.npz"))
    with qtbot.waitSignal(tab.model_ready, timeout=120_000) as blocker:
        tab.calibrate_button.click()
        # the GUI thread is free while the worker calibrates
        assert not tab.calibrate_button.isEnabled()
    model, path = blocker.args
    assert path.endswith("calibrated.sblr.npz")
    assert model.classes == ["T1", "T2"]
    assert tab.progress.format() == "done"
    # the new model is in use at once: Model tab and toolbar show it
    assert window.model is model
    assert window.model_tab.summary.classes == ["T1", "T2"]
    assert "calibrated.sblr.npz" in window.model_label.text()

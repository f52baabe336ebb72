"""``sblr-rt gui``: screenshots of every tab offscreen, refusals before Qt starts."""

from __future__ import annotations

import pytest
from sblr_rt.cli import main


@pytest.mark.gui
def test_gui_writes_one_screenshot_per_tab(model_path, tmp_path):
    from PyQt5 import QtGui

    target = tmp_path / "dash.png"
    assert main(["gui", "--model", str(model_path), "--screenshot", str(target)]) == 0
    for name in ("live", "model", "calibrate", "paradigm"):
        path = tmp_path / f"dash-{name}.png"
        image = QtGui.QImage(str(path))
        assert not image.isNull(), path
        assert image.width() >= 800 and image.height() >= 400
    # one model: no per-member files
    assert not list(tmp_path.glob("dash-model-*.png"))


@pytest.fixture(scope="module")
def ensemble_path(tmp_path_factory):
    """Return an ensemble file: a waveform and a band-power member on C3, Cz, C4."""
    import numpy as np

    from sblr_rt.bci_model import EnsembleModel, SingleModel
    from sblr_rt.io.model_file import save_model
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    members = []
    for features in ("waveform", "bandpower"):
        pre = Preprocessor(
            ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0, features=features
        )
        raw = rng.standard_normal((40, 3, pre.n_times_raw))
        raw[y == 1, 0] *= 2.0
        raw[y == 1, 2] += 1.0
        est = SparseBilinearLogisticRegression(max_iter=100, tol=1e-2)
        est.fit(pre.fit(raw).transform(raw), y)
        members.append(SingleModel(preprocessor=pre, estimator=est, classes=["left", "right"]))
    path = tmp_path_factory.mktemp("cli-ensemble") / "ens.sblr.npz"
    save_model(EnsembleModel(members, weights=[0.6, 0.4]), path)
    return path


@pytest.mark.gui
def test_gui_writes_the_model_tab_once_per_member(ensemble_path, tmp_path):
    from PyQt5 import QtGui

    target = tmp_path / "dash.png"
    assert main(["gui", "--model", str(ensemble_path), "--screenshot", str(target)]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        f"dash-{n}.png" for n in ("live", "model", "model-0", "model-1", "calibrate", "paradigm")
    }
    images = [QtGui.QImage(str(tmp_path / f"dash-model-{k}.png")) for k in (0, 1)]
    assert all(not i.isNull() and i.width() >= 800 for i in images)
    assert images[0] != images[1]  # each draws its own member


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "nope.npz"], "--model: no such file: nope.npz"),
        (["--screenshot", "no-such-folder/x.png"], "--screenshot: the folder does not exist"),
        (["--marker-stream", "M"], "--marker-stream needs --stream"),
        (["--hop", "0"], "--hop must be > 0 seconds, got 0.0"),
    ],
)
def test_gui_refuses_bad_arguments_in_one_line(
    extra, message, tmp_path, monkeypatch, capsys, one_line_error
):
    monkeypatch.chdir(tmp_path)
    assert main(["gui", *extra]) == 1
    assert message in one_line_error(capsys.readouterr().err, "gui")
    assert not list(tmp_path.iterdir())


def test_gui_without_a_display_says_so_in_one_line():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "sblr_rt.cli", "gui"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode not in (0, 134), done.stderr[-2000:]
    assert "needs a display" in done.stderr and "--screenshot" in done.stderr
    assert "Traceback" not in done.stderr

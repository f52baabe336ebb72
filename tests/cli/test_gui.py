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

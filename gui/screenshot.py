"""Render the dashboard's tabs (and the cue window) to PNG files, offscreen or not."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PyQt5 import QtCore, QtWidgets

logger = logging.getLogger("sblr_rt.gui")


def _process_events(seconds: float) -> None:
    app = QtWidgets.QApplication.instance()
    deadline = time.monotonic() + seconds
    while True:
        app.processEvents()
        if time.monotonic() >= deadline:
            return
        time.sleep(0.01)


#: Seconds a screenshot waits at the most for the Live tab's first data: resolving the
#: stream and starting the loop take seconds, more on a busy machine.
LIVE_TIMEOUT = 60.0


def wait_for_live(window, *, timeout: float = LIVE_TIMEOUT, settle: float = 3.0) -> bool:
    """Let the event loop run until the Live tab draws data, then ``settle`` seconds more.

    Parameters
    ----------
    window : gui.app.MainWindow
        The dashboard.
    timeout : float
        Longest wait for the first snapshot with samples.
    settle : float
        Seconds of live drawing after that (so the traces and the timeline fill).

    Returns
    -------
    ok : bool
        Whether live data arrived (False at once when the connection failed).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _process_events(0.05)
        snap = window.live_tab.last_snapshot
        if snap is not None and snap.raw.data.size:
            _process_events(settle)
            return True
        if window.connection_error is not None:  # no data will come
            logger.warning("no live data: %s", window.connection_error)
            return False
    logger.warning("no live data within %.1f s; the Live screenshot shows no traces", timeout)
    return False


def screenshot_paths(path, names) -> list[Path]:
    """``FILE.png`` -> ``FILE-live.png``, ``FILE-model.png``, ... for the given names."""
    path = Path(path)
    suffix = path.suffix or ".png"
    return [path.with_name(f"{path.stem}-{name.lower()}{suffix}") for name in names]


def save_screenshots(window, path, *, paradigm: bool = True) -> list[Path]:
    """Save one PNG per tab, and one of the cue window showing a cue with feedback.

    Parameters
    ----------
    window : gui.app.MainWindow
        The dashboard (shown, possibly offscreen).
    path : str | Path
        Base name: ``dash.png`` gives ``dash-live.png``, ``dash-model.png``,
        ``dash-calibrate.png`` (and ``dash-paradigm.png``). With an ensemble, the Model tab
        once more per member: ``dash-model-0.png``, ``dash-model-1.png``, ... (the member's
        index, as ``sblr-rt inspect`` counts).
    paradigm : bool
        Also render the cue window.

    Returns
    -------
    paths : list of Path
        Files written.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"the folder of the screenshot path does not exist: {path.parent}")
    tab_names = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    targets = screenshot_paths(path, tab_names)
    written = []
    current = window.tabs.currentIndex()
    for index, target in enumerate(targets):
        window.tabs.setCurrentIndex(index)
        _process_events(0.15)
        _save(window, target)
        written.append(target)
        if window.tabs.widget(index) is window.model_tab:
            written += _member_screenshots(window, target)
    window.tabs.setCurrentIndex(current)
    if paradigm:
        written.append(_paradigm_screenshot(window, screenshot_paths(path, ["Paradigm"])[0]))
    return written


def _save(window, target: Path) -> None:
    if not window.grab().save(str(target)):
        raise OSError(f"could not write {target}")


def _member_screenshots(window, target: Path) -> list[Path]:
    """Save the Model tab once per member of an ensemble (``X-model-<k>.png``), if any."""
    tab = window.model_tab
    members = tab.summary.members if tab.summary is not None else []
    shown = tab.member
    written = []
    for member in members:
        tab.select_member(member.index)
        _process_events(0.15)
        member_target = target.with_name(f"{target.stem}-{member.index}{target.suffix}")
        _save(window, member_target)
        written.append(member_target)
    if shown is not None:
        tab.select_member(shown.index)
    return written


def _paradigm_screenshot(window, target: Path) -> Path:
    from sblr_rt.gui.paradigm import ParadigmWindow
    from sblr_rt.gui.schedule import ParadigmConfig, TrialEvent

    classes = tuple(getattr(window.model, "classes", None) or ("left", "right"))
    try:
        config = ParadigmConfig(classes=classes)
    except ValueError:
        config = ParadigmConfig()
    cue_window = ParadigmWindow(config, publish=False)
    cue_window.resize(800, 500)
    label = config.classes[-1]
    # the imagery phase with feedback, the cue symbol drawn on top as at the cue
    cue_window.phase = TrialEvent(0.0, "imagery", "imagery", 3, label, 3.0)
    proba = {c: 0.1 / max(1, len(config.classes) - 1) for c in config.classes}
    proba[label] = 0.9
    cue_window.set_feedback(proba, enabled=True)
    cue_window.show()
    _process_events(0.1)
    image = cue_window.grab()
    cue_window.phase = TrialEvent(0.0, "cue", label, 3, label, 1.25)
    cue_window.repaint()
    cue = cue_window.grab()
    from PyQt5 import QtGui

    caption = 28
    both = QtGui.QPixmap(image.width() * 2 + 10, image.height() + caption)
    both.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(both)
    painter.drawPixmap(0, caption, cue)
    painter.drawPixmap(image.width() + 10, caption, image)
    font = painter.font()
    font.setPointSize(11)
    painter.setFont(font)
    painter.setPen(QtGui.QColor("black"))
    for x, text in (
        (0, f"cue window: the cue '{label}' over the fixation cross"),
        (image.width() + 10, "imagery period with feedback from live decisions (online mode)"),
    ):
        painter.drawText(
            QtCore.QRect(x, 0, image.width(), caption), int(QtCore.Qt.AlignCenter), text
        )
    painter.end()
    cue_window.close()
    if not both.save(str(target)):
        raise OSError(f"could not write {target}")
    return target

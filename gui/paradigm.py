"""The cue window: a Graz-style trial sequence for the subject, with LSL markers and feedback.

:class:`ParadigmWindow` is its own top-level window (drag it to the second screen, press
F11 for full screen). It runs the schedule of :mod:`sblr_rt.gui.schedule`: black screen, white
fixation cross, the class cue (arrow or word) over the cross, the imagery period, then a
blank rest of jittered length. Each phase onset is pushed on its own LSL marker stream
(default name ``SBLR-Paradigm``) stamped with the *flip time*: the window repaints
synchronously (``repaint()``), then the LSL clock is read and the marker pushed with that
timestamp. (On a real display the photons follow at the next vertical refresh, up to one
frame later; Qt cannot report that moment, so the marker marks the end of the paint.)

In online mode (:meth:`ParadigmWindow.set_feedback`) the imagery period shows a
horizontal bar moved by the class probability of the latest decision: for two classes it
points towards the cue side of the more probable class (length |p1 - p0|), for more
classes one bar per class grows with its probability.
"""

from __future__ import annotations

import logging
import uuid

from PyQt5 import QtCore, QtGui, QtWidgets
from sblr_rt.gui.schedule import ParadigmConfig, TrialEvent, TrialScheduler, build_schedule
from sblr_rt.gui.widgets import class_color

logger = logging.getLogger("sblr_rt.gui")


def lsl_clock() -> float:
    """Return the LSL clock without importing pylsl (liblsl's clock is ``time.monotonic``)."""
    from sblr_rt.stream import local_clock

    return local_clock()


class ParadigmWindow(QtWidgets.QWidget):
    """Top-level cue window.

    Parameters
    ----------
    config : ParadigmConfig
        Classes and timing.
    marker_name : str
        Name of the marker stream it publishes.
    marker_source_id : str | None
        ``source_id`` of that stream (a unique one when None).
    publish : bool
        Whether to open the LSL marker outlet (False: only :attr:`log` records events).
    clock : callable | None
        Returns the current LSL time; :func:`lsl_clock` by default.
    parent : QWidget | None
        Parent (None: a top-level window, as meant).

    Attributes
    ----------
    log : list of (str, float)
        Every marker sent: value and flip time.
    phase : TrialEvent | None
        The phase on screen.
    events : list of TrialEvent
        The schedule of the current (or last) run.
    t0 : float | None
        LSL time the run started; event ``e`` is due at ``t0 + e.time``.
    """

    #: emitted with each event after its flip: (marker value, flip time)
    marker_sent = QtCore.pyqtSignal(str, float)
    #: emitted when the run ends (or is stopped)
    finished = QtCore.pyqtSignal()

    def __init__(
        self,
        config: ParadigmConfig | None = None,
        *,
        marker_name: str = "SBLR-Paradigm",
        marker_source_id: str | None = None,
        publish: bool = True,
        clock=None,
        parent=None,
    ):
        super().__init__(parent)
        self.setWindowTitle("sblr-rt cue window")
        self.setWindowFlag(QtCore.Qt.Window, True)
        self.resize(900, 650)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(QtGui.QPalette.Window, QtGui.QColor("black"))
        self.setPalette(palette)
        self.config = config or ParadigmConfig()
        self.marker_name = marker_name
        self.marker_source_id = marker_source_id or f"sblr-paradigm-{uuid.uuid4().hex[:8]}"
        self.publish = bool(publish)
        self.clock = clock or lsl_clock
        self.log: list[tuple[str, float]] = []
        self.phase: TrialEvent | None = None
        self.feedback: dict | None = None
        self.feedback_enabled = False
        self.scheduler: TrialScheduler | None = None
        self.events: list[TrialEvent] = []
        self.t0: float | None = None
        self._outlet = None
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(QtCore.Qt.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        QtWidgets.QShortcut(QtGui.QKeySequence("F11"), self, self._toggle_full_screen)
        QtWidgets.QShortcut(QtGui.QKeySequence("Escape"), self, self.stop)

    # --------------------------------------------------------------------------- control
    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.scheduler is not None and not self.scheduler.finished

    def start(self, config: ParadigmConfig | None = None) -> None:
        """Start a run (opens the marker outlet on first use).

        Parameters
        ----------
        config : ParadigmConfig | None
            New configuration; the current one when None.
        """
        if config is not None:
            self.config = config
        self.open_outlet()
        self.log = []
        self.events = build_schedule(self.config)
        self.scheduler = TrialScheduler(self.events)
        self.t0 = self.clock()
        self.scheduler.start(self.t0)
        self._tick()

    def stop(self) -> None:
        """Stop the run (sends ``"end"`` if it was running)."""
        if self.running:
            self._timer.stop()
            end = TrialEvent(0.0, "end", "end", -1, None, 0.0)
            self._show(end)
            self.scheduler = None
            self.finished.emit()

    def open_outlet(self) -> None:
        """Open the LSL marker outlet now (so a recorder can connect before the run)."""
        if self.publish and self._outlet is None:
            from sblr_rt.stream import MarkerOutlet

            self._outlet = MarkerOutlet(name=self.marker_name, source_id=self.marker_source_id)

    def close_outlet(self) -> None:
        """Close the LSL marker outlet."""
        if self._outlet is not None:
            self._outlet.close()
            self._outlet = None

    def closeEvent(self, event):
        """Stop the run and close the outlet with the window."""
        self.stop()
        self.close_outlet()
        super().closeEvent(event)

    def set_feedback(self, proba: dict | None, *, enabled: bool | None = None) -> None:
        """Set the class probabilities the feedback bar shows during imagery.

        Parameters
        ----------
        proba : dict | None
            ``{label: probability}`` of the latest decision.
        enabled : bool | None
            Turn feedback on or off (unchanged when None).
        """
        if enabled is not None:
            self.feedback_enabled = bool(enabled)
        self.feedback = dict(proba) if proba else None
        if self.phase is not None and self.phase.kind == "imagery" and self.feedback_enabled:
            self.update()

    def _toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    # ------------------------------------------------------------------------- schedule
    def _tick(self) -> None:
        if self.scheduler is None:
            return
        events = self.scheduler.due(self.clock())
        for event in events:
            self._show(event)
        if self.scheduler.finished:
            self.scheduler = None
            self.finished.emit()
            return
        wait = self.scheduler.time_to_next(self.clock())
        self._timer.start(max(0, int(wait * 1000)))

    def _show(self, event: TrialEvent) -> None:
        self.phase = event
        self.repaint()  # synchronous: the frame is drawn when this returns
        flip = self.clock()
        if self._outlet is not None:
            self._outlet.push(event.value, flip)
        self.log.append((event.value, flip))
        logger.debug("paradigm %s at %.4f", event.value, flip)
        self.marker_sent.emit(event.value, flip)

    # -------------------------------------------------------------------------- drawing
    def paintEvent(self, event):
        """Draw the current phase."""
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.Antialiasing)
        rect = self.rect()
        painter.fillRect(rect, QtGui.QColor("black"))
        phase = self.phase
        size = min(rect.width(), rect.height())
        center = QtCore.QPointF(rect.center())
        if phase is None or phase.kind in ("start", "end"):
            text = {
                None: "Cue window: waiting for Start",
                "start": "Get ready",
                "end": "Done. Thank you!",
            }[phase.kind if phase else None]
            self._text(painter, center, text, size * 0.06, "#bbbbbb")
            return
        if phase.kind in ("fixation", "cue", "imagery"):
            pen = QtGui.QPen(QtGui.QColor("white"), max(2.0, size * 0.012))
            painter.setPen(pen)
            arm = size * 0.08
            painter.drawLine(center - QtCore.QPointF(arm, 0), center + QtCore.QPointF(arm, 0))
            painter.drawLine(center - QtCore.QPointF(0, arm), center + QtCore.QPointF(0, arm))
        if phase.kind == "cue":
            symbol = self.config.symbol(phase.label)
            index = self.config.classes.index(phase.label)
            if len(symbol) == 1:  # an arrow, drawn over the cross as in the Graz paradigm
                self._text(painter, center, symbol, size * 0.35, class_color(index))
            else:  # a word, above the cross
                where = center - QtCore.QPointF(0, size * 0.2)
                self._text(painter, where, symbol, size * 0.1, class_color(index))
        if phase.kind == "imagery" and self.feedback_enabled and self.feedback:
            self._draw_feedback(painter, rect, size)
        trial = f"trial {phase.trial + 1} / {self.config.n_trials}"
        painter.setPen(QtGui.QColor("#555555"))
        font = painter.font()
        font.setPointSizeF(max(7.0, size * 0.018))
        painter.setFont(font)
        painter.drawText(rect.adjusted(10, 10, -10, -10), int(QtCore.Qt.AlignLeft), trial)

    def _draw_feedback(self, painter, rect, size) -> None:
        classes = list(self.config.classes)
        proba = self.feedback
        center = QtCore.QPointF(rect.center())
        height = size * 0.06
        y = center.y() + size * 0.22
        half = rect.width() * 0.4
        if len(classes) == 2:
            painter.setPen(QtGui.QPen(QtGui.QColor("#777777"), 1))
            painter.drawRect(QtCore.QRectF(center.x() - half, y, 2 * half, height))
            # positive towards the second class's side: its arrow points right for
            # (left, right); the bar's length is the margin of the decision
            p0, p1 = float(proba.get(classes[0], 0.0)), float(proba.get(classes[1], 0.0))
            value = p1 - p0
            side = 1 if value >= 0 else 0
            width = half * abs(value)
            x = center.x() if value >= 0 else center.x() - width
            painter.fillRect(QtCore.QRectF(x, y, width, height), QtGui.QColor(class_color(side)))
            painter.setPen(QtGui.QPen(QtGui.QColor("white"), 2))
            painter.drawLine(
                QtCore.QPointF(center.x(), y - 4), QtCore.QPointF(center.x(), y + height + 4)
            )
            for k, sign in ((0, -1), (1, 1)):
                where = QtCore.QPointF(center.x() + sign * (half + size * 0.06), y + height / 2)
                self._text(painter, where, self.config.symbol(classes[k]), height, "#888888")
            return
        # three or more classes: one bar per class, its height the probability
        n = len(classes)
        bar_w = 2 * half / n
        base = y + height
        full = size * 0.2
        for k, label in enumerate(classes):
            p = min(1.0, max(0.0, float(proba.get(label, 0.0))))
            x = center.x() - half + k * bar_w
            painter.fillRect(
                QtCore.QRectF(x + 4, base - full * p, bar_w - 8, full * p),
                QtGui.QColor(class_color(k)),
            )
            where = QtCore.QPointF(x + bar_w / 2, base + height)
            self._text(painter, where, self.config.symbol(label), height * 0.8, "#888888")

    @staticmethod
    def _text(painter, center, text, pixel_size, color) -> None:
        font = QtGui.QFont()
        font.setPixelSize(max(8, int(pixel_size)))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QtGui.QColor(color))
        box = QtCore.QRectF(center.x() - 2000, center.y() - pixel_size, 4000, 2 * pixel_size)
        painter.drawText(box, int(QtCore.Qt.AlignCenter), text)

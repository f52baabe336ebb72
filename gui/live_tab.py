"""The Live tab: scrolling traces, decision timeline and status line.

This module owns the widget and its drawing; the status line and banner texts live in
:mod:`sblr_rt.gui.live_status`, the channel choice and decimation in
:mod:`sblr_rt.gui.live_traces`.

A QTimer (30 Hz) calls ``provider.snapshot(channels=...)`` — the online loop's
:meth:`~sblr_rt.online.loop.OnlineLoop.snapshot` or, with no model, a
:class:`sblr_rt.gui.providers.SourceProvider` — and redraws. ``snapshot()`` copies a few small
arrays under a lock and never touches LSL, so the GUI thread never waits on a stream.

The snapshot is a :class:`~sblr_rt.online.telemetry.Telemetry`, read by attribute:
``time`` (LSL clock), ``stream`` (``name``, ``sfreq``, ``connected``, ``buffer_fill``, ...),
``raw`` (``data`` (n_channels, n_display), ``times``, ``ch_names``), ``decisions`` and
``trials`` (dicts with ``window_end``, ``proba``, ``label``, ``trial``, ``cue``), ``cues``
((t, value) pairs), ``step_time`` and ``latency`` (``p50``, ``p99``),
``decisions_per_second``, ``gaps``, ``n_gaps``, ``dropped``, ``halted``; ``mode`` is None
for a bare stream (no decisions).
"""

from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtGui, QtWidgets
from sblr_rt.gui.live_status import (
    banner_message,
    make_banner,
    make_status_label,
    precue_note,
    status_html,
)
from sblr_rt.gui.live_traces import (
    DEFAULT_MAX_SHOWN,
    default_channels,
    format_amplitude,
    minmax_decimate,
)
from sblr_rt.gui.widgets import class_color

from sblr_rt.online.telemetry import Telemetry

logger = logging.getLogger("sblr_rt.gui")

__all__ = ["DEFAULT_MAX_SHOWN", "LiveTab", "default_channels", "minmax_decimate"]


class LiveTab(QtWidgets.QWidget):
    """Scrolling traces, decision timeline and status of a live session.

    Parameters
    ----------
    window_seconds : float
        Seconds of history shown.
    interval_ms : int
        Redraw period (33 ms = 30 Hz).
    parent : QWidget | None
        Parent widget.
    """

    #: emitted with every snapshot drawn (the paradigm window's feedback listens)
    snapshot_drawn = QtCore.pyqtSignal(object)

    def __init__(self, *, window_seconds: float = 10.0, interval_ms: int = 33, parent=None):
        super().__init__(parent)
        self.window_seconds = float(window_seconds)
        self.provider = None
        self.last_snapshot: Telemetry | None = None
        self.last_error: str | None = None
        self.frame_times: list[float] = []
        self._selected: list[str] | None = None
        self._ch_names: list[str] = []
        self._classes: list[str] = []
        self._scale: float | None = None
        self._n_curves: tuple[int, int] = (0, 0)
        self._tick_names: list[str] = []
        self._connect_cache: tuple[tuple[int, int], np.ndarray] | None = None
        self._cue_lines: list[pg.InfiniteLine] = []
        self._gap_regions: list[pg.LinearRegionItem] = []
        self._precue_regions: list[pg.LinearRegionItem] = []
        self._window_length: float | None = None
        self._build()
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.refresh)
        self.timer.setInterval(int(interval_ms))

    # ---------------------------------------------------------------------------- layout
    def _build(self) -> None:
        layout = QtWidgets.QVBoxLayout(self)
        self.banner = make_banner()
        layout.addWidget(self.banner)

        body = QtWidgets.QHBoxLayout()
        layout.addLayout(body, 1)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        body.addWidget(self.plots, 1)

        side = QtWidgets.QVBoxLayout()
        side.addWidget(QtWidgets.QLabel("Channels shown"))
        self.channel_list = QtWidgets.QListWidget()
        self.channel_list.setMaximumWidth(150)
        self.channel_list.itemChanged.connect(self._on_channels_changed)
        side.addWidget(self.channel_list, 1)
        buttons = QtWidgets.QHBoxLayout()
        for text, slot in (("All", self._select_all), ("Motor", self._select_default)):
            button = QtWidgets.QPushButton(text)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        side.addLayout(buttons)
        body.addLayout(side)

        self.trace_plot = self.plots.addPlot(row=0, col=0)
        self.trace_plot.setLabel("bottom", "time (s, 0 = now)")
        self.trace_plot.setMouseEnabled(x=False, y=False)
        self.trace_plot.hideButtons()
        self.trace_plot.setXRange(-self.window_seconds, 0, padding=0)
        self.trace_plot.getAxis("left").setStyle(tickFont=_font(7), textFillLimits=[(0, 0.95)])
        self.trace_plot.showGrid(x=True, alpha=0.2)
        self.trace_curve = pg.PlotCurveItem(
            pen=pg.mkPen("#1f1f1f", width=1), antialias=False, skipFiniteCheck=False
        )
        # one call to drawLines is 2-3x faster than one long QPainterPath here
        self.trace_curve.setSegmentedLineMode("on")
        self.trace_plot.addItem(self.trace_curve)
        self.trace_title = "EEG traces"
        self.trace_plot.setTitle(self.trace_title)

        self.timeline = self.plots.addPlot(row=1, col=0)
        self.timeline.setTitle(
            "decisions: p per class at each window's end (▲ trial decision; grey: mostly "
            "pre-cue EEG)"
        )
        self.timeline.setLabel("left", "probability")
        self.timeline.setLabel("bottom", "time (s, 0 = now)")
        self.timeline.setYRange(0, 1.05, padding=0)
        self.timeline.setMouseEnabled(x=False, y=False)
        self.timeline.hideButtons()
        self.timeline.setXLink(self.trace_plot)
        self.timeline.showGrid(x=True, y=True, alpha=0.2)
        # below the timeline, not over it: over it, it covered the first cue's label
        self.legend = pg.LegendItem(offset=None, colCount=4, pen=pg.mkPen("#999"))
        self.plots.addItem(self.legend, row=2, col=0)
        self.chance_line = pg.InfiniteLine(
            pos=0.5, angle=0, pen=pg.mkPen("#999999", style=QtCore.Qt.DotLine)
        )
        self.timeline.addItem(self.chance_line)
        self.proba_curves: dict[str, pg.PlotDataItem] = {}
        self.smoothed_curves: dict[str, pg.PlotDataItem] = {}
        self.trial_points = pg.ScatterPlotItem(size=13, symbol="t1", pen=pg.mkPen("k"))
        self.timeline.addItem(self.trial_points)
        self.plots.ci.layout.setRowStretchFactor(0, 3)
        self.plots.ci.layout.setRowStretchFactor(1, 1)

        self.window_note = QtWidgets.QLabel(precue_note(None))
        self.window_note.setWordWrap(True)
        self.window_note.setStyleSheet("color: #555")
        self.timeline.setToolTip(precue_note(None))
        layout.addWidget(self.window_note)
        self.status = make_status_label()
        layout.addWidget(self.status)

    # -------------------------------------------------------------------------- provider
    def set_provider(self, provider, *, classes=None, window=None) -> None:
        """Poll ``provider.snapshot()`` from now on (None stops).

        Parameters
        ----------
        provider : object | None
            Anything with ``snapshot(channels=None) -> Telemetry`` (an ``OnlineLoop``).
        classes : list of str | None
            Class labels in model order, for colours; read from decisions when None.
        window : tuple of float | None
            The model's ``(tmin, tmax)``: the first half of its length after each cue is
            shaded on the timeline (sliding windows ending there hold mostly pre-cue EEG).
        """
        self._window_length = None if window is None else float(window[1] - window[0])
        self.window_note.setText(precue_note(self._window_length))
        self.timeline.setToolTip(precue_note(self._window_length))
        if provider is not self.provider:
            # another stream may have other channels: start again from its defaults
            self._selected = None
            self._ch_names = []
            self._scale = None
            self.last_snapshot = None
        self.provider = provider
        self.last_error = None
        self._classes = [str(c) for c in classes] if classes is not None else []
        self._reset_classes()
        if provider is None:
            self.timer.stop()
            self.banner.hide()
            return
        self.timer.start()

    def _reset_classes(self) -> None:
        for curve in [*self.proba_curves.values(), *self.smoothed_curves.values()]:
            self.timeline.removeItem(curve)
            self.legend.removeItem(curve)
        self.proba_curves, self.smoothed_curves = {}, {}
        for label in self._classes:
            self._proba_curve(label)

    def _proba_curve(self, label: str) -> pg.PlotDataItem:
        curve = self.proba_curves.get(label)
        if curve is None:
            color = class_color(len(self.proba_curves))
            curve = self.timeline.plot([], [], pen=pg.mkPen(color, width=1))
            self.proba_curves[label] = curve
            # the evidence over the trial (proba_smoothed), what the feedback bar shows
            self.smoothed_curves[label] = self.timeline.plot([], [], pen=pg.mkPen(color, width=3))
            self.legend.addItem(curve, f"p({label})")
            self.legend.addItem(self.smoothed_curves[label], f"smoothed p({label})")
            if label not in self._classes:
                self._classes.append(label)
            n = max(len(self._classes), 2)
            self.chance_line.setValue(1.0 / n)
        return curve

    # ---------------------------------------------------------------------------- refresh
    def refresh(self) -> None:
        """Take one snapshot from the provider and redraw (the timer's slot)."""
        if self.provider is None:
            return
        try:
            snapshot = self.provider.snapshot(channels=self._selected)
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.banner.setText(f"The online loop stopped: {self.last_error}")
            self.banner.show()
            self.timer.stop()
            logger.error("snapshot failed: %s", exc)
            return
        self.draw(snapshot)

    def draw(self, snapshot: Telemetry) -> None:
        """Redraw everything from one snapshot.

        Parameters
        ----------
        snapshot : Telemetry
            As returned by ``OnlineLoop.snapshot()``.
        """
        start = time.perf_counter()
        self.last_snapshot = snapshot
        now = float(snapshot.time)
        self._update_channel_list(snapshot.stream.ch_names or snapshot.raw.ch_names)
        self._draw_traces(snapshot.raw, now)
        self._draw_decisions(snapshot, now)
        self._draw_marks(snapshot, now)
        self._draw_status(snapshot)
        self.frame_times.append(time.perf_counter() - start)
        del self.frame_times[:-300]
        self.snapshot_drawn.emit(snapshot)

    # ---------------------------------------------------------------------------- traces
    def _update_channel_list(self, ch_names) -> None:
        if not ch_names or list(ch_names) == self._ch_names:
            return
        self._ch_names = list(ch_names)
        shown = set(default_channels(self._ch_names))
        self.channel_list.blockSignals(True)
        self.channel_list.clear()
        for name in self._ch_names:
            item = QtWidgets.QListWidgetItem(name)
            item.setFlags(item.flags() | QtCore.Qt.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.Checked if name in shown else QtCore.Qt.Unchecked)
            self.channel_list.addItem(item)
        self.channel_list.blockSignals(False)
        self._on_channels_changed()

    def _on_channels_changed(self, *_):
        self._selected = [
            self.channel_list.item(i).text()
            for i in range(self.channel_list.count())
            if self.channel_list.item(i).checkState() == QtCore.Qt.Checked
        ]
        self._scale = None

    def select_channels(self, names) -> None:
        """Show these channels (names of the stream)."""
        wanted = set(names)
        self.channel_list.blockSignals(True)
        for i in range(self.channel_list.count()):
            item = self.channel_list.item(i)
            item.setCheckState(QtCore.Qt.Checked if item.text() in wanted else QtCore.Qt.Unchecked)
        self.channel_list.blockSignals(False)
        self._on_channels_changed()
        if not self._ch_names:
            self._selected = list(names)

    def _select_all(self) -> None:
        self.select_channels(self._ch_names)

    def _select_default(self) -> None:
        self.select_channels(default_channels(self._ch_names))

    def _draw_traces(self, raw: dict, now: float) -> None:
        data = np.asarray(raw.data)
        times = np.asarray(raw.times, float)
        names = list(raw.ch_names)
        if data.ndim != 2 or data.shape[1] < 2 or data.shape[0] == 0:
            self.trace_curve.setData([], [])
            return
        n_ch = data.shape[0]
        width = max(200, int(self.trace_plot.vb.width() or 800))
        # a min/max pair per 2 pixel columns; more when rows are only a few pixels tall,
        # where finer detail cannot be seen and every segment costs paint time
        per_pair = 2 if n_ch <= 32 else (4 if n_ch <= 64 else 6)
        data, times = minmax_decimate(data, times, width // per_pair)
        data = data.astype(np.float64, copy=False)
        # centre on the mean, scale by the mean absolute deviation of every 4th sample:
        # cheap, and smoothed over frames below
        if np.isfinite(data).all():
            centred = data - data.mean(axis=1, keepdims=True)
            spread = np.abs(centred[:, ::4]).mean(axis=1)
        else:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                centred = data - np.nanmean(data, axis=1, keepdims=True)
                spread = np.nanmean(np.abs(centred[:, ::4]), axis=1)
        spread = spread[np.isfinite(spread) & (spread > 0)]
        # mean absolute deviation ~ 0.8 sigma: 2.5 of them per channel spacing
        target = float(np.median(spread)) * 2.5 if spread.size else 1.0
        # smooth the scale so traces do not breathe from frame to frame
        if self._scale is None or not (0.5 < target / self._scale < 2.0):
            self._scale = target
        else:
            self._scale = 0.9 * self._scale + 0.1 * target
        y = np.clip(centred / self._scale, -1.2, 1.2) + np.arange(n_ch)[::-1, None]
        x = np.broadcast_to(times - now, y.shape)
        key = y.shape
        if self._connect_cache is None or self._connect_cache[0] != key:
            connect = np.ones(key, dtype=bool)
            connect[:, -1] = False
            self._connect_cache = (key, connect.ravel())
        self.trace_curve.setData(
            x=np.ascontiguousarray(x).ravel(), y=y.ravel(), connect=self._connect_cache[1]
        )
        height = int(self.trace_plot.vb.height() or 500)
        if (n_ch, height) != self._n_curves or names != self._tick_names:
            self._n_curves = (n_ch, height)
            self._tick_names = names
            step = max(1, math.ceil(n_ch / max(4, height // 12)))
            ticks = [(n_ch - 1 - i, n) for i, n in enumerate(names) if i % step == 0]
            self.trace_plot.getAxis("left").setTicks([ticks, []])
            self.trace_plot.setYRange(-1, n_ch, padding=0)
        unit = raw.unit
        self.trace_plot.setTitle(
            f"EEG traces: {n_ch} channels, auto-scaled (channel spacing = "
            f"{format_amplitude(self._scale, unit)}; red band = gap in the stream)"
        )

    # ------------------------------------------------------------------------- decisions
    def _draw_decisions(self, snapshot: Telemetry, now: float) -> None:
        decisions = [d for d in snapshot.decisions if not d.trial]
        trials = list(snapshot.trials)
        if not trials:
            trials = [d for d in snapshot.decisions if d.trial]
        for d in decisions[-1:] + trials[-1:]:
            for label in d.proba:
                self._proba_curve(str(label))
        if decisions:
            t = np.array([float(d.window_end) for d in decisions]) - now
            for field, curves in (
                ("proba", self.proba_curves),
                ("proba_smoothed", self.smoothed_curves),
            ):
                for label, curve in curves.items():
                    p = [(getattr(d, field) or {}).get(label, np.nan) for d in decisions]
                    curve.setData(t, np.array(p, dtype=float))
        else:
            for curve in [*self.proba_curves.values(), *self.smoothed_curves.values()]:
                curve.setData([], [])
        spots = []
        for d in trials:
            label = str(d.label)
            index = self._classes.index(label) if label in self._classes else 0
            spots.append(
                {
                    "pos": (float(d.window_end) - now, float(d.proba.get(label, 1.0))),
                    "brush": pg.mkBrush(class_color(index)),
                    "data": label,
                }
            )
        self.trial_points.setData(spots)

    def _draw_marks(self, snapshot: Telemetry, now: float) -> None:
        cues = [(float(t), str(v)) for t, v in snapshot.cues]
        cues = [(t - now, v) for t, v in cues if t - now >= -self.window_seconds]
        while len(self._cue_lines) < 2 * len(cues):
            for plot in (self.trace_plot, self.timeline):
                line = pg.InfiniteLine(
                    angle=90,
                    pen=pg.mkPen("#E69F00", width=2, style=QtCore.Qt.DashLine),
                    label="",
                    labelOpts={
                        "position": 0.97 if plot is self.trace_plot else 0.85,
                        "color": "#A0522D",
                        "fill": (255, 255, 255, 200),
                    },
                )
                plot.addItem(line)
                self._cue_lines.append(line)
        for i, line in enumerate(self._cue_lines):
            k = i // 2
            if k < len(cues):
                line.setValue(cues[k][0])
                line.label.setFormat(f"cue {cues[k][1]}" if i % 2 == 0 else cues[k][1])
                line.show()
            else:
                line.hide()
        half = 0.0 if self._window_length is None else self._window_length / 2
        shaded = [(t, t + half) for t, _ in cues] if half > 0 else []
        while len(self._precue_regions) < len(shaded):
            region = pg.LinearRegionItem(
                movable=False, brush=pg.mkBrush(120, 120, 120, 45), pen=pg.mkPen(None)
            )
            self.timeline.addItem(region)
            self._precue_regions.append(region)
        for i, region in enumerate(self._precue_regions):
            if i < len(shaded):
                region.setRegion(shaded[i])
            region.setVisible(i < len(shaded))
        gaps = [(float(a) - now, float(b) - now) for a, b in snapshot.gaps]
        gaps = [(a, b) for a, b in gaps if b >= -self.window_seconds]
        if not snapshot.stream.connected:
            last = np.asarray(snapshot.raw.times, float)
            since = float(last[-1]) - now if last.size else -self.window_seconds
            gaps.append((since, 0.0))
        while len(self._gap_regions) < 2 * len(gaps):
            for plot in (self.trace_plot, self.timeline):
                region = pg.LinearRegionItem(
                    movable=False, brush=pg.mkBrush(178, 24, 43, 50), pen=pg.mkPen(None)
                )
                plot.addItem(region)
                self._gap_regions.append(region)
        for i, region in enumerate(self._gap_regions):
            k = i // 2
            if k < len(gaps):
                region.setRegion(gaps[k])
                region.show()
            else:
                region.hide()

    # ---------------------------------------------------------------------------- status
    def _draw_status(self, snapshot: Telemetry) -> None:
        self.status.setText(status_html(snapshot))
        message = banner_message(snapshot)
        if message is None:
            self.banner.hide()
        else:
            self.banner.setText(message)
            self.banner.show()

    @property
    def stream_lost(self) -> bool:
        """Whether the last snapshot said the stream is gone."""
        snap = self.last_snapshot
        return snap is not None and not snap.stream.connected


def _font(size: int) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSize(size)
    return font

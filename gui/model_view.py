"""The Model tab: the learned factors, W = U V^T, the CV grid and the objective trace.

Works from a model file alone. Per rank component: the spatial factor as an interpolated
scalp map and as a labelled per-channel bar chart, and the temporal factor over the epoch's
time axis (on the spectral path a spectrum: over frequency in Hz). Then the weight matrix W
as a channels-by-time (or -frequency) heatmap with a colour bar, the cross-validation grid
and the objective per iteration of the solver. The header names the spatial stage; a model
from ``features="auto"`` also gets the table of every candidate's CV scores. An ensemble
gets the table of its members (feature path and spatial stage, weight in the decision, rank
used, prior or not): a click on a row draws that member's factors, W and objective trace.
The CV plot is drawn by :mod:`sblr_rt.gui.model_cv`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtGui, QtWidgets
from sblr_rt.gui.model_cv import draw_cv, format_value
from sblr_rt.gui.scalp import ScalpMapPlot
from sblr_rt.gui.summary import MemberSummary, ModelSummary, ScoreFactors, summarize_model
from sblr_rt.gui.widgets import (
    AutoCandidatesTable,
    MemberTable,
    RotatedLabelAxis,
    channel_ticks,
    class_color,
    diverging_cmap,
    notify,
    symmetric_limit,
)

from sblr_rt.montage import scalp_layout

#: Header facts that belong to the factors drawn (an ensemble's member), not the whole model.
_FACTOR_KEYS = ("rank", "mu1", "nu1", "mu2", "nu2")

POSITIVE = "#B2182B"
NEGATIVE = "#2166AC"
ZERO = "#888888"


@dataclass
class ComponentView:
    """The plot items drawn for one rank component (kept for tests and updates)."""

    scalps: list[ScalpMapPlot]
    bars: pg.BarGraphItem
    zero_marks: pg.ScatterPlotItem
    bar_plot: pg.PlotItem
    temporal_curve: pg.PlotDataItem
    temporal_plot: pg.PlotItem


class ModelTab(QtWidgets.QWidget):
    """Everything the model learned, from a model file alone.

    Parameters
    ----------
    parent : QWidget | None
        Parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary: ModelSummary | None = None
        self.components: list[ComponentView] = []
        self.weights_image: pg.ImageItem | None = None
        self.colorbar: pg.ColorBarItem | None = None
        self.cv_image: pg.ImageItem | None = None
        self.cv_plot: pg.PlotItem | None = None
        self.objective_curves: list[pg.PlotDataItem] = []
        self._score_index = 0
        self._member_index = 0
        self._xy = np.zeros((0, 2))

        layout = QtWidgets.QVBoxLayout(self)
        top = QtWidgets.QHBoxLayout()
        self.header = QtWidgets.QLabel("No model loaded: File ▸ Open model… or calibrate one.")
        self.header.setWordWrap(True)
        top.addWidget(self.header, 1)
        # beside the header, not below it: the plots keep their height
        self.member_table = MemberTable()
        self.member_table.member_chosen.connect(self.select_member)
        top.addWidget(self.member_table, 0, QtCore.Qt.AlignTop)
        self.score_box = QtWidgets.QComboBox()
        self.score_box.setToolTip("Which score to show (one per class for one-versus-rest)")
        self.score_box.currentIndexChanged.connect(self._on_score_changed)
        self.score_box.hide()
        top.addWidget(self.score_box)
        self.open_button = QtWidgets.QPushButton("Open model…")
        self.open_button.clicked.connect(self._open_dialog)
        top.addWidget(self.open_button)
        layout.addLayout(top)

        splitter = QtWidgets.QSplitter(QtCore.Qt.Horizontal)
        self.components_widget = pg.GraphicsLayoutWidget()
        self.components_widget.setBackground("w")
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.components_widget)
        splitter.addWidget(self.scroll)
        right = QtWidgets.QWidget()
        right_layout = QtWidgets.QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.auto_table = AutoCandidatesTable()
        right_layout.addWidget(self.auto_table)
        self.overview_widget = pg.GraphicsLayoutWidget()
        self.overview_widget.setBackground("w")
        right_layout.addWidget(self.overview_widget, 1)
        self._right_layout = right_layout
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([900, 600])
        layout.addWidget(splitter, 1)

    # ------------------------------------------------------------------ loading
    def load_file(self, path) -> None:
        """Load a model file and draw it.

        Parameters
        ----------
        path : str | Path
            A model file written by ``BCIModel.save``.
        """
        from sblr_rt.io.model_file import load_model

        model = load_model(path)
        summary = summarize_model(model)
        info = dict(summary.info)
        info.setdefault("file", Path(path).name)
        self.set_summary(ModelSummary(**{**summary.__dict__, "info": info}))

    def set_model(self, model, **kwargs) -> None:
        """Draw a model (``BCIModel`` or fitted estimator); kwargs go to summarize_model."""
        self.set_summary(summarize_model(model, **kwargs))

    def set_summary(self, summary: ModelSummary, *, member: int = 0) -> None:
        """Draw a :class:`sblr_rt.gui.summary.ModelSummary` (an ensemble's ``member``)."""
        if summary.members and not 0 <= member < len(summary.members):
            raise ValueError(
                f"'member' must name a member (0 to {len(summary.members) - 1}), got {member}"
            )
        self.summary = summary
        self._score_index = 0
        self._member_index = member if summary.members else 0
        self.member_table.set_members(summary.members, self._member_index)
        self._show_member()

    @property
    def member(self) -> MemberSummary | None:
        """The ensemble's member drawn; None for a single model."""
        if self.summary is None or not self.summary.members:
            return None
        return self.summary.members[self._member_index]

    @property
    def shown(self) -> ModelSummary | None:
        """The factors drawn: the member's (:attr:`member`) or the single model's."""
        member = self.member
        return member.summary if member is not None else self.summary

    def select_member(self, index: int) -> None:
        """Draw member ``index`` of an ensemble (what a click on its row does).

        Parameters
        ----------
        index : int
            ``0 .. n_members - 1``, as :attr:`ModelSummary.members` counts.
        """
        members = self.summary.members if self.summary is not None else []
        if not 0 <= index < len(members):
            raise ValueError(
                f"'index' must name a member (0 to {len(members) - 1}), got {index}"
                if members
                else f"'index' needs an ensemble; the model drawn has no members, got {index}"
            )
        self._member_index = index
        self.member_table.set_current(index)
        self._show_member()

    def _show_member(self) -> None:
        shown = self.shown
        self._xy = scalp_layout(shown.scalp_names)
        self.score_box.blockSignals(True)
        self.score_box.clear()
        self.score_box.addItems([s.title for s in shown.scores])
        self.score_box.setVisible(len(shown.scores) > 1)
        if self._score_index >= len(shown.scores):
            self._score_index = 0
        self.score_box.setCurrentIndex(self._score_index)
        self.score_box.blockSignals(False)
        self._draw()

    def _open_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open model file")
        if path:
            try:
                self.load_file(path)
            except (OSError, ValueError, TypeError, RuntimeError) as exc:
                notify(self, "Cannot open model", str(exc))

    def _on_score_changed(self, index: int) -> None:
        if index >= 0 and self.summary is not None:
            self._score_index = index
            self._draw()

    # ------------------------------------------------------------------ drawing
    def _draw(self) -> None:
        summary, shown = self.summary, self.shown
        score = shown.scores[self._score_index]
        self._draw_header(summary, score)
        self.auto_table.set_candidates(summary.candidates)
        self._new_views()
        self.components = []
        n_known = int(np.isfinite(self._xy).all(1).sum())
        for k in range(score.rank):
            self._draw_component(k, score, show_scalp=n_known >= 3)
        self.components_widget.setMinimumHeight(430 * score.rank)
        self._draw_weights(score)
        self.overview_widget.nextRow()
        if summary.cv_results or not summary.candidates:  # else the auto table says it all
            self._draw_cv(summary)
            self.overview_widget.nextRow()
        else:
            self.cv_image = self.cv_plot = None
        self._draw_objective(shown)
        # A redraw in a view of unchanged size keeps the layout's old geometry (pyqtgraph
        # places it on resize only): place it again so the plots fill the view.
        for view in (self.components_widget, self.overview_widget):
            view.resizeEvent(None)

    def _new_views(self) -> None:
        """Replace both plot views with empty ones; Qt deletes the old views as a whole.

        Clearing a view item by item and drawing another member into it crashed Qt (a
        segmentation fault in pyqtgraph while items of the old drawing were deleted).
        """
        old = self.overview_widget
        self.components_widget = pg.GraphicsLayoutWidget()
        self.components_widget.setBackground("w")
        self.scroll.setWidget(self.components_widget)  # the scroll area deletes the old one
        self.overview_widget = pg.GraphicsLayoutWidget()
        self.overview_widget.setBackground("w")
        self._right_layout.removeWidget(old)
        old.hide()
        old.deleteLater()
        self._right_layout.addWidget(self.overview_widget, 1)
        self.weights_image = self.colorbar = self.cv_image = self.cv_plot = None
        self.objective_curves = []

    def _draw_header(self, summary: ModelSummary, score: ScoreFactors) -> None:
        shown, member = self.shown, self.member
        facts = [f"<b>{score.title}</b> (positive score → {score.positive})"]
        facts.append(f"classes: {', '.join(summary.classes)}")
        if shown.axis_is_frequency:
            columns = (
                f"{shown.axis.size} frequency bands (centres "
                f"{shown.axis[0]:g}–{shown.axis[-1]:g} Hz)"
            )
        else:
            columns = f"{shown.axis.size} {shown.axis_label}"
        facts.append(f"{len(shown.ch_names)} channels × {columns}")
        # the whole model's file, path and rate; the drawn member's rank and penalties
        info = {**summary.info, **{k: shown.info[k] for k in _FACTOR_KEYS if k in shown.info}}
        for key in ("file", "features", "sfreq", *_FACTOR_KEYS):
            if key == "sfreq" and key in info:
                facts.append(f"sfreq = {float(info[key]):g} Hz")
            elif key in info:
                facts.append(f"{key} = {format_value(info[key])}")
            if key == "features" and summary.candidates:
                n_members = sum(bool(c.get("member")) for c in summary.candidates)
                facts[-1] += (
                    f" (features='auto': the weighted mean of the {n_members} of lowest CV "
                    f"log-loss of {len(summary.candidates)} candidates, ★ and + on the right)"
                    if n_members > 1
                    else f" (features='auto': lowest CV log-loss of {len(summary.candidates)} "
                    "candidates, table on the right)"
                )
            if key == "features" and shown.spatial:
                facts.append(f"spatial stage = {shown.spatial}")
        facts.append(f"intercept b = {score.intercept:.3g}")
        if shown.regions:
            facts.append(("this member's " if member else "") + shown.regions)
        # The verdict first: it is what the person at the controls must read.
        verdict = "".join(
            f"<b>{html.escape(line)}</b><br>" if i == 0 else f"{html.escape(line.strip())}<br>"
            for i, line in enumerate(summary.verdict)
        )
        if member is not None:
            verdict += (
                f"<b>drawn: {html.escape(member.title)} in the decision, rank "
                f"{member.rank_used} used of {member.rank}</b> (click a member's row to draw "
                "it)<br>"
            )
        self.header.setText(verdict + " · ".join(facts))

    def _draw_component(self, k: int, score: ScoreFactors, *, show_scalp: bool) -> None:
        summary = self.shown
        u = score.spatial[:, k]
        v = score.temporal[:, k]
        n_nonzero = int(np.count_nonzero(u))
        row = 2 * k
        title = (
            f"Component {k + 1}: spatial factor u{k + 1} "
            f"({n_nonzero} of {u.size} weights non-zero)"
        )
        if n_nonzero == 0 or not np.any(v):
            title += ":<br>switched off by the penalty (W gets nothing from it)"
        if len(summary.groups) > 1 and show_scalp:  # one short title per map, legend once
            title += "<br>scalp maps: nose up, ○ = zero weight"  # two lines: the plots fit
        scalps, col = self._scalp_maps(k, u, row, show_scalp=show_scalp)
        temporal_plot, curve = self._temporal_plot(k, v)
        self.components_widget.addItem(temporal_plot, row=row, col=col)
        bar_plot, bars, zero_marks = self._spatial_bars(title, u)
        self.components_widget.addItem(bar_plot, row=row + 1, col=0, colspan=col + 1)
        self.components.append(
            ComponentView(scalps, bars, zero_marks, bar_plot, curve, temporal_plot)
        )

    def _scalp_maps(self, k: int, u: np.ndarray, row: int, *, show_scalp: bool):
        """Add one scalp map of ``u`` per channel group and a colour bar on ``row``."""
        summary = self.shown
        limit = float(np.abs(u).max()) or 1.0
        several = len(summary.groups) > 1
        scalps = []
        col = 0
        for name, rows in summary.groups:
            rows = np.asarray(rows, int)
            if show_scalp:
                scalp = ScalpMapPlot(
                    title=f"u{k + 1}, {name}"
                    if several
                    else f"u{k + 1} on the scalp (nose up; ○ = zero)"
                )
                scalp.set_data(
                    self._xy[rows], u[rows], [summary.scalp_names[i] for i in rows], limit=limit
                )
            else:
                scalp = ScalpMapPlot(title="no electrode positions for these channel names")
            scalp.setMinimumWidth(170)
            scalp.setMaximumWidth(280)
            self.components_widget.addItem(scalp, row=row, col=col)
            scalps.append(scalp)
            col += 1
        if show_scalp:
            bar = pg.ColorBarItem(
                values=(-limit, limit), colorMap=diverging_cmap(), interactive=False, width=12
            )
            bar.axis.enableAutoSIPrefix(False)
            self.components_widget.addItem(bar, row=row, col=col)
        return scalps, col + 1

    def _temporal_plot(self, k: int, v: np.ndarray):
        """Return the plot of the temporal factor ``v`` and its curve."""
        summary = self.shown
        kind = "spectral" if summary.axis_is_frequency else "temporal"
        kind = "second spatial" if summary.axis_is_channel else kind
        plot = pg.PlotItem(title=f"{kind} factor v{k + 1} (carries the scale)")
        plot.setMinimumWidth(260)
        plot.setLabel("bottom", summary.axis_label)
        plot.setLabel("left", "weight")
        for side in ("left", "bottom"):
            plot.getAxis(side).enableAutoSIPrefix(False)
        plot.showGrid(x=True, y=True, alpha=0.3)
        if summary.axis_is_channel:  # the columns are the channels of the rows: name them
            bottom = plot.getAxis("bottom")
            bottom.setStyle(tickFont=_small_font())
            bottom.setTicks([channel_ticks(summary.ch_names, 16), []])
        plot.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(ZERO)))
        if summary.axis_is_time and summary.axis[0] <= 0 <= summary.axis[-1]:
            cue = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen("k", style=QtCore.Qt.DashLine))
            cue.label = pg.InfLineLabel(cue, "cue", position=0.95)
            plot.addItem(cue)
        curve = plot.plot(
            summary.axis,
            v,
            pen=pg.mkPen("#222222", width=2),
            symbol="o" if v.size <= 60 else None,
            symbolSize=5,
            symbolBrush="#222222",
            fillLevel=0,
            fillBrush=pg.mkBrush(120, 120, 120, 50),
        )
        return plot, curve

    def _spatial_bars(self, title: str, u: np.ndarray):
        """Return the bar plot of the spatial factor ``u``, its bars and zero marks."""
        names = self.shown.ch_names
        axis = RotatedLabelAxis()
        plot = pg.PlotItem(title=title, axisItems={"bottom": axis})
        x = np.arange(u.size, dtype=float)
        brushes = [pg.mkBrush(POSITIVE if val > 0 else NEGATIVE) for val in u]
        bars = pg.BarGraphItem(x=x, height=u, width=0.8, brushes=brushes, pen=None)
        plot.addItem(bars)
        zero_marks = pg.ScatterPlotItem(
            x=x[u == 0], y=np.zeros(int((u == 0).sum())), size=4, pen=pg.mkPen(ZERO), brush=None
        )
        plot.addItem(zero_marks)
        plot.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(ZERO)))
        plot.setLabel("left", "weight")
        plot.getAxis("left").enableAutoSIPrefix(False)
        axis.set_labels(
            list(zip(x, names, strict=True)),
            highlight=[names[i] for i in np.argsort(-np.abs(u)) if u[i] != 0],
        )
        plot.setXRange(-0.6, u.size - 0.4, padding=0)
        plot.setMouseEnabled(y=False)
        return plot, bars, zero_marks

    def _draw_weights(self, score: ScoreFactors) -> None:
        summary = self.shown
        weights = score.weights
        plot = self.overview_widget.addPlot(title=f"W = U Vᵀ (channels × {summary.column_kind})")
        image = pg.ImageItem(axisOrder="row-major")
        image.setImage(weights)
        axis = summary.axis
        step = float(axis[1] - axis[0]) if axis.size > 1 else 1.0
        image.setRect(QtCore.QRectF(axis[0] - step / 2, -0.5, step * axis.size, weights.shape[0]))
        plot.addItem(image)
        plot.invertY(True)
        plot.setDefaultPadding(0.0)
        plot.setLabel("bottom", summary.axis_label)
        plot.getAxis("bottom").enableAutoSIPrefix(False)
        left = plot.getAxis("left")
        left.setStyle(tickFont=_small_font(), textFillLimits=[(0, 0.95)])
        left.setTicks([channel_ticks(summary.ch_names, 24), []])
        left.setLabel("channel")
        limit = symmetric_limit(weights)
        self.colorbar = pg.ColorBarItem(
            values=(-limit, limit), colorMap=diverging_cmap(), interactive=False, width=14
        )
        self.colorbar.axis.enableAutoSIPrefix(False)
        self.colorbar.setImageItem(image, insert_in=plot)
        self.weights_image = image

    def _draw_cv(self, summary: ModelSummary) -> None:
        self.cv_plot, self.cv_image = draw_cv(self.overview_widget, summary)

    def _draw_objective(self, summary: ModelSummary) -> None:
        plot = self.overview_widget.addPlot(title="objective F per solver iteration")
        plot.setLabel("bottom", "iteration")
        plot.setLabel("left", "F (log scale)")
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.showGrid(x=True, y=True, alpha=0.3)
        self.objective_curves = []
        if not summary.objectives:
            plot.setTitle("objective trace: none stored in the model")
            return
        values = np.concatenate([o for o in summary.objectives if o.size] or [np.ones(1)])
        # a log axis only helps (and only gets ticks) when F spans more than a decade
        log = bool(np.all(values > 0) and values.max() > 10 * values.min())
        plot.setLogMode(y=log)
        if log:  # label the decades only: minor labels pile up on a short axis
            plot.getAxis("left").setTicks(_decade_ticks(values))
        else:
            plot.setLabel("left", "F")
        if len(summary.objectives) > 1:
            plot.addLegend(offset=(-10, 10))
        for k, obj in enumerate(summary.objectives):
            name = summary.scores[k].title if k < len(summary.scores) else f"score {k}"
            curve = plot.plot(
                np.arange(obj.size), obj, pen=pg.mkPen(class_color(k), width=2), name=name
            )
            self.objective_curves.append(curve)


def _decade_ticks(values: np.ndarray) -> list[list[tuple[float, str]]]:
    """Return log-axis ticks: labelled decades, unlabelled 2..9 multiples between them."""
    lo = int(np.floor(np.log10(values.min())))
    hi = int(np.ceil(np.log10(values.max())))
    major = [(float(e), f"{10.0**e:g}") for e in range(lo, hi + 1)]
    minor = [(float(np.log10(m * 10.0**e)), "") for e in range(lo, hi) for m in range(2, 10)]
    return [major, minor]


def _small_font() -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSize(7)
    return font

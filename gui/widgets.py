"""Small Qt pieces shared by the tabs: colour map, channel labels, auto and member tables."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtGui, QtWidgets

#: Colours of classes, in class order (colour-blind safe, Okabe-Ito).
CLASS_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")


def class_color(index: int) -> str:
    """Return the colour of the class at ``index``."""
    return CLASS_COLORS[index % len(CLASS_COLORS)]


def diverging_cmap() -> pg.ColorMap:
    """Blue-white-red diverging map, white exactly at the middle (zero).

    Returns
    -------
    cmap : pyqtgraph.ColorMap
        Map over [0, 1]; callers map value v with limit m to (v + m) / (2 m).
    """
    colors = [
        (5, 48, 97),
        (33, 102, 172),
        (67, 147, 195),
        (146, 197, 222),
        (209, 229, 240),
        (255, 255, 255),
        (253, 219, 199),
        (244, 165, 130),
        (214, 96, 77),
        (178, 24, 43),
        (103, 0, 31),
    ]
    return pg.ColorMap(np.linspace(0, 1, len(colors)), colors)


def symmetric_limit(values: np.ndarray) -> float:
    """Largest absolute finite value (1 when all are zero), for a colour scale centred on 0."""
    values = np.asarray(values, float)
    finite = values[np.isfinite(values)]
    limit = float(np.abs(finite).max()) if finite.size else 0.0
    return limit if limit > 0 else 1.0


def map_diverging(values: np.ndarray, limit: float, cmap: pg.ColorMap | None = None) -> np.ndarray:
    """Map values to RGBA bytes with zero at white; NaN becomes transparent.

    Parameters
    ----------
    values : ndarray, shape (...)
        Values to colour.
    limit : float
        The value drawn at full red (and -limit at full blue).
    cmap : pyqtgraph.ColorMap | None
        Map over [0, 1]; :func:`diverging_cmap` by default.

    Returns
    -------
    rgba : ndarray of uint8, shape (..., 4)
        Colours.
    """
    cmap = cmap or diverging_cmap()
    values = np.asarray(values, float)
    nan = ~np.isfinite(values)
    scaled = np.clip((np.where(nan, 0.0, values) + limit) / (2 * limit), 0, 1)
    rgba = cmap.map(scaled.ravel(), mode="byte").reshape(*values.shape, -1)
    if rgba.shape[-1] == 3:
        rgba = np.concatenate([rgba, np.full((*values.shape, 1), 255, np.uint8)], axis=-1)
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    rgba[nan] = 0
    return rgba


class RotatedLabelAxis(pg.AxisItem):
    """Bottom axis that writes one vertical label per category (e.g. channel names).

    Labels that would overlap are thinned to every k-th one; :meth:`set_labels` sets them.
    """

    def __init__(self, *args, font_size: int = 7, **kwargs):
        super().__init__("bottom", *args, **kwargs)
        self._labels: list[tuple[float, str]] = []
        self._font = QtGui.QFont()
        self._font.setPointSize(font_size)
        self._highlight: set[str] = set()
        self._highlight_order: list[str] = []

    def set_labels(self, labels, highlight=()) -> None:
        """Set the category labels.

        Parameters
        ----------
        labels : list of (float, str)
            Position on the axis and text.
        highlight : list of str
            Labels drawn in bold (e.g. channels with non-zero weight), most important
            first: where they would overlap, the earlier one is written.
        """
        self._labels = [(float(v), str(t)) for v, t in labels]
        self._highlight_order = [str(t) for t in highlight]
        self._highlight = set(self._highlight_order)
        metrics = QtGui.QFontMetrics(self._font)
        longest = max((metrics.horizontalAdvance(t) for _, t in self._labels), default=0)
        self.setHeight(longest + 12)
        self.setTicks([[(v, "") for v, _ in self._labels], []])
        self.picture = None
        self.update()

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        """Draw the axis and ticks, then the labels rotated by 90 degrees."""
        super().drawPicture(p, axisSpec, tickSpecs, [])
        if not self._labels:
            return
        bounds = self.mapRectFromParent(self.geometry())
        lo, hi = self.range
        if hi == lo:
            return
        scale = bounds.width() / (hi - lo)
        metrics = QtGui.QFontMetrics(self._font)
        step = max(1, math.ceil((metrics.height() + 1) / max(abs(scale), 1e-9)))
        bold = QtGui.QFont(self._font)
        bold.setBold(True)
        p.setPen(self.textPen())
        p.setClipRect(self.boundingRect().toAlignedRect())
        length = bounds.height() - 8
        # bold labels (e.g. non-zero channels) always show; others thin out around them
        spacing = metrics.height() + 1
        xs = [(value - lo) * scale for value, _ in self._labels]
        where = {t: x for x, (_, t) in zip(xs, self._labels, strict=True)}
        placed: list[float] = []
        shown = []
        for text in self._highlight_order:
            x = where.get(text)
            if x is not None and all(abs(x - q) >= spacing for q in placed):
                placed.append(x)
                shown.append((x, text))
        for i, (x, (_, text)) in enumerate(zip(xs, self._labels, strict=True)):
            if x < -1 or x > bounds.width() + 1 or text in self._highlight or i % step:
                continue
            if all(abs(x - q) >= spacing for q in placed):
                shown.append((x, text))
        for x, text in shown:
            p.setFont(bold if text in self._highlight else self._font)
            p.save()
            p.translate(x, 6)
            p.rotate(-90)
            rect = QtCore.QRectF(-length, -metrics.height() / 2, length, metrics.height())
            p.drawText(rect, int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter), text)
            p.restore()


def notify(parent, title: str, text: str) -> QtWidgets.QMessageBox:
    """Show a message without blocking: no nested event loop, so timers keep running.

    Parameters
    ----------
    parent : QWidget
        Parent window.
    title, text : str
        The message.

    Returns
    -------
    box : QMessageBox
        The (non-modal) box, already shown.
    """
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Warning, title, text, parent=parent)
    box.setModal(False)
    box.setAttribute(QtCore.Qt.WA_DeleteOnClose)
    box.show()
    return box


def channel_ticks(ch_names, max_labels: int = 40) -> list[tuple[float, str]]:
    """Every k-th channel as a (position, name) tick, at most ``max_labels`` of them."""
    step = max(1, math.ceil(len(ch_names) / max_labels))
    return [(float(i), name) for i, name in enumerate(ch_names) if i % step == 0]


class AutoCandidatesTable(QtWidgets.QTableWidget):
    """The ``features="auto"`` candidates: CV log-loss, accuracy, AUC, rank; ★ = chosen.

    Hidden while it has no rows; its height fits the rows, so it never scrolls.

    Parameters
    ----------
    parent : QWidget | None
        Parent widget.
    """

    COLUMNS = ("candidate (★ chosen, + averaged)", "CV log-loss", "accuracy", "AUC", "rank")

    def __init__(self, parent=None):
        super().__init__(0, len(self.COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.setToolTip(
            "features='auto': every feature path × spatial stage, cross-validated; "
            "the lowest out-of-fold log-loss (★) and, for an ensemble, the next ones (+) were "
            "refitted on all epochs; the model averages their scores"
        )
        self.verticalHeader().hide()
        self.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QtWidgets.QAbstractItemView.NoSelection)
        self.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.horizontalHeader().setSectionResizeMode(0, QtWidgets.QHeaderView.Stretch)
        self.hide()

    def set_candidates(self, candidates) -> None:
        """Show the candidates in the given order (chosen one bold), or hide when empty.

        Parameters
        ----------
        candidates : list of dict
            Rows of :func:`sblr_rt.calibration.report.auto_candidates`.
        """
        self.setRowCount(len(candidates))
        bold = QtGui.QFont()
        bold.setBold(True)
        for i, c in enumerate(candidates):
            cells = [
                ("★ " if c["chosen"] else "+ " if c.get("member") else "") + c["name"],
                *(_format_score(c.get(k)) for k in ("log_loss", "accuracy", "auc")),
                str(c.get("rank", "")),
            ]
            for j, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                side = QtCore.Qt.AlignLeft if j == 0 else QtCore.Qt.AlignRight
                item.setTextAlignment(int(side | QtCore.Qt.AlignVCenter))
                if c["chosen"] or c.get("member"):
                    item.setFont(bold)
                    item.setBackground(QtGui.QColor("#fde9a9" if c["chosen"] else "#fdf4d7"))
                self.setItem(i, j, item)
        self.resizeColumnsToContents()
        self.resizeRowsToContents()
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(i) for i in range(len(candidates)))
        self.setFixedHeight(height)
        self.setVisible(bool(candidates))


class MemberTable(QtWidgets.QTableWidget):
    """An ensemble's members, one row each; a click on a row picks the member to draw.

    Columns: the member's index, feature path and spatial stage, weight in the decision,
    rank used of fitted, and whether it is a prior across people. Hidden while it has no
    rows (a single model); its height fits the rows, so it never scrolls.

    Parameters
    ----------
    parent : QWidget | None
        Parent widget.
    """

    COLUMNS = ("member", "feature path / spatial stage", "weight", "rank used", "prior")

    #: What each column holds, as its header's tooltip.
    TIPS = (
        "The member's index (as sblr-rt inspect counts)",
        "The member's feature path and spatial stage",
        "The member's weight in the decision: the ensemble's score is the members' scores "
        "weighted so, the weights summing to 1",
        "Components used (not switched off by the penalties) of those fitted",
        "Whether the member is a prior across people (trained on other people's runs)",
    )

    #: The row (member index) the user picked.
    member_chosen = QtCore.pyqtSignal(int)

    def __init__(self, parent=None):
        super().__init__(0, len(self.COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(self.COLUMNS))
        for j, tip in enumerate(self.TIPS):
            self.horizontalHeaderItem(j).setToolTip(tip)
        self.setToolTip(
            "The ensemble's members: its score is their scores weighted by these weights. "
            "Click a row to draw that member's spatial (U) and temporal (V) factors."
        )
        self.verticalHeader().hide()
        self.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.setSizeAdjustPolicy(QtWidgets.QAbstractScrollArea.AdjustToContents)
        self.itemSelectionChanged.connect(self._on_selection)
        self.hide()

    def set_members(self, members, current: int = 0) -> None:
        """Show the members (``current`` selected), or hide when there are none.

        Parameters
        ----------
        members : list of MemberSummary
            :attr:`sblr_rt.gui.summary.ModelSummary.members`.
        current : int
            The member drawn.
        """
        self.blockSignals(True)
        self.clearSelection()
        self.setRowCount(len(members))
        bold = QtGui.QFont()
        bold.setBold(True)  # while sizing the columns: the member drawn is in bold
        for i, m in enumerate(members):
            cells = [str(m.index), m.name, f"{m.weight:.2f}", f"{m.rank_used} of {m.rank}",
                     "yes" if m.prior else "no"]  # fmt: skip
            for j, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                side = QtCore.Qt.AlignLeft if j == 1 else QtCore.Qt.AlignCenter
                item.setTextAlignment(int(side | QtCore.Qt.AlignVCenter))
                item.setFont(bold)
                self.setItem(i, j, item)
        self.resizeColumnsToContents()
        self.resizeRowsToContents()
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(i) for i in range(len(members)))
        self.setFixedHeight(height)
        width = 2 * self.frameWidth() + sum(self.columnWidth(j) for j in range(len(self.COLUMNS)))
        self.setFixedWidth(width)
        self.setVisible(bool(members))
        self.blockSignals(False)
        if members:
            self.set_current(current)

    def set_current(self, row: int) -> None:
        """Select and mark (bold, shaded) the member drawn, without emitting a signal."""
        self.blockSignals(True)
        self.selectRow(row)
        font = QtGui.QFont()
        for i in range(self.rowCount()):
            font.setBold(i == row)
            for j in range(self.columnCount()):
                item = self.item(i, j)
                item.setFont(font)
                item.setBackground(QtGui.QColor("#fde9a9" if i == row else "white"))
        self.blockSignals(False)

    def _on_selection(self) -> None:
        rows = {index.row() for index in self.selectedIndexes()}
        if len(rows) == 1:
            self.member_chosen.emit(rows.pop())


def _format_score(value) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "–"

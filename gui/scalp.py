"""An interpolated scalp map as a pyqtgraph plot item."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtGui
from sblr_rt.gui.widgets import map_diverging, symmetric_limit

from sblr_rt.montage import interpolate_scalp


class ScalpMapPlot(pg.PlotItem):
    """Top view of the head (nose up) coloured by one value per channel.

    Blue is negative, red positive, white exactly zero, with the colour scale symmetric
    about zero. Electrodes with a non-zero value are black dots, electrodes whose value is
    exactly zero (removed by the l1 penalty) are hollow grey circles, and the largest
    ``n_named`` absolute values are labelled.

    Parameters
    ----------
    n_named : int
        How many channels with the largest absolute values get their name written.
    resolution : int
        Pixels per side of the interpolated image.
    **kwargs
        Passed to :class:`pyqtgraph.PlotItem`.
    """

    def __init__(self, *, n_named: int = 3, resolution: int = 96, **kwargs):
        super().__init__(**kwargs)
        self.n_named = n_named
        self.resolution = resolution
        self.setAspectLocked(True)
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.setMouseEnabled(False, False)
        self.hideButtons()
        # A narrow cell must not let the head spill over its neighbours.
        self.vb.setFlag(self.vb.GraphicsItemFlag.ItemClipsChildrenToShape)
        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.addItem(self.image_item)
        outline = pg.mkPen("#333333", width=1.5)
        self._head = pg.PlotCurveItem(pen=outline)
        self._nose = pg.PlotCurveItem(pen=outline)
        self._ears = [pg.PlotCurveItem(pen=outline), pg.PlotCurveItem(pen=outline)]
        for item in (self._head, self._nose, *self._ears):
            self.addItem(item)
        self.electrodes_on = pg.ScatterPlotItem(
            size=5, pen=None, brush=pg.mkBrush("k"), name="non-zero weight"
        )
        self.electrodes_zero = pg.ScatterPlotItem(
            size=5, pen=pg.mkPen("#888888", width=1), brush=None, name="zero weight"
        )
        self.addItem(self.electrodes_on)
        self.addItem(self.electrodes_zero)
        self._labels: list[pg.TextItem] = []
        self.values = np.zeros(0)
        self.limit = 1.0

    def set_data(
        self, xy: np.ndarray, values: np.ndarray, ch_names, *, limit: float | None = None
    ) -> None:
        """Draw a map.

        Parameters
        ----------
        xy : ndarray, shape (n_channels, 2)
            2-D positions (:func:`sblr_rt.montage.scalp_layout`); NaN rows are not drawn.
        values : ndarray, shape (n_channels,)
            One value per channel.
        ch_names : list of str
            Channel names, for the labels.
        limit : float | None
            Colour scale limit (symmetric); the largest absolute value by default.
        """
        values = np.asarray(values, float)
        self.values = values
        self.limit = symmetric_limit(values) if limit is None else float(limit)
        image, extent = interpolate_scalp(xy, values, resolution=self.resolution)
        self.image_item.setImage(map_diverging(image, self.limit))
        self.image_item.setRect(QtCore.QRectF(-extent, -extent, 2 * extent, 2 * extent))
        finite = np.isfinite(xy).all(1)
        head = max(1.0, float(np.abs(xy[finite]).max()) * 1.02) if finite.any() else 1.0
        angles = np.linspace(0, 2 * np.pi, 181)
        self._head.setData(head * np.cos(angles), head * np.sin(angles))
        self._nose.setData(
            head * np.array([-0.09, 0.0, 0.09]), head * np.array([0.995, 1.1, 0.995])
        )
        ear = np.linspace(-0.35, 0.35, 30)
        for side, item in zip((-1, 1), self._ears, strict=True):
            item.setData(side * head * (1.0 + 0.05 * np.cos(ear * np.pi / 0.7)), head * ear * 0.5)
        zero = values == 0
        self.electrodes_on.setData(pos=xy[finite & ~zero])
        self.electrodes_zero.setData(pos=xy[finite & zero])
        for label in self._labels:
            self.removeItem(label)
        self._labels = []
        order = [i for i in np.argsort(-np.abs(values)) if finite[i] and values[i] != 0]
        font = QtGui.QFont()
        font.setPointSize(7)
        for i in order[: self.n_named]:
            text = pg.TextItem(str(ch_names[i]), color="k", anchor=(0.5, 1.1))
            text.setFont(font)
            text.setPos(*xy[i])
            self.addItem(text)
            self._labels.append(text)
        self.setRange(xRange=(-extent, extent), yRange=(-extent, extent * 1.12), padding=0)

"""The Model tab's cross-validation plot: the CV grid as a heatmap, or one line of scores.

:func:`draw_cv` picks the view from the stored CV results: with two or more varying
hyper-parameters, a heatmap over the two most telling ones (the l1 penalties when both
vary), the rest fixed to the chosen values; with fewer, CV accuracy per candidate as a
line. The chosen candidate is starred. :class:`sblr_rt.gui.model_view.ModelTab` calls it.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore
from sblr_rt.gui.summary import RESULT_KEYS, ModelSummary

_SHORT = {"mu1": "μ1", "nu1": "ν1", "mu2": "μ2", "nu2": "ν2", "mu1_fraction": "μ1/μ1,max"}
_SHORT["nu1_fraction"] = "ν1/ν1,max"
_PARAM_NAMES = {
    "mu1": "μ1 (l1 on U)",
    "nu1": "ν1 (l1 on V)",
    "mu2": "μ2 (l2 on U)",
    "nu2": "ν2 (l2 on V)",
    "mu1_fraction": "μ1 / μ1,max (l1 on U)",
    "nu1_fraction": "ν1 / ν1,max (l1 on V)",
}


def format_value(value) -> str:
    """Write a hyper-parameter value: floats with 3 significant digits, the rest as str."""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def draw_cv(widget: pg.GraphicsLayoutWidget, summary: ModelSummary):
    """Add the cross-validation plot of ``summary`` to ``widget``.

    Parameters
    ----------
    widget : pyqtgraph.GraphicsLayoutWidget
        Where the plot (and a row of notes below it) is added.
    summary : ModelSummary
        Its ``cv_results``, ``chosen`` and ``ranks`` are drawn.

    Returns
    -------
    plot : pyqtgraph.PlotItem
        The plot added.
    image : pyqtgraph.ImageItem | None
        The heatmap's image; None for the line view or when no CV is stored.
    """
    rows = summary.cv_results
    if not rows:
        plot = widget.addPlot(title="cross-validation: none stored in the model")
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        return plot, None
    keys = [k for k in rows[0] if k not in RESULT_KEYS]
    varying = [k for k in keys if len({format_value(r.get(k)) for r in rows}) > 1]
    best = max(rows, key=lambda r: r["score"])
    chosen = summary.chosen or {k: best.get(k) for k in keys}
    # the two most finely sampled parameters span the heatmap; the rest are fixed to
    # the chosen values
    varying.sort(key=lambda k: -len({format_value(r.get(k)) for r in rows}))
    # the l1 penalties (sparsity of U and of V) make the most telling pair
    for pair in (("mu1_fraction", "nu1_fraction"), ("mu1", "nu1")):
        if set(pair) <= set(varying):
            varying = [*pair, *(k for k in varying if k not in pair)]
            break
    notes = _rank_note(summary)
    if len(varying) >= 2:
        a, b = varying[:2]
        fixed = {k: chosen.get(k) for k in varying[2:]}
        sub = [r for r in rows if all(_same(r.get(k), v) for k, v in fixed.items())] or rows
        return _cv_heatmap(widget, sub, (a, b), chosen, fixed, notes)
    return _cv_line(widget, rows, varying[0] if varying else None, chosen, notes), None


def _cv_heatmap(widget, rows, keys, chosen, fixed, rank_note):
    a, b = keys
    a_vals = sorted({r[a] for r in rows})
    b_vals = sorted({r[b] for r in rows})
    grid = np.full((len(a_vals), len(b_vals)), np.nan)
    for r in rows:
        i, j = a_vals.index(r[a]), b_vals.index(r[b])
        grid[i, j] = np.nanmax([grid[i, j], r["score"]])
    extra = ", ".join(f"{_SHORT.get(k, k)} = {format_value(v)}" for k, v in fixed.items())
    notes = ([f"at {extra}"] if extra else []) + rank_note
    plot = _plot_with_notes(widget, "CV accuracy (★ = chosen)", notes)
    image = pg.ImageItem(axisOrder="row-major")
    image.setImage(grid)
    image.setRect(QtCore.QRectF(-0.5, -0.5, len(b_vals), len(a_vals)))
    finite = grid[np.isfinite(grid)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    image.setLevels((lo, hi if hi > lo else lo + 1e-9))
    image.setColorMap(pg.colormap.get("viridis"))
    plot.addItem(image)
    plot.setDefaultPadding(0.0)
    plot.getAxis("bottom").setTicks([[(j, format_value(v)) for j, v in enumerate(b_vals)]])
    plot.getAxis("left").setTicks([[(i, format_value(v)) for i, v in enumerate(a_vals)]])
    plot.setLabel("bottom", _PARAM_NAMES.get(b, b))
    plot.setLabel("left", _PARAM_NAMES.get(a, a))
    for i in range(len(a_vals)):
        for j in range(len(b_vals)):
            if np.isfinite(grid[i, j]):
                mark = (
                    " ★"
                    if _same(a_vals[i], chosen.get(a)) and _same(b_vals[j], chosen.get(b))
                    else ""
                )
                color = "k" if grid[i, j] > (lo + hi) / 2 else "w"
                text = pg.TextItem(f"{grid[i, j]:.2f}{mark}", color=color, anchor=(0.5, 0.5))
                text.setPos(j, i)
                plot.addItem(text)
    return plot, image


def _rank_note(summary: ModelSummary) -> list[str]:
    ranks = summary.ranks
    chosen = summary.chosen.get("rank")
    if not ranks:
        return [f"at rank {chosen}"] if chosen is not None else []
    tried = ", ".join(f"r={r['rank']}: {r['mean']:.2f}" for r in ranks)
    return [f"rank {chosen} chosen first, with zero penalties ({tried})"]


def _plot_with_notes(widget, title: str, notes: list[str]) -> pg.PlotItem:
    # a title of one line keeps its height; the notes get their own label row below
    plot = widget.addPlot(title=title)
    if notes:
        widget.nextRow()
        widget.addLabel("<br>".join(notes), size="8pt")
    return plot


def _cv_line(widget, rows, key, chosen, rank_note) -> pg.PlotItem:
    plot = _plot_with_notes(widget, "CV accuracy per candidate (★ = chosen)", rank_note)
    if key is None:
        xs = np.arange(len(rows), dtype=float)
        plot.setLabel("bottom", "candidate")
    else:
        values = sorted({r[key] for r in rows})
        xs = np.array([values.index(r[key]) for r in rows], float)
        plot.getAxis("bottom").setTicks([[(i, format_value(v)) for i, v in enumerate(values)]])
        plot.setLabel("bottom", _PARAM_NAMES.get(key, key))
    scores = np.array([r["score"] for r in rows])
    order = np.argsort(xs)
    plot.plot(xs[order], scores[order], pen=pg.mkPen("#222222", width=2), symbol="o")
    if key is not None and key in chosen:
        best = [i for i, r in enumerate(rows) if _same(r[key], chosen[key])]
        plot.plot(
            xs[best],
            scores[best],
            pen=None,
            symbol="star",
            symbolSize=16,
            symbolBrush="#E69F00",
        )
    plot.setLabel("left", "CV accuracy")
    return plot


def _same(a, b) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-15)
    return a == b

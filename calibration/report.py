"""The calibration report: a text summary and a PNG figure.

The figure (matplotlib, drawn without pyplot) shows the CV accuracy over the grid (best over the
l2 penalties for each (mu1, nu1) fraction, and per rank), or for ``features="auto"`` the
table of every candidate's cross-validated scores; each spatial factor as a scalp map
(montage positions from :func:`sblr_rt.montage.layout_2d`, drawn with
:func:`mne.viz.plot_topomap`; for the bandpower path one map per band) and each
temporal factor over its axis: seconds from the cue (waveform, band-power bins) or
frequency in Hz (spectral path, whose columns are frequency bands); on the covariance path,
whose columns are channels, a second scalp map. An ensemble gets one block of such rows per
member, titled with the member's feature path, spatial stage and weight in the decision.
"""

from __future__ import annotations

import functools
import logging
import math
from pathlib import Path

import numpy as np

from sblr_rt.bci_model import EnsembleModel, SingleModel
from sblr_rt.bci_model.search_record import candidate_name, cv_text, search_record
from sblr_rt.bci_model.verdict import describe_rank, model_verdict, rank_used, spread_text
from sblr_rt.preprocessing.spatial import spatial_label

logger = logging.getLogger("sblr_rt.calibration")

__all__ = [
    "auto_candidates",
    "column_axis",
    "plot_report",
    "report_figure",
    "report_text",
    "write_report",
]


#: How each spatial stage is named in reports and in the dashboard.
def column_axis(pre) -> tuple[np.ndarray, str]:
    """Return the coordinates and title of the model's columns (the rows of V).

    Parameters
    ----------
    pre : Preprocessor
        The model's preprocessing.

    Returns
    -------
    axis : ndarray, shape (n_times,)
        Centre frequency in Hz for the spectral path, seconds from the cue otherwise.
    label : str
        ``"frequency (Hz)"`` or ``"time from cue (s)"``.
    """
    if pre.features == "spectral":
        return np.asarray(pre.freqs, float), "frequency (Hz)"
    return np.asarray(pre.times, float), "time from cue (s)"


def auto_candidates(model) -> list[dict]:
    """Return the ``features="auto"`` candidates, best (lowest CV log-loss) first.

    Parameters
    ----------
    model : BCIModel | estimator
        A calibrated model (anything without ``metadata`` has no candidates).

    Returns
    -------
    rows : list of dict
        Per candidate ``name`` (``"spectral/csd"``; ``"waveform/car/10t"`` on a coarse
        grid of 10 points), ``features``, ``spatial``, ``n_times``, ``rank``,
        ``l2``, ``l1_fraction``, ``log_loss``, ``accuracy``, ``auc``, ``chosen`` (bool)
        and ``member`` (bool: one of the candidates the model averages); empty when the
        model did not come from ``features="auto"``.
    """
    record = search_record(getattr(model, "metadata", None) or {})
    candidates = record.get("candidates") or []
    if len(candidates) < 2:
        return []
    members = record.get("ensemble") or [record.get("chosen")]
    rows = []
    for c in candidates:
        name = candidate_name(c)
        rows.append(
            {**{k: v for k, v in c.items() if k != "points"}, "name": name,
             "chosen": name == record.get("chosen"), "member": name in members}
        )  # fmt: skip
    return sorted(rows, key=lambda r: _nan_last(r.get("log_loss")))


def _nan_last(value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.inf
    return math.inf if math.isnan(value) else value


def report_text(model, *, top: int = 10) -> str:
    """Multi-line text report of a calibrated model.

    Parameters
    ----------
    model : BCIModel
        Calibrated model (with ``metadata["selection"]``).
    top : int
        Number of best grid points listed.

    Returns
    -------
    text : str
        The report.
    """
    # summary() already names the spatial stage, every member, the training accuracy and
    # the auto search's candidates
    lines = [model.summary()]
    md = model.metadata
    sel = search_record(md)
    tol = max(m.estimator.tol for m in model.members)
    if sel:
        lines += [
            "",
            _chosen(model, sel),
            f"search time: {sel.get('seconds', {}).get('total', float('nan')):.1f} s"
            + _jobs(sel.get("n_jobs"))
            + (
                f"; CV fits stopped at q^k <= {sel['search_tol']:g}, the final fit at {tol:g}"
                if "search_tol" in sel
                else ""
            ),
        ]
        start = sel.get("final_start") or {}
        if start.get("start") == "cold":
            lines.append(
                f"final fit: started cold (objective {start['cold_objective']:.4g}); the "
                f"warm-started path had stopped in a worse minimum ({start['path_objective']:.4g})"
            )
    grid = _grid_points(sel)
    if grid:
        lines += [
            "",
            f"best {top} grid points (mean +/- std CV accuracy):",
            "  mu1/max  mu2      nu1/max  nu2      accuracy        collapsed folds",
        ]
        order = sorted(grid, key=lambda g: -g["accuracy"])[:top]
        for g in order:
            lines.append(
                f"  {g['mu1_fraction']:<8.3g} {g['mu2']:<8.3g} {g['nu1_fraction']:<8.3g} "
                f"{g['nu2']:<8.3g} {g['accuracy']:.3f}{spread_text(g['accuracy_std']):11}  "
                f"{g['collapsed']}"
            )
    record = model.record
    ep = record.epochs
    if ep is not None:
        lines += [
            "",
            f"epochs: {ep.found} cues found, {ep.used} used {ep.per_class}, "
            f"rejected {sum(ep.rejected.values())}: {ep.rejected}",
        ]
        if ep.markers:  # the recordings' markers behind each class
            shown = ", ".join(f"{m!r} -> {c}" for m, c in ep.markers.items())
            lines.append(f"markers: {shown}")
    if record.sources:
        lines.append(f"sources: {', '.join(record.sources)}")
    return "\n".join(lines) + "\n"


def _jobs(n_jobs) -> str:
    """Return `` (1 job)``, `` (2 parallel jobs)``, or nothing where the file does not say."""
    if not isinstance(n_jobs, int) or n_jobs < 1:  # files before 0.1 kept joblib's setting
        return ""
    return " (1 job)" if n_jobs == 1 else f" ({n_jobs} parallel jobs)"


@functools.singledispatch
def _chosen(model, sel: dict) -> str:
    """Return the line naming what the search chose, in the words of the model's form."""
    raise TypeError(f"no report for a {type(model).__name__}")


@_chosen.register
def _(model: SingleModel, sel: dict) -> str:
    est = model.estimator
    return (
        f"chosen: rank {describe_rank(est)}, mu1 {est.mu1:.4g}"
        f"{_fraction(sel, 'mu1', 0)}, mu2 {est.mu2:.4g}, nu1 {est.nu1:.4g}"
        f"{_fraction(sel, 'nu1', 1)}, nu2 {est.nu2:.4g}"
    )


@_chosen.register
def _(model: EnsembleModel, sel: dict) -> str:
    return f"chosen: the {len(model.members)} members above, each at its own penalties"


def _fraction(sel: dict, name: str, index: int) -> str:
    """Return `` (f x max)`` for an l1 penalty when the grid search recorded both."""
    best = sel.get("best") or {}
    maxima = sel.get("l1_penalty_max")
    if f"{name}_fraction" not in best or not maxima:
        return ""
    return f" ({best[f'{name}_fraction']:g} x {maxima[index]:.4g})"


def _grid_points(sel) -> list[dict]:
    """Return the penalty grid of a one-candidate search (the fixed paths), else nothing."""
    candidates = sel.get("candidates") or []
    if len(candidates) != 1:
        return []
    return [p for p in candidates[0].get("points") or [] if p.get("accuracy") is not None]


def _grid_matrix(grid):
    f1 = sorted({g["mu1_fraction"] for g in grid})
    f2 = sorted({g["nu1_fraction"] for g in grid})
    M = np.full((len(f1), len(f2)), np.nan)
    for g in grid:
        i, j = f1.index(g["mu1_fraction"]), f2.index(g["nu1_fraction"])
        M[i, j] = np.nanmax([M[i, j], g["accuracy"]])
    return f1, f2, M


def _topomap(ax, values, names, title):
    from sblr_rt.montage import layout_2d

    found, xy = layout_2d(names)
    ax.set_title(title, fontsize=8)
    if len(found) < 3:
        ax.bar(np.arange(len(values)), values)
        ax.set_xticks(np.arange(len(names)), names, rotation=90, fontsize=5)
        return
    idx = [names.index(n) for n in found]
    vals = np.asarray(values)[idx]
    try:
        import mne

        lim = float(np.max(np.abs(vals))) or 1.0
        mne.viz.plot_topomap(
            vals, xy, axes=ax, show=False, sphere=0.5, cmap="RdBu_r", vlim=(-lim, lim),
            contours=0,
        )  # fmt: skip
    except Exception as exc:  # a drawing problem must not lose the calibration
        logger.warning("scalp map failed (%s); drawing a scatter instead", exc)
        ax.scatter(xy[:, 0], xy[:, 1], c=vals, cmap="RdBu_r", s=20)
        ax.set_aspect("equal")
        ax.axis("off")


def _n_maps(pre) -> int:
    """Return the scalp maps per component: one per band on the band-power path."""
    return len(pre.freq_bands) if pre.features == "bandpower" else 1


@functools.singledispatch
def _blocks(model) -> list[tuple[str, object]]:
    """Return (title, single model) per block of factors: each member of an ensemble."""
    raise TypeError(f"no report for a {type(model).__name__}")


@_blocks.register
def _(model: SingleModel) -> list[tuple[str, object]]:
    return [("", model)]


@_blocks.register
def _(model: EnsembleModel) -> list[tuple[str, object]]:
    n = len(model.members)
    blocks = []
    for k, (m, w) in enumerate(zip(model.members, model.member_weights, strict=True)):
        est = m.estimator
        prior = " (a prior across people)" if m.pool is not None else ""
        blocks.append(
            (
                f"member {k} of {n}: {m.name}{prior}, weight {w:.2f} in the decision, "
                f"rank {rank_used(est)} used of {est.rank}",
                m,
            )
        )
    return blocks


def _drawn(est) -> tuple[np.ndarray, np.ndarray, list[str] | None, list[tuple[int, int]]]:
    """Return U, V (n_outputs, ., rank), titles (None: per class), components switched on."""
    U, V = est.canonical_factors()
    if U.ndim == 2:
        U, V, titles = U[None], V[None], [""]
    else:
        titles = None
    # Components switched off by the penalty (U or V column all zeros) draw nothing.
    drawn = [
        (p, k) for p in range(U.shape[0]) for k in range(U.shape[2])
        if np.any(U[p, :, k]) and np.any(V[p, :, k])
    ]  # fmt: skip
    return U, V, titles, drawn


def report_figure(model):
    """Draw the report figure without pyplot.

    The first row shows the selection; then one row per component switched on, for a
    single model, or one block of such rows per member of an ensemble, titled with the
    member's feature path, spatial stage and weight in the decision. The figure is a bare
    :class:`matplotlib.figure.Figure`: pyplot's backend and its open figures are left as
    they were.

    Parameters
    ----------
    model : BCIModel
        Calibrated model.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure, not yet drawn to any file.
    """
    from matplotlib.figure import Figure

    blocks = []
    for title, m in _blocks(model):
        U, V, titles, drawn = _drawn(m.estimator)
        titles = titles or [f"{c}: " for c in m.classes]
        blocks.append((title, m, U, V, titles, drawn))
    n_cols = max(3, *(_n_maps(m.preprocessor) + 1 for _, m, *_ in blocks))
    heights = [1.0] + [max(1, len(b[-1])) + (0.15 if b[0] else 0.0) for b in blocks]
    fig = Figure(figsize=(3.2 * n_cols, 2.6 * sum(heights)), layout="constrained")
    top, *subfigs = np.atleast_1d(fig.subfigures(len(heights), 1, height_ratios=heights))
    _plot_selection(top, top.add_gridspec(1, n_cols), model)
    for sub, (title, m, U, V, titles, drawn) in zip(subfigs, blocks, strict=True):
        if title:
            sub.suptitle(title, fontsize=10, fontweight="bold", ha="left", x=0.01)
            sub.set_facecolor("#f4f4f4")
        gs = sub.add_gridspec(max(1, len(drawn)), n_cols)
        for row, (p, k) in enumerate(drawn):
            _plot_component(sub, gs, row, m.preprocessor, U[p, :, k], V[p, :, k], titles[p], k)
        if not drawn:
            ax = sub.add_subplot(gs[0, :])
            ax.axis("off")
            ax.text(0.5, 0.5, "every component switched off by the penalties: no weight",
                    ha="center", va="center")  # fmt: skip
    return fig


def plot_report(model, path) -> Path:
    """Write the report figure (:func:`report_figure`) as PNG.

    Parameters
    ----------
    model : BCIModel
        Calibrated model.
    path : str | Path
        PNG destination.

    Returns
    -------
    path : Path
        The written file.
    """
    path = Path(path)
    report_figure(model).savefig(path, dpi=90)
    return path


def _plot_selection(fig, gs, model) -> None:
    """First row: the penalty grid and the rank step (or the auto table), the choice."""
    sel = search_record(model.metadata)
    n_cols = gs.ncols
    if auto_candidates(model):
        _plot_auto_table(fig.add_subplot(gs[0, : n_cols - 1]), model)
    grid = _grid_points(sel)
    if grid:
        ax = fig.add_subplot(gs[0, 0])
        f1, f2, M = _grid_matrix(grid)
        im = ax.imshow(M, origin="lower", cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(f2)), [f"{v:g}" for v in f2], fontsize=7)
        ax.set_yticks(range(len(f1)), [f"{v:g}" for v in f1], fontsize=7)
        ax.set_xlabel("nu1 / nu1_max")
        ax.set_ylabel("mu1 / mu1_max")
        ax.set_title("CV accuracy (best over l2)", fontsize=9)
        fig.colorbar(im, ax=ax)
    if sel.get("ranks"):
        ax = fig.add_subplot(gs[0, 1])
        r = sel["ranks"]
        ax.errorbar(
            [x["rank"] for x in r],
            [x["accuracy"] for x in r],
            [x["accuracy_std"] for x in r],
            marker="o",
        )
        ax.set_xticks([x["rank"] for x in r])
        ax.set_xlabel("rank (no penalty)")
        ax.set_ylabel("CV accuracy")
        ax.set_title(f"rank step ({cv_text(sel)} CV)", fontsize=9)
    ax = fig.add_subplot(gs[0, n_cols - 1])
    ax.axis("off")
    verdict = model_verdict(model)
    cv = (
        f"\nCV acc {verdict.accuracy:.3f} (chance {verdict.chance_best:.3f})\n{verdict.word}"
        if verdict.accuracy is not None
        else ""
    )
    ax.text(0, 1, f"classes {model.classes}\n{_what(model)}{cv}", va="top", fontsize=9)


@functools.singledispatch
def _what(model) -> str:
    """Return the figure's few lines on what the model is, in the words of its form."""
    raise TypeError(f"no report for a {type(model).__name__}")


@_what.register
def _(model: SingleModel) -> str:
    pre, est = model.preprocessor, model.estimator
    return (
        f"features {pre.features}\nspatial {spatial_label(pre.spatial)}\n"
        f"rank {describe_rank(est)}\nmu1 {est.mu1:.3g} mu2 {est.mu2:.3g}\n"
        f"nu1 {est.nu1:.3g} nu2 {est.nu2:.3g}"
    )


@_what.register
def _(model: EnsembleModel) -> str:
    return (
        f"ensemble of {len(model.members)} members:\nthe weighted mean of their scores;\n"
        "each member's factors below"
    )


def _plot_auto_table(ax, model) -> None:
    """Draw the auto search: one table row per candidate, the chosen one bold and shaded."""
    rows = auto_candidates(model)
    sel = search_record(model.metadata)
    ax.axis("off")
    ax.set_title(
        f"{sel.get('search', '?')}: {cv_text(sel)}, chosen by {sel.get('criterion', '?')} "
        "(* = chosen, + = averaged)",
        fontsize=9,
    )
    cells = [
        [
            ("* " if r["chosen"] else "+ " if r["member"] else "") + r["name"],
            _cell(r.get("log_loss")),
            _cell(r.get("accuracy")),
            _cell(r.get("auc")),
            f"{r['rank']}",
            f"{r.get('repeats', '?')}",
        ]
        for r in rows
    ]
    table = ax.table(
        cellText=cells,
        colLabels=["candidate", "CV log-loss", "accuracy", "AUC", "rank", "CV repeats"],
        colWidths=[0.3, 0.16, 0.14, 0.12, 0.08, 0.14],
        loc="upper center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.scale(1.0, 1.1)
    for i, r in enumerate(rows, start=1):
        if r["chosen"] or r["member"]:
            for j in range(len(cells[0])):
                table[i, j].set_facecolor("#fde9a9" if r["chosen"] else "#fdf4d7")
                table[i, j].get_text().set_fontweight("bold")


def _cell(value) -> str:
    """Return a score as a table cell (``n/a`` where the criterion did not compute it)."""
    return "n/a" if value is None else f"{value:.3f}"


def _plot_component(fig, gs, row: int, pre, u, v, title: str, k: int) -> None:
    """One row: scalp maps of ``u`` (one per band) and ``v`` over time or frequency.

    On the covariance path the columns are channels too: ``v`` is a second scalp map.
    """
    n_maps = _n_maps(pre)
    n_picks = len(pre.pick_names)
    if pre.features == "covariance":
        for col, (values, name) in enumerate(((u, "spatial"), (v, "second spatial (V)"))):
            _topomap(fig.add_subplot(gs[row, col]), values, list(pre.pick_names),
                     f"{title}{name} {k + 1}")  # fmt: skip
        return
    for b in range(n_maps):
        ax = fig.add_subplot(gs[row, b])
        band = (
            f" {pre.freq_bands[b][0]:g}-{pre.freq_bands[b][1]:g} Hz" if pre.features == "bandpower"
            else ""
        )  # fmt: skip
        _topomap(ax, u[b * n_picks : (b + 1) * n_picks], list(pre.pick_names),
                 f"{title}spatial {k + 1}{band}")  # fmt: skip
    ax = fig.add_subplot(gs[row, n_maps:])
    axis, label = column_axis(pre)
    ax.plot(axis, v, marker="." if len(axis) < 30 else None)
    ax.axhline(0, color="0.7", lw=0.5)
    ax.set_xlabel(label)
    kind = "spectral" if pre.features == "spectral" else "temporal"
    ax.set_title(f"{title}{kind} {k + 1}", fontsize=8)


def write_report(model, prefix) -> tuple[Path, Path]:
    """Write ``<prefix>.txt`` and ``<prefix>.png``.

    Parameters
    ----------
    model : BCIModel
        Calibrated model.
    prefix : str | Path
        Path without extension.

    Returns
    -------
    text_path, png_path : Path
        The written files.
    """
    prefix = Path(prefix)
    text_path = prefix.with_name(prefix.name + ".txt")
    text_path.write_text(report_text(model))
    png_path = plot_report(model, prefix.with_name(prefix.name + ".png"))
    return text_path, png_path

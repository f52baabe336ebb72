"""A model in words: the summary ``sblr-rt inspect`` prints, for both forms of model.

The summary reads the model concept only (:attr:`members`, :attr:`member_weights`, the
metadata), so one model and an ensemble are described by the same lines: the verdict, then
one block per member (a single model is its own only member), then the calibration's
selection and epochs.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.bci_model.regions import weight_regions
from sblr_rt.bci_model.search_record import candidate_name, cv_text, search_record
from sblr_rt.bci_model.verdict import (
    describe_rank,
    model_verdict,
    prior_info,
    rank_used,
    spread_text,
)
from sblr_rt.preprocessing.spatial import spatial_label

__all__ = ["member_lines", "summary_lines"]


def summary_lines(model) -> list[str]:
    """Return the lines of :meth:`BCIModel.summary <sblr_rt.bci_model.BCIModel.summary>`."""
    md = model.metadata
    about = [md.get("software_version"), md.get("format_version")]
    about = ", ".join(str(a) if i == 0 else f"format {a}" for i, a in enumerate(about) if a)
    lines = [
        "sblr-rt model"
        + (f" ({about})" if about else "")
        + (f", created {md['created']}" if md.get("created") else ""),
        f"classes: {model.classes}",
        *model_verdict(model).lines(),
    ]
    if model.is_ensemble:
        lines.append(
            f"ensemble: the weighted mean score of {len(model.members)} members, each "
            "described below"
        )
        lines += member_lines(model)
    if model.run_centring is not None:
        lines.append(
            "run centring: on (each new run's mean re-estimated from its trials, warm-up "
            f"{model.run_centring.warmup:g} trial(s))"
        )
    calibration = model.probability
    if calibration is not None:
        pairs = ", ".join(
            f"{e:g} s {a:.2f}"
            for e, a in zip(calibration.ends, calibration.sharpness, strict=True)
            if e in (calibration.ends[0], calibration.ends[-1]) or e % 1 == 0
        )
        lines.append(
            "probabilities: calibrated on trials the model did not train on; sharpness "
            f"(the factor on the scores) by window end after the cue: {pairs}"
            + (f" ({calibration.how})" if calibration.how else "")
        )
    lines.append(
        f"window: [{model.tmin:g}, {model.tmax:g}) s at {model.sfreq:g} Hz = "
        f"{model.n_window} samples (+{model.n_pad} filter warm-up); "
        f"{len(model.ch_names)} raw channels"
    )
    if model.train_accuracy is not None:
        lines.append(f"training accuracy (optimistic): {model.train_accuracy:.3f}")
    for k, (m, w) in enumerate(zip(model.members, model.member_weights, strict=True)):
        if model.is_ensemble:
            lines.append(f"member {k}: {m.name}, weight {w:.2f}")
        lines += [("  " if model.is_ensemble else "") + s for s in _single_lines(m, model)]
    if not model.is_ensemble:
        lines.append(weight_regions(model).describe())  # the warning is in the verdict
    else:
        lines.append("whole model " + weight_regions(model).describe())
    lines += _selection_lines(md)
    ep = md.get("epochs")
    if ep:
        lines.append(f"epochs: {ep.get('per_class')} used; rejected {ep.get('rejected')}")
    return lines


def member_lines(model) -> list[str]:
    """Return one line per member of an ensemble (none for a single model).

    Each names the member's feature path and spatial stage, its weight in the decision,
    its rank (used of fitted), whether it is a prior, its weight by scalp region and its
    leading channels, and a flag when its eye or visual share is above the limit of
    :mod:`sblr_rt.bci_model.regions`.
    """
    if not model.is_ensemble:
        return []
    lines = []
    for k, (m, w) in enumerate(zip(model.members, model.member_weights, strict=True)):
        est = m.estimator
        regions = weight_regions(m, n_leading=3)
        lead = ", ".join(c for c, _ in regions.leading)
        share = ", ".join(f"{r} {regions.shares[r]:.0%}" for r in ("sensorimotor", "eye"))
        what = f"{m.features}/{spatial_label(m.preprocessor.spatial)}"
        prior = " (a prior across people)" if m.pool is not None else ""
        flag = "; WARNING: eye or visual channels above the limit" if regions.warning else ""
        lines.append(
            f"  member {k}: {what}{prior}, weight {w:.2f}, rank {rank_used(est)} of "
            f"{est.rank}; {share}; leading {lead}{flag}"
        )
    return lines


def _single_lines(m, model) -> list[str]:
    """Return the description of one single model: preprocessing, estimator, its figures."""
    pre, est = m.preprocessor, m.estimator
    lines = []
    if m.pool is not None:
        lines.append(m.pool.describe())
        lines += _prior_lines(prior_info(model) if m is model else m.metadata.get("prior") or {})
    lines += [
        f"features: {pre.features}; model input {_input_shape(pre)}; scaling {pre.scaling}; "
        f"channels: {len(pre.pick_names)} used of {len(pre.ch_names)} raw",
        f"spatial stage: {spatial_label(pre.spatial)}",
    ]
    if pre.features == "waveform":
        band = f"band-pass {pre.l_freq}-{pre.h_freq} Hz" if pre.filters else "no band-pass"
        lines.append(f"preprocessing: {band}; baseline {pre.baseline}")
    elif pre.features == "covariance":
        (lo, hi), centring = pre.freq_bands[0], m.run_centring is not None
        lines.append(
            f"preprocessing: band-pass {lo:g}-{hi:g} Hz, the spatial covariance of the window "
            "(OAS shrinkage), its matrix logarithm: the log-Euclidean tangent space at "
            + (
                "the calibration runs' mean, each run re-centred on its own"
                if centring
                else "the identity"
            )
        )
    else:
        what = "over the window" if pre.features == "spectral" else "in time bins"
        bands = ", ".join(f"{lo:g}-{hi:g}" for lo, hi in pre.freq_bands)
        lines.append(
            f"preprocessing: bands {bands} Hz, log mean power {what}, relative to the "
            f"mean over {pre.log_power_reference or 'nothing'}"
        )
    lines.append(
        f"estimator: rank {describe_rank(est)}, mu1 {est.mu1:.4g}, mu2 {est.mu2:.4g}, "
        f"nu1 {est.nu1:.4g}, nu2 {est.nu2:.4g}, multi_class {est.multi_class}"
    )
    U = np.asarray(est.spatial_)
    V = np.asarray(est.temporal_)
    lines.append(
        f"sparsity: U {np.count_nonzero(U)}/{U.size} non-zero, "
        f"V {np.count_nonzero(V)}/{V.size} non-zero"
    )
    figures = []
    if m is not model and m.train_accuracy is not None:
        figures.append(f"training accuracy {m.train_accuracy:.3f}")
    final = _final_objective(m.objective)
    if final is not None:
        figures.append(f"final objective {final:.4g}")
    if figures:
        lines.append("fit: " + ", ".join(figures))
    if m is not model:
        lines.append(weight_regions(m).describe())
    return lines


def _input_shape(pre) -> str:
    """Return the model input's shape in the words of its feature path."""
    if pre.features == "covariance":
        return f"{pre.n_rows} x {pre.n_columns} channel covariance (both factors spatial)"
    if pre.features == "spectral":
        return f"{pre.n_rows} channels x {pre.n_columns} bands"
    if pre.features == "bandpower":
        return f"{pre.n_rows} channel-band rows x {pre.n_columns} time bins"
    return f"{pre.n_rows} channels x {pre.n_columns} times"


def _final_objective(trace) -> float | None:
    """Return the last value of an objective trace (the sum over classes for one-versus-rest)."""
    if not trace:
        return None
    traces = trace if isinstance(trace[0], list | tuple) else [trace]
    if not all(len(t) for t in traces):
        return None
    return float(sum(t[-1] for t in traces))


def _selection_lines(metadata) -> list[str]:
    """Return the calibration's search: the CV, the rank step and the candidates' table."""
    sel = search_record(metadata)
    if not sel:
        return []
    best = sel.get("best", {})
    n_points = sum(len(c.get("points") or ()) for c in sel.get("candidates", []))
    lines = [
        f"selection: {cv_text(sel)} CV, search {sel.get('search', '?')}, chosen by "
        f"{sel.get('criterion', '?')}"
        + (f", {n_points} grid points" if n_points else "")
        + "; best CV accuracy "
        f"{_number(best.get('accuracy'))}{spread_text(best.get('accuracy_std'))}"
    ]
    for r in sel.get("ranks", []):
        spread = spread_text(r.get("accuracy_std"))
        lines.append(f"  rank {r['rank']}: CV accuracy {_number(r.get('accuracy'))}{spread}")
    return lines + _candidate_lines(sel)


def _prior_lines(info: dict) -> list[str]:
    """Return a prior's people and when it was built (its figures are in the verdict)."""
    lines = []
    people = info.get("people") or []
    if people:
        built = f"; built {info['created']}" if info.get("created") else ""
        lines.append(f"prior across {len(people)} people: {', '.join(people)}{built}")
    return lines


def _candidate_lines(sel: dict) -> list[str]:
    """Return the candidates' table: each one's cross-validated scores (more than one)."""
    candidates = sel.get("candidates") or []
    if len(candidates) < 2:
        return []
    ensemble = sel.get("ensemble") or []
    lines = [f"candidates, chosen by {sel.get('criterion', '?')}: {sel.get('chosen', '?')}"]
    dropped, level = sel.get("dropped") or [], sel.get("chance_level")
    if len(ensemble) > 1:
        n = f"{len(ensemble)} of the {len(ensemble) + len(dropped)}" if dropped else len(ensemble)
        lines.append(f"  the model averages the {n} candidates of lowest loss (* and +)")
    if dropped:
        accs = [c.get("accuracy") for c in candidates if candidate_name(c) == sel.get("chosen")]
        alone = bool(accs) and accs[0] is not None and level is not None and accs[0] <= level
        lines.append(
            f"  left out (CV accuracy not above the chance level {_number(level)}): "
            + ", ".join(f"{d['name']} ({_number(d.get('accuracy'))})" for d in dropped)
            + ("; none beats it, so the first is kept alone" if alone else "")
        )
    repeats = {c.get("repeats") for c in candidates} - {None}
    if len(repeats) > 1:  # the leaders after one repetition ran the others
        lines.append(
            f"  the {sum(c.get('repeats') == max(repeats) for c in candidates)} leaders after "
            f"the first CV repetition ran all {max(repeats)}; the members are chosen among them"
        )
    lines.append("  features/spatial      log-loss  accuracy   AUC   rank  repeats")
    for c in candidates:
        name = candidate_name(c)
        mark = "*" if name == sel.get("chosen") else "+" if name in ensemble else " "
        lines.append(
            f" {mark}{name:21} {_number(c.get('log_loss')):>8} "
            f"{_number(c.get('accuracy')):>9} {_number(c.get('auc')):>5} "
            f"{c.get('rank', '?'):>5} {c.get('repeats', '?'):>8}"
        )
    return lines


def _number(value) -> str:
    """Format a score from the model file (``null`` where it was not finite)."""
    return "n/a" if value is None else f"{value:.3f}"

"""The calibration's search report as a model file stores it, in the one current format.

Calibration writes one report format for every search plan
(:func:`sblr_rt.calibration.search.search_report`). Files written before that format had
two: the paper grid's (``"grid"`` a list of points with ``mean``/``std``, ``"ranks"`` with
``mean``/``std``) and ``auto``'s (its table under ``"auto"``). :func:`search_record` reads
any of them as the current format, so that every reader (the summary, the verdict, the
report, the dashboard) reads one.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["candidate_name", "cv_text", "name_candidate", "search_record"]


def search_record(metadata) -> dict:
    """Return a model's search report in the current format (empty when there is none).

    Parameters
    ----------
    metadata : Mapping | None
        A model's ``metadata``.

    Returns
    -------
    record : dict
        ``search``, ``criterion``, ``cv``, ``repeats``, ``ranks`` (rows with
        ``accuracy``/``accuracy_std``), ``candidates`` (each with its best point's
        ``rank``, ``accuracy``, ``accuracy_std``, ``log_loss``, ``auc`` where known and its
        ``points``), ``chosen``, ``ensemble``, ``dropped``, ``chance_level``, ``rank``,
        ``best``, ``params`` and what else the file holds (``seconds``, ``n_jobs``,
        ``search_tol``, ``final_start``, ``l1_penalty_max``).

    Examples
    --------
    >>> old = {"selection": {"search": "fast", "rank": 1, "cv": 5,
    ...        "best": {"mu1_fraction": 0.1, "mu2": 0.0, "nu1_fraction": 0.1, "nu2": 0.0,
    ...                 "mean": 0.8, "std": 0.1}}}
    >>> record = search_record(old)
    >>> record["best"]["accuracy"], record["candidates"][0]["accuracy"]
    (0.8, 0.8)
    """
    sel = (metadata or {}).get("selection") if isinstance(metadata, Mapping) else None
    if not isinstance(sel, Mapping) or not sel:
        return {}
    if "candidates" in sel and "criterion" in sel:
        return dict(sel)
    config = metadata.get("config") if isinstance(metadata.get("config"), Mapping) else {}
    return _upgrade(sel, config)


def candidate_name(candidate: Mapping) -> str:
    """Return a candidate's name (files before names were stored: ``features/spatial``).

    Examples
    --------
    >>> candidate_name({"features": "spectral", "spatial": None})
    'spectral/none'
    """
    return candidate.get("name") or name_candidate(
        candidate.get("features"), candidate.get("spatial")
    )


def name_candidate(features, spatial, grid: int | None = None) -> str:
    """Return the name reports give a way of computing features: ``features/spatial``.

    The one naming rule of calibration's candidates, the models they become and the search
    report: no spatial stage (None, or not a stage's name) is ``none``; a waveform
    candidate on a coarse grid of ``grid`` points ends ``/<grid>t``.

    Examples
    --------
    >>> name_candidate("waveform", "car", 10), name_candidate("spectral", None)
    ('waveform/car/10t', 'spectral/none')
    """
    stage = spatial if isinstance(spatial, str) and spatial else "none"
    return f"{features}/{stage}" + ("" if grid is None else f"/{grid}t")


def _row(old: Mapping, rank) -> dict:
    """Return an old grid or best row in the current row format."""
    row = {k: v for k, v in old.items() if k not in ("mean", "std", "group", "step", "folds")}
    row.setdefault("rank", rank)
    if "mean" in old:
        row.setdefault("accuracy", old["mean"])
        row.setdefault("accuracy_std", old.get("std"))
    if "l1_fraction" in old:  # auto's candidates: mu2 = nu2 = l2, one l1 fraction
        row.setdefault("mu1_fraction", old["l1_fraction"])
        row.setdefault("nu1_fraction", old["l1_fraction"])
        row.setdefault("mu2", old.get("l2"))
        row.setdefault("nu2", old.get("l2"))
    row.setdefault("log_loss", None)
    return row


def _upgrade(sel: Mapping, config: Mapping) -> dict:
    """Return a report written before the one format in the current format."""
    rank = sel.get("rank")
    best = _row(sel.get("best") or {}, rank)
    auto = sel.get("auto") if isinstance(sel.get("auto"), Mapping) else None
    out = {k: v for k, v in sel.items() if k not in ("auto", "grid", "best", "ranks")}
    out["ranks"] = [_row(r, r.get("rank")) for r in sel.get("ranks") or []]
    out["best"] = best
    if auto:
        candidates = [_row(c, c.get("rank")) | {"name": candidate_name(c), "points": []}
                      for c in auto.get("candidates") or []]  # fmt: skip
        chosen = auto.get("chosen")
        out |= {
            "criterion": auto.get("criterion", "log-loss"),
            "cv_text": auto.get("cv"),
            "candidates": candidates,
            "chosen": chosen,
            "ensemble": list(auto.get("ensemble") or [chosen]),
            "dropped": list(auto.get("dropped") or []),
            "chance_level": auto.get("chance_level"),
            "grid": auto.get("grid"),
        }
        return out
    grid = [_row(g, rank) for g in sel.get("grid") or [] if isinstance(g, Mapping)]
    name = candidate_name(_features_of(config))
    out |= {
        "criterion": "accuracy",
        "candidates": [{"name": name, **best, "points": grid}],
        "chosen": name,
        "ensemble": [name],
        "dropped": [],
        "chance_level": None,
        "grid": {k: sel[k] for k in ("l1_fractions", "l2_values") if k in sel},
    }
    return out


def _features_of(config: Mapping) -> dict:
    """Return ``{"features", "spatial"}`` of a stored configuration (flat or by concern)."""
    pre = config.get("preprocessing") if isinstance(config.get("preprocessing"), Mapping) else {}
    spatial = pre.get("spatial", config.get("spatial"))
    return {
        "features": pre.get("features", config.get("features", "waveform")),
        "spatial": None if spatial in (None, "none") else spatial,
    }


def cv_text(record: Mapping) -> str:
    """Return a record's CV in words: ``"5-fold x 3 repeats"``, ``"5-fold"``, ``"loo"``.

    Examples
    --------
    >>> cv_text({"cv": 5, "repeats": 3}), cv_text({"cv": "loo", "repeats": 1})
    ('5-fold x 3 repeats', 'loo')
    """
    if record.get("cv_text"):  # files before the one report format
        return str(record["cv_text"])
    cv, repeats = record.get("cv", "?"), record.get("repeats") or 1
    if cv in ("loo", "?"):
        return str(cv)
    return f"{cv}-fold" + (f" x {repeats} repeats" if repeats > 1 else "")

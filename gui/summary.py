"""What the Model tab draws, computed from a model without Qt.

:func:`summarize_model` reads a :class:`sblr_rt.bci_model.BCIModel` (or a bare fitted
:class:`sblr_rt.model.SparseBilinearLogisticRegression`) and returns a
:class:`ModelSummary`: per score (one for two classes, one per class for one-versus-rest)
the spatial factor U and the temporal factor V, the axis of V (seconds from the cue, or
frequency in Hz on the spectral path), the channel names, the spatial stage, the
cross-validation grid (or the ``features="auto"`` candidates) and the objective trace.
The scalp geometry (:func:`sblr_rt.montage.scalp_layout`,
:func:`sblr_rt.montage.interpolate_scalp`) lives with the montage.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sblr_rt.calibration.report import auto_candidates

from sblr_rt.bci_model import EnsembleModel
from sblr_rt.bci_model.regions import weight_regions
from sblr_rt.bci_model.search_record import search_record
from sblr_rt.bci_model.verdict import model_verdict, rank_used
from sblr_rt.preprocessing.spatial import spatial_label

logger = logging.getLogger("sblr_rt.gui")


@dataclass(frozen=True)
class ScoreFactors:
    """The bilinear factors of one score.

    Parameters
    ----------
    title : str
        What the score separates, e.g. ``"right vs left"`` (positive vs negative class).
    spatial : ndarray, shape (n_channels, rank)
        Spatial factor U, columns scaled as drawn (unit norm when canonical).
    temporal : ndarray, shape (n_times, rank)
        Temporal factor V.
    intercept : float
        The bias b.
    positive : str
        The class a positive score votes for.
    negative : str
        The class a negative score votes for ("rest" in one-versus-rest).
    """

    title: str
    spatial: np.ndarray
    temporal: np.ndarray
    intercept: float
    positive: str
    negative: str

    @property
    def rank(self) -> int:
        """Number of components r."""
        return int(self.spatial.shape[1])

    @property
    def weights(self) -> np.ndarray:
        """W = U V^T, shape (n_channels, n_times)."""
        return self.spatial @ self.temporal.T


@dataclass(frozen=True)
class ModelSummary:
    """Everything the Model tab shows, as plain arrays.

    Parameters
    ----------
    ch_names : list of str
        Channel names in the order of the rows of U.
    axis : ndarray, shape (n_times,)
        Coordinates of the rows of V: seconds relative to the cue, bin indices, or the
        centre frequency of each band in Hz (spectral path).
    axis_label : str
        Axis title, e.g. ``"time after cue (s)"``, ``"band-power bin"`` or
        ``"frequency (Hz)"``.
    scores : list of ScoreFactors
        One entry for two classes, one per class for one-versus-rest.
    classes : list of str
        Class labels.
    cv_results : list of dict
        One dict per candidate: hyper-parameters and ``"score"`` (mean CV accuracy),
        optionally ``"std"``.
    chosen : dict
        The chosen hyper-parameters.
    objectives : list of ndarray
        Objective value per iteration F^0..F^k, one per score.
    info : dict
        Free text facts shown in the header (file, sfreq, features, ...).
    groups : list of (str, list of int)
        Rows of U drawn on one scalp map each: ``[("", all rows)]`` for the waveform
        path, one entry per frequency band (``("8-13 Hz", rows)``) for band power.
    scalp_names : list of str
        Electrode name of each row of U (``ch_names`` without the band suffix).
    ranks : list of dict
        CV accuracy per rank tried (``rank``, ``mean``, ``std``).
    features : str
        The feature path (``"waveform"``, ``"bandpower"``, ``"spectral"``; ``""`` unknown).
    spatial : str
        The spatial stage, readable (``"none"``, ``"common average"``, ...; ``""`` unknown).
    candidates : list of dict
        ``features="auto"``: every candidate's CV scores, best first
        (:func:`sblr_rt.calibration.report.auto_candidates`); empty otherwise.
    regions : str
        Where the model's weight lies (:func:`sblr_rt.bci_model.regions.weight_regions`); empty for
        a bare estimator.
    verdict : list of str
        The model's verdict (:meth:`sblr_rt.bci_model.verdict.Verdict.lines`): the word, the chance
        level, the rank used, the warnings and what to try next; empty for a bare estimator.
    members : list of MemberSummary
        An ensemble's members in the model's order, each with its own factors; empty for a
        single model (whose factors are the fields above).
    """

    ch_names: list[str]
    axis: np.ndarray
    axis_label: str
    scores: list[ScoreFactors]
    classes: list[str]
    cv_results: list[dict] = field(default_factory=list)
    chosen: dict = field(default_factory=dict)
    objectives: list[np.ndarray] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    groups: list[tuple[str, list[int]]] = field(default_factory=list)
    scalp_names: list[str] = field(default_factory=list)
    ranks: list[dict] = field(default_factory=list)
    features: str = ""
    spatial: str = ""
    candidates: list[dict] = field(default_factory=list)
    regions: str = ""
    verdict: list[str] = field(default_factory=list)
    members: list[MemberSummary] = field(default_factory=list)

    def __post_init__(self):
        if not self.groups:
            object.__setattr__(self, "groups", [("", list(range(len(self.ch_names))))])
        if not self.scalp_names:
            names = [c.split(" ")[0] for c in self.ch_names]
            object.__setattr__(self, "scalp_names", names)

    @property
    def axis_is_time(self) -> bool:
        """Whether :attr:`axis` is in seconds."""
        return "(s)" in self.axis_label

    @property
    def axis_is_frequency(self) -> bool:
        """Whether :attr:`axis` is in Hz (the spectral path: V is a spectrum)."""
        return "(Hz)" in self.axis_label

    @property
    def axis_is_channel(self) -> bool:
        """Whether :attr:`axis` counts channels (covariance path: V is a second spatial factor)."""
        return self.axis_label.startswith("channel")

    @property
    def column_kind(self) -> str:
        """What the columns of W are: ``"frequency"``, ``"channels"`` or ``"time"``."""
        if self.axis_is_frequency:
            return "frequency"
        return "channels" if self.axis_is_channel else "time"


@dataclass(frozen=True)
class MemberSummary:
    """One member of an ensemble: what the member table lists and the factors it draws.

    Parameters
    ----------
    index : int
        Position in the ensemble (``member 0`` is the first, as ``sblr-rt inspect`` counts).
    name : str
        Feature path and spatial stage, e.g. ``"bandpower/surface Laplacian (CSD)"``.
    weight : float
        Its weight in the decision (the members' weights sum to 1).
    rank_used : int
        Components that contribute to its score (:func:`sblr_rt.bci_model.verdict.rank_used`).
    rank : int
        Components fitted.
    prior : bool
        Whether it is a prior across people (a model with a pool of people's epochs).
    summary : ModelSummary
        Its own factors, axis, channels and objective trace, as for a single model.
    """

    index: int
    name: str
    weight: float
    rank_used: int
    rank: int
    prior: bool
    summary: ModelSummary

    @property
    def title(self) -> str:
        """``"member 1: bandpower/common average, weight 0.25"``, as figures label it."""
        prior = " (a prior across people)" if self.prior else ""
        return f"member {self.index}: {self.name}{prior}, weight {self.weight:.2f}"


@functools.singledispatch
def summarize_members(model) -> list[MemberSummary]:
    """Return the members of an ensemble, each summarised; empty for a single model.

    Parameters
    ----------
    model : BCIModel | SparseBilinearLogisticRegression
        Any model :func:`summarize_model` reads.

    Returns
    -------
    members : list of MemberSummary
        In the ensemble's order, with the weights of ``model.member_weights``.
    """
    return []


@summarize_members.register
def _(model: EnsembleModel) -> list[MemberSummary]:
    members, weights = model.members, model.member_weights
    return [
        MemberSummary(
            index=k,
            name=m.name,
            weight=float(w),
            rank_used=rank_used(m.estimator),
            rank=int(m.estimator.rank),
            prior=getattr(m, "pool", None) is not None,
            summary=summarize_model(m),
        )
        for k, (m, w) in enumerate(zip(members, weights, strict=True))
    ]


def _first_attr(obj, names, default=None):
    if obj is None:
        return default
    meta = getattr(obj, "metadata", None)
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        value = getattr(obj, name, None)
        if value is not None:
            return value
        if isinstance(meta, Mapping) and meta.get(name) is not None:
            return meta[name]
    return default


def _estimator_of(model):
    if hasattr(model, "spatial_"):
        return model
    est = _first_attr(model, ("estimator", "estimator_", "model", "clf"))
    if est is None or not hasattr(est, "spatial_"):
        raise TypeError(
            "'model' must be a BCIModel or a fitted SparseBilinearLogisticRegression "
            f"(with 'spatial_'); got {type(model).__name__}"
        )
    return est


def _factors(est) -> tuple[np.ndarray, np.ndarray]:
    canon = getattr(est, "canonical_factors", None)
    if callable(canon):
        try:
            spatial, temporal = canon()[:2]
            return np.asarray(spatial, float), np.asarray(temporal, float)
        except Exception:
            logger.warning("canonical_factors() failed; drawing the raw factors", exc_info=True)
    return np.asarray(est.spatial_, float), np.asarray(est.temporal_, float)


@functools.singledispatch
def summarize_model(
    model,
    *,
    ch_names: Sequence[str] | None = None,
    axis: np.ndarray | None = None,
    axis_label: str | None = None,
) -> ModelSummary:
    """Summarise a model for drawing.

    Parameters
    ----------
    model : BCIModel | SparseBilinearLogisticRegression
        A calibrated pipeline (metadata taken from it) or a bare fitted estimator.
    ch_names : list of str | None
        Channel names of the rows of U; read from the model when None (``C1..Cn`` for a
        bare estimator).
    axis : ndarray, shape (n_times,) | None
        Coordinates of the rows of V; read from the model when None (bins for a bare
        estimator).
    axis_label : str | None
        Title of that axis.

    Returns
    -------
    summary : ModelSummary
        The arrays to draw.
    """
    est = _estimator_of(model)
    classes = [str(c) for c in _first_attr(model, ("classes", "classes_"), est.classes_)]
    scores = _scores(est, classes)
    n_channels, n_times = scores[0].spatial.shape[0], scores[0].temporal.shape[0]

    if ch_names is None:
        ch_names = _model_channel_names(model, n_channels)
    ch_names = [str(c) for c in ch_names]
    if len(ch_names) != n_channels:
        raise ValueError(
            f"'ch_names' must name the {n_channels} rows of the spatial factor; "
            f"got {len(ch_names)} names"
        )
    if axis is None:
        axis, guessed_label = _model_axis(model, n_times)
        axis_label = axis_label or guessed_label
    axis = np.asarray(axis, float)
    if axis.shape != (n_times,):
        raise ValueError(f"'axis' must have shape ({n_times},); got {axis.shape}")

    cv_results, chosen = _cv_results(model)
    objectives = _objectives(model, est)
    info = _info(model, est)
    groups = _band_groups(model, n_channels)
    pre = _first_attr(model, ("preprocessor", "preprocessing"))
    spatial = spatial_label(pre.spatial) if hasattr(pre, "spatial") else ""
    return ModelSummary(
        ch_names=ch_names,
        axis=axis,
        axis_label=axis_label or "time bin",
        scores=scores,
        classes=classes,
        cv_results=cv_results,
        chosen=chosen,
        objectives=objectives,
        info=info,
        groups=groups,
        ranks=rank_results(model),
        features=str(_first_attr(pre, ("features",), "") or ""),
        spatial=spatial,
        candidates=auto_candidates(model),
        regions=_regions(model),
        verdict=model_verdict(model).lines() if hasattr(model, "members") else [],
        members=summarize_members(model),
    )


@summarize_model.register
def _summarize_ensemble(model: EnsembleModel, **_) -> ModelSummary:
    """Summarise an ensemble: its own verdict, selection and regions, and every member.

    The factors drawn first are member 0's, as the member table selects it first; the
    dashboard draws another member's on a click on its row.
    """
    members = summarize_members(model)
    cv_results, chosen = _cv_results(model)
    first = members[0].summary
    return dataclasses.replace(
        first,
        info={**first.info, "features": "ensemble"},
        cv_results=cv_results,
        chosen=chosen,
        ranks=rank_results(model),
        candidates=auto_candidates(model),
        regions=_regions(model),
        verdict=model_verdict(model).lines(),
        members=members,
    )


def _regions(model) -> str:
    """Return the weight-by-region line of a BCIModel (its warning is in the verdict)."""
    if not hasattr(model, "members"):
        return ""
    return weight_regions(model).describe()


def _scores(est, classes: list[str]) -> list[ScoreFactors]:
    """Return the factors of each score: one for two classes, one per class otherwise."""
    spatial, temporal = _factors(est)
    intercept = np.atleast_1d(np.asarray(est.intercept_, float))
    if spatial.ndim == 2:
        spatial, temporal = spatial[None], temporal[None]
        titles = [(classes[1], classes[0])]
    elif getattr(est, "multi_class", "ovr") == "multinomial":
        titles = [(c, f"{classes[0]} (multinomial)") for c in classes]
    else:
        titles = [(c, "rest") for c in classes]
    return [
        ScoreFactors(
            title=f"{pos} vs {neg}",
            spatial=spatial[k],
            temporal=temporal[k],
            intercept=float(intercept[min(k, intercept.size - 1)]),
            positive=pos,
            negative=neg,
        )
        for k, (pos, neg) in enumerate(titles)
    ]


def _band_groups(model, n_channels: int) -> list[tuple[str, list[int]]]:
    """Return the rows of U per frequency band for band-power features (none otherwise)."""
    pre = getattr(model, "preprocessor", None)
    groups = []
    if pre is not None and getattr(pre, "features", "") == "bandpower":
        n_picks = len(pre.pick_names)
        for b, (lo, hi) in enumerate(pre.freq_bands):
            rows = list(range(b * n_picks, (b + 1) * n_picks))
            if rows[-1] < n_channels:
                groups.append((f"{lo:g}-{hi:g} Hz", rows))
    return groups


def _model_channel_names(model, n_channels: int) -> list[str]:
    pre = _first_attr(model, ("preprocessor", "preprocessing"))
    for obj in (pre, model):
        if obj is None:
            continue
        names = _first_attr(obj, ("row_names", "model_ch_names", "picks", "ch_names"))
        if names is not None and len(names) == n_channels:
            return list(names)
    return [f"C{i + 1}" for i in range(n_channels)]


def _model_axis(model, n_times: int) -> tuple[np.ndarray, str]:
    pre = _first_attr(model, ("preprocessor", "preprocessing"))
    features = str(_first_attr(pre, ("features",), "") or _first_attr(model, ("features",), ""))
    if features == "bandpower":
        return np.arange(n_times, dtype=float), "band-power time bin"
    if features == "covariance":  # V is a second spatial factor: over channels
        return np.arange(n_times, dtype=float), "channel (second spatial factor)"
    if features == "spectral":
        freqs = np.asarray(pre.freqs, float)
        if freqs.shape == (n_times,):
            return freqs, "frequency (Hz)"
    for obj in (pre, model):
        times = _first_attr(obj, ("times",))
        if times is not None and len(times) == n_times:
            return np.asarray(times, float), "time after cue (s)"
    tmin, tmax = _first_attr(model, ("tmin",)), _first_attr(model, ("tmax",))
    if tmin is not None and tmax is not None:
        step = (float(tmax) - float(tmin)) / n_times
        return float(tmin) + (np.arange(n_times) + 0.5) * step, "time after cue (s)"
    return np.arange(n_times, dtype=float), "time bin"


#: Keys of a CV row that are results, not hyper-parameters.
RESULT_KEYS = (
    "score",
    "std",
    "mean",
    "loss",
    "accuracy",
    "accuracy_std",
    "log_loss",
    "auc",
    "raced",
    "stage",
    "collapsed",
    "unbounded",
    "group",
    "step",
    "folds",
    "scores",
)


def _cv_results(model) -> tuple[list[dict], dict]:
    record = search_record(getattr(model, "metadata", None))
    candidates = record.get("candidates") or []
    if len(candidates) == 1 and candidates[0].get("points"):
        # calibration's search report of one candidate: its penalty grid at the chosen rank
        best = record.get("best") or {}
        chosen = {k: v for k, v in best.items() if k not in RESULT_KEYS}
        rows = [
            {**{k: r.get(k) for k in chosen}, "score": float(r["accuracy"]),
             "std": r.get("accuracy_std")}
            for r in candidates[0]["points"]
            if r.get("accuracy") is not None
        ]  # fmt: skip
        return rows, chosen
    raw = _first_attr(model, ("cv_results", "cv_results_", "grid"))
    chosen = _first_attr(model, ("chosen", "best_params", "best_params_", "hyper_parameters"), {})
    rows: list[dict] = []
    if isinstance(raw, Mapping) and "params" in raw:
        # scikit-learn's GridSearchCV.cv_results_ layout
        means = raw.get("mean_test_score", raw.get("score"))
        stds = raw.get("std_test_score", [None] * len(raw["params"]))
        for params, mean, std in zip(raw["params"], means, stds, strict=False):
            row = dict(params, score=float(mean))
            if std is not None:
                row["std"] = float(std)
            rows.append(row)
    elif isinstance(raw, Mapping):
        keys = list(raw)
        n = len(raw[keys[0]]) if keys else 0
        rows = [{k: _plain(raw[k][i]) for k in keys} for i in range(n)]
    elif isinstance(raw, Sequence):
        rows = [dict(r) for r in raw if isinstance(r, Mapping)]
    for row in rows:
        if "score" not in row:
            for key in ("mean_score", "mean_test_score", "accuracy", "cv_score"):
                if key in row:
                    row["score"] = float(row[key])
                    break
    rows = [r for r in rows if "score" in r]
    if isinstance(chosen, Mapping):
        chosen = {k: _plain(v) for k, v in chosen.items()}
    else:
        chosen = {}
    return rows, chosen


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def rank_results(model) -> list[dict]:
    """CV accuracy per rank tried with zero penalties (calibration's first step).

    Parameters
    ----------
    model : BCIModel
        A calibrated model.

    Returns
    -------
    rows : list of dict
        ``{"rank", "mean", "std"}`` per rank (the CV accuracy); empty when not recorded.
    """
    record = search_record(getattr(model, "metadata", None))
    return [
        {"rank": r["rank"], "mean": r.get("accuracy"), "std": r.get("accuracy_std")}
        for r in record.get("ranks") or []
    ]


def _objectives(model, est) -> list[np.ndarray]:
    obj = _first_attr(model, ("objective", "objective_trace"))
    if obj is None:
        obj = getattr(est, "objective_", None)
    if obj is None:
        return []
    if isinstance(obj, np.ndarray) and obj.ndim == 1:
        return [obj.astype(float)]
    if isinstance(obj, Sequence) and obj and np.ndim(obj[0]) == 0:
        return [np.asarray(obj, float)]
    return [np.asarray(o, float) for o in obj]


def _info(model, est) -> dict:
    info = {}
    for key in ("source", "sfreq", "tmin", "tmax", "features", "software_version", "version"):
        value = _first_attr(model, (key,))
        if value is not None and not callable(value):
            info[key] = value
    for key in ("rank", "mu1", "mu2", "nu1", "nu2"):
        value = getattr(est, key, None)
        if value is not None:
            info[key] = value
    return info

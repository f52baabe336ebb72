"""From scores to class probabilities: the one rule, offline and online.

A model's raw probabilities say how far a window lies from the decision boundary of the
trials it trained on; on a new run, and for a window that ends early in the trial (it holds
less of the imagery and some EEG from before the cue), they are over-confident. A
:class:`ProbabilityCalibration`, fitted at calibration on scores of trials the model did
not train on, tempers them: a sharpness ``a(e) >= 0`` per window end ``e`` relative to the
cue, and the calibrated probabilities are the raw ones raised to ``a(e)`` and normalised
(for two classes ``expit(a(e) * score)``). The argmax, and so every decision's label, is
unchanged; only the confidence changes.

Examples
--------
>>> import numpy as np
>>> proba_from_scores(np.array([0.0, 2.0])).round(3).tolist()
[[0.5, 0.5], [0.119, 0.881]]
>>> proba_from_scores(np.array([0.0, 2.0]), sharpness=0.5).round(3).tolist()
[[0.5, 0.5], [0.269, 0.731]]
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, softmax

__all__ = ["ProbabilityCalibration", "proba_from_scores", "proba_of_window"]

#: Largest sharpness a calibration may hold: a factor on the scores.
MAX_SHARPNESS = 10.0


@dataclass(frozen=True)
class ProbabilityCalibration:
    """How much a score of a window ending ``e`` seconds after the cue is to be believed.

    Parameters
    ----------
    ends : sequence of float
        Window ends relative to the cue, in seconds, strictly increasing; the last is the
        trial window's (``tmax``).
    sharpness : sequence of float
        The factor ``a >= 0`` on the scores at each end (1: the raw probabilities, 0:
        chance), non-decreasing: a window that ends earlier is never believed more.
    how : str
        How it was fitted, in words.

    Examples
    --------
    >>> cal = ProbabilityCalibration([1.0, 3.0], [0.2, 0.6])
    >>> cal.sharpness_at(2.0), cal.sharpness_at(None), cal.sharpness_at(0.0)
    (0.4, 0.6, 0.2)
    """

    ends: tuple
    sharpness: tuple
    how: str = ""

    def __post_init__(self):
        ends = _floats("ends", self.ends)
        sharp = _floats("sharpness", self.sharpness)
        if not len(ends) or len(ends) != len(sharp):
            raise ValueError(
                "'ends' and 'sharpness' must hold one value each per window end (at least "
                f"one), got {len(ends)} and {len(sharp)}"
            )
        if any(b <= a for a, b in itertools.pairwise(ends)):
            raise ValueError(f"'ends' must be strictly increasing, got {list(ends)}")
        if any(not 0 <= a <= MAX_SHARPNESS for a in sharp):
            raise ValueError(
                f"'sharpness' must be numbers in [0, {MAX_SHARPNESS:g}], got {list(sharp)}"
            )
        if any(b < a for a, b in itertools.pairwise(sharp)):
            raise ValueError(
                f"'sharpness' must not decrease with the window end, got {list(sharp)}"
            )
        if not isinstance(self.how, str):
            raise TypeError(f"'how' must be a string, got {type(self.how).__name__}")
        object.__setattr__(self, "ends", ends)
        object.__setattr__(self, "sharpness", sharp)

    @property
    def trial(self) -> float:
        """The sharpness of the trial window (the last end): every decision's default."""
        return self.sharpness[-1]

    def sharpness_at(self, end: float | None) -> float:
        """Return the sharpness of a window ending ``end`` seconds after the cue.

        Linear between the ends, the first end's before it, the trial window's after the
        last; ``end`` None or not finite (no cue known): the trial window's.
        """
        if end is None or not math.isfinite(end):
            return self.trial
        ends, sharp = self.ends, self.sharpness
        if end >= ends[-1]:
            return sharp[-1]
        if end <= ends[0]:
            return sharp[0]
        k = next(i for i, e in enumerate(ends) if e > end)
        f = (end - ends[k - 1]) / (ends[k] - ends[k - 1])
        return round(sharp[k - 1] + f * (sharp[k] - sharp[k - 1]), 12)

    def to_dict(self) -> dict:
        """Return the JSON-serialisable form (``metadata.probability`` of a model file)."""
        return {"ends": list(self.ends), "sharpness": list(self.sharpness), "how": self.how}

    @classmethod
    def from_dict(cls, data) -> ProbabilityCalibration:
        """Rebuild from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            If a field is missing or invalid.
        """
        if not isinstance(data, dict) or "ends" not in data or "sharpness" not in data:
            raise ValueError(
                f"a probability calibration needs 'ends' and 'sharpness', got {data!r}"
            )
        return cls(data["ends"], data["sharpness"], str(data.get("how", "")))


def _floats(name: str, values) -> tuple:
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        raise TypeError(f"'{name}' must be a sequence of numbers, got {type(values).__name__}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"'{name}' must hold finite numbers, got {list(values)!r}")
        out.append(float(v))
    return tuple(out)


def proba_from_scores(scores, multi_class: str = "ovr", sharpness: float = 1.0) -> np.ndarray:
    """Return class probabilities from decision scores.

    Parameters
    ----------
    scores : array-like, shape (n_epochs,) or (n_epochs, n_classes)
        Scores ``tr(U^T X V) + b``: one column for two classes, one per class otherwise.
    multi_class : {"ovr", "multinomial"}
        How three or more classes are normalised: one-versus-rest logistics divided by
        their sum, or the multinomial softmax.
    sharpness : float
        The probabilities are raised to this power and normalised (a
        :class:`ProbabilityCalibration`'s; 1: as they are). Two classes: ``expit(sharpness
        * score)``.

    Returns
    -------
    proba : ndarray, shape (n_epochs, n_classes)
        Rows sum to one.
    """
    scores = np.asarray(scores, dtype=np.float64)
    a = float(sharpness)
    if scores.ndim == 1:
        p1 = expit(a * scores)
        return np.column_stack([1.0 - p1, p1])
    if scores.ndim != 2:
        raise ValueError(f"'scores' must be 1-D or 2-D, got shape {scores.shape}")
    if multi_class == "multinomial":
        return softmax(a * scores, axis=1)
    proba = expit(scores)
    proba /= proba.sum(axis=1, keepdims=True)
    if a == 1.0:
        return proba
    with np.errstate(divide="ignore"):
        return softmax(a * np.log(proba), axis=1)


def _logistic(s: float) -> float:
    """Return the logistic of one score without overflow (as :func:`scipy.special.expit`)."""
    if s >= 0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


def proba_of_window(scores, multi_class: str = "ovr", sharpness: float = 1.0) -> list[float]:
    """Return the class probabilities of one window: :func:`proba_from_scores` for one row.

    The online loop decides one window at a time, every few milliseconds; for two classes
    this computes the same logistic in plain floats, without array overhead.

    Parameters
    ----------
    scores : sequence of float, length 1 (two classes) or n_classes
        The window's scores.
    multi_class : {"ovr", "multinomial"}
        As in :func:`proba_from_scores`.
    sharpness : float
        As in :func:`proba_from_scores`.

    Returns
    -------
    proba : list of float
        One probability per class, summing to one.
    """
    if len(scores) == 1:
        p1 = _logistic(sharpness * float(scores[0]))
        return [1.0 - p1, p1]
    s = np.asarray(scores, dtype=np.float64)[None]
    return proba_from_scores(s, multi_class, sharpness)[0].tolist()

"""A decision: one window's label and probabilities, and where and when it was made.

:class:`Decision` is the message the online side passes around: built by a model's
:class:`DecisionRule` (held by :class:`~sblr_rt.online.OnlineClassifier` and by each of
its streaming states), completed by
the loop (model version, smoothed evidence, window indices, publish time) with
:func:`dataclasses.replace`, and published in two encodings, each written once:
:meth:`Decision.to_json` (the ``SBLR-Predictions`` marker stream) and
:meth:`Decision.to_numeric` (the ``SBLR-Predictions-Numeric`` float stream,
:func:`sblr_rt.stream.decision_format.numeric_sample`). For the code written against the
dicts of earlier versions, a decision also reads as a mapping: ``decision["label"]``,
``decision.get("early")``, ``dict(decision)``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from sblr_rt.io.jsonable import dumps
from sblr_rt.model.link import proba_of_window
from sblr_rt.stream.decision_format import numeric_sample

__all__ = ["PUBLIC_FIELDS", "Decision", "DecisionRule"]

#: Fields every published decision carries.
PUBLIC_FIELDS = ("label", "proba", "window_end", "trial", "cue")
#: Fields a published decision carries when set (the online loop's): the smoothed
#: probability over the trial and whether a trial decision came before ``tmax``
#: (:mod:`sblr_rt.online.evidence`); and ``model_version``.
_OPTIONAL_PUBLIC = ("proba_smoothed", "early")
#: Fields a decision always has as a mapping (the others only when set).
_ALWAYS = (*PUBLIC_FIELDS, "score")


# eq=False: a decision compares as a mapping, with a decision or a dict of its items.
@dataclasses.dataclass(frozen=True, eq=False)
class Decision(Mapping):
    """One window's decision.

    Parameters
    ----------
    label : str | None
        The most probable class (None when a score is not finite; never published).
    proba : dict
        ``{class label: probability}`` for every class, in the model's class order.
    score : float | list of float
        The model's score (two classes; positive means ``classes[1]``), else one per class.
    window_end : float | None
        Timestamp of the window's last sample.
    trial : bool
        Whether this is a trial (cue-locked) decision.
    cue : str | None
        The cue's marker value, for trial decisions.
    model_version : int | None
        The version of the model that decided (the online loop's decisions).
    proba_smoothed : dict | None
        The evidence accumulated over the trial (:mod:`sblr_rt.online.evidence`).
    early : bool | None
        Whether a trial decision came before ``tmax`` (dynamic stopping).
    window_start_index, window_stop_index : int | None
        Absolute sample indices of the window in the stream since the loop started.
    published : float | None
        Clock time when it was pushed to the sink.
    step_time : float | None
        Seconds spent classifying the window.

    Examples
    --------
    >>> d = Decision("left", {"left": 0.75, "right": 0.25}, -1.1, window_end=2.5)
    >>> d.to_json()
    '{"label": "left", "proba": {"left": 0.75, "right": 0.25}, "window_end": 2.5, \
"trial": false, "cue": null}'
    >>> d.to_numeric(["left", "right"]).tolist()
    [0.75, 0.25, 0.75, 0.25, 0.0, 0.0, 0.0]
    >>> d["label"]
    'left'
    """

    label: str | None
    proba: dict
    score: float | list
    window_end: float | None = None
    trial: bool = False
    cue: str | None = None
    model_version: int | None = None
    proba_smoothed: dict | None = None
    early: bool | None = None
    window_start_index: int | None = None
    window_stop_index: int | None = None
    published: float | None = None
    step_time: float | None = None

    def public(self) -> dict:
        """Return the published part, plain Python types (the JSON object).

        Returns
        -------
        public : dict
            ``label``, ``proba``, ``window_end``, ``trial``, ``cue``; and
            ``proba_smoothed``, ``early`` and ``model_version`` when set.
        """
        end = self.window_end
        public = {
            "label": self.label,
            "proba": self.proba,
            "window_end": None if end is None else float(end),
            "trial": bool(self.trial),
            "cue": self.cue,
        }
        for name in _OPTIONAL_PUBLIC:  # added fields, never renamed
            value = getattr(self, name)
            if value is not None:
                public[name] = value
        if self.model_version is not None:
            public["model_version"] = int(self.model_version)
        return public

    def to_json(self) -> str:
        """Return the decision as published on ``SBLR-Predictions`` (see :meth:`public`)."""
        return dumps(self.public())

    def to_numeric(self, classes: Sequence[str]) -> np.ndarray:
        """Return the sample published on ``SBLR-Predictions-Numeric``.

        Parameters
        ----------
        classes : sequence of str
            The class labels, in the outlet's channel order.

        Returns
        -------
        sample : ndarray, shape (2 * n_classes + 3,), float32
            Probabilities, smoothed probabilities, ``trial``, ``early``,
            ``model_version`` (:class:`~sblr_rt.stream.ProbabilityOutlet`).
        """
        return numeric_sample(self.public(), classes)

    # ------------------------------------------------------------------ as a mapping
    def _keys(self) -> list[str]:
        return [
            f.name
            for f in dataclasses.fields(self)
            if f.name in _ALWAYS or getattr(self, f.name) is not None
        ]

    def __getitem__(self, key: str):
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


@dataclasses.dataclass(frozen=True)
class DecisionRule:
    """How the scores of one window become its label, probabilities and decision.

    Parameters
    ----------
    classes : tuple of str
        The model's class labels, in its order.
    multi_class : str
        How scores become probabilities (:func:`sblr_rt.model.link.proba_of_window`).
    sharpness : float
        The factor on the scores of a trial window's probabilities (the model's
        probability calibration, :attr:`ProbabilityCalibration.trial
        <sblr_rt.model.link.ProbabilityCalibration.trial>`; 1: as the model gives them).
        The label is the raw argmax's, whatever the sharpness.
    """

    classes: tuple
    multi_class: str
    sharpness: float = 1.0

    def decide(self, scores) -> tuple[str, dict]:
        """Return the label and ``{label: probability}`` for the scores of one window."""
        scores = scores[:1] if len(self.classes) == 2 else scores
        proba = proba_of_window(scores, self.multi_class)
        label = self.classes[max(range(len(proba)), key=proba.__getitem__)]
        if self.sharpness != 1.0:
            proba = proba_of_window(scores, self.multi_class, self.sharpness)
        return label, dict(zip(self.classes, proba, strict=True))

    def decision(self, scores, window_end=None, trial: bool = False, cue=None) -> Decision:
        """Return the decision for the scores of one window.

        ``label`` is None and every probability NaN when a score is not finite: no
        decision is made from such a window.
        """
        values = [float(v) for v in scores]  # a few floats: plain Python is fastest
        if all(math.isfinite(v) for v in values):
            label, proba = self.decide(values)
        else:
            label, proba = None, dict.fromkeys(self.classes, float("nan"))
        return Decision(
            label=label,
            proba=proba,
            score=values[0] if len(self.classes) == 2 else values,
            window_end=window_end,
            trial=bool(trial),
            cue=cue,
        )

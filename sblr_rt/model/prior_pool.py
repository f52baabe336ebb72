"""A prior's training pool: many people's run-centred features, joined by a person's trials.

A prior (:func:`sblr_rt.calibration.build_prior`) is a model trained on the run-centred
features of many people's runs. It keeps those features, so that a new person's labelled
trials can join them with a weight per trial and the model be refitted toward that person
(:func:`sblr_rt.calibration.prior.adapt_prior`): with few trials the pool carries the
model, with many the person's trials do.

Examples
--------
>>> import numpy as np
>>> pool = PriorPool(Z=np.zeros((4, 2, 3)), y=np.array([0, 1, 0, 1]),
...                  groups=np.array([0, 0, 1, 1]), trial_weight=5.0)
>>> pool.n_epochs, pool.n_groups
(4, 2)
>>> pool.prior_share(n_trials=2)
0.2857142857142857
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PriorPool"]


@dataclass(frozen=True)
class PriorPool:
    """The run-centred training features of a prior, with their labels and people.

    Parameters
    ----------
    Z : ndarray, shape (n_epochs, n_rows, n_times)
        Unscaled features, every run centred on its own mean (float32 is kept as is).
    y : ndarray of int, shape (n_epochs,)
        Class indices into the model's classes.
    groups : ndarray of int, shape (n_epochs,)
        The person of each epoch (indices into the prior's ``people``).
    trial_weight : float
        The weight of one of a new person's trials against one pooled epoch (weight 1).
    """

    Z: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    trial_weight: float = 5.0

    def __post_init__(self):
        Z = np.asarray(self.Z)
        if Z.dtype not in (np.float32, np.float64):
            Z = Z.astype(np.float64)
        y = np.asarray(self.y)
        groups = np.asarray(self.groups)
        if Z.ndim != 3 or y.shape != (Z.shape[0],) or groups.shape != (Z.shape[0],):
            raise ValueError(
                "'Z' must be (n_epochs, n_rows, n_times) with one label and one group per "
                f"epoch, got Z {Z.shape}, y {y.shape}, groups {groups.shape}"
            )
        if Z.shape[0] == 0 or not np.isfinite(Z).all():
            raise ValueError("'Z' must hold at least one epoch, every value finite")
        for name, a in (("y", y), ("groups", groups)):
            if not np.issubdtype(a.dtype, np.integer) or (a < 0).any():
                raise ValueError(f"'{name}' must be non-negative integers, got {a.dtype}")
        w = self.trial_weight
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w <= 0:
            raise ValueError(f"'trial_weight' must be a positive number, got {w!r}")
        for name, a in (("Z", Z), ("y", y.astype(np.int64)), ("groups", groups.astype(np.int64))):
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        object.__setattr__(self, "trial_weight", float(w))

    @property
    def n_epochs(self) -> int:
        """Pooled epochs."""
        return int(self.Z.shape[0])

    @property
    def n_groups(self) -> int:
        """People in the pool."""
        return int(np.unique(self.groups).size)

    def prior_share(self, n_trials: int) -> float:
        """Return the pool's share of the training weight once ``n_trials`` join it.

        ``n_epochs / (n_epochs + trial_weight * n_trials)``: 1 before the person's first
        labelled trial, falling as they come.
        """
        return self.n_epochs / (self.n_epochs + self.trial_weight * max(int(n_trials), 0))

    def describe(self) -> str:
        """One line for a model's summary."""
        return (
            f"prior pool: {self.n_epochs} run-centred epochs of {self.n_groups} people; "
            f"a person's trial weighs {self.trial_weight:g} epochs"
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """Return the arrays for the model file (``Z``, ``y``, ``groups``)."""
        return {"Z": self.Z, "y": self.y, "groups": self.groups}

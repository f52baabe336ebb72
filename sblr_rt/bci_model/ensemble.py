"""An ensemble: the weighted mean score of single models reading the same raw epochs."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from sblr_rt.bci_model.base import BCIModel
from sblr_rt.bci_model.single import SingleModel
from sblr_rt.model.run_centring import RunCentring

__all__ = ["EnsembleModel"]


class EnsembleModel(BCIModel):
    """The model whose score is the weighted mean of its members' scores.

    Every member reads the same raw channels, rate and window and has the same classes;
    each keeps its own feature path, scaling, estimator and run centring. No member leads:
    what the ensemble reads is what all of them read, and each member's factors and figures
    are reached through :attr:`members`. Run centring of the mean score is the weighted mean
    of the members' run centring, exactly (each is linear in the run's running mean), so
    the ensemble adapts to a run as its members would.

    Parameters
    ----------
    members : sequence of SingleModel
        Two or more single models.
    weights : sequence of float | None
        Each member's weight in the score, non-negative, normalised to sum to 1; None:
        equal weights.
    metadata : dict | None
        JSON-serialisable calibration information of the ensemble as a whole (each member
        keeps its own in ``member.metadata``).
    """

    is_ensemble = True
    form = "ensemble"

    def __init__(
        self,
        members: Sequence[SingleModel],
        weights: Sequence[float] | None = None,
        metadata: dict | None = None,
    ):
        members = tuple(members)
        if len(members) < 2 or not all(isinstance(m, SingleModel) for m in members):
            raise ValueError(
                f"'members' must be two or more SingleModel, got {len(members)} "
                f"({sorted({type(m).__name__ for m in members})})"
            )
        first = members[0]
        reads = (first.ch_names, first.sfreq, first.tmin, first.tmax, first.classes)
        for m in members[1:]:
            if (m.ch_names, m.sfreq, m.tmin, m.tmax, m.classes) != reads:
                raise ValueError(
                    "every member must read the same channels, rate and window and have the "
                    f"same classes: expected {first.ch_names[:3]}..., {first.sfreq}, "
                    f"[{first.tmin}, {first.tmax}), {first.classes}; got {m.ch_names[:3]}..., "
                    f"{m.sfreq}, [{m.tmin}, {m.tmax}), {m.classes}"
                )
            if len(first.classes) > 2 and m.multi_class != first.multi_class:
                raise ValueError(
                    "every member must turn scores into probabilities the same way: expected "
                    f"multi_class {first.multi_class!r}, got {m.multi_class!r}"
                )
        self._members = members
        self._weights = _normalised(weights, len(members))
        self.classes = list(first.classes)
        self.metadata = dict(metadata or {})
        # Centred only when every member is: a member without run centring has no running
        # mean to follow, so the ensemble's scores stay static.
        self.run_centring = None
        if all(m.run_centring is not None for m in members):
            w = self._weights
            centre = np.tensordot(w, [m.run_centring.centre_score for m in members], axes=1)
            warmup = float(np.dot(w, [m.run_centring.warmup for m in members]))
            # The members' scores are already measured from their own references.
            self.run_centring = RunCentring(np.zeros_like(centre), centre, warmup)

    @property
    def members(self) -> tuple:
        """The single models, in the order of :attr:`member_weights`."""
        return self._members

    @property
    def member_weights(self) -> np.ndarray:
        """Each member's weight in the score (a copy), summing to 1."""
        return self._weights.copy()

    @property
    def member_labels(self) -> tuple[str, ...]:
        """``("member 0", "member 1", ...)``."""
        return tuple(f"member {k}" for k in range(len(self._members)))

    def with_members(
        self, members: Sequence[SingleModel], metadata: dict | None = None
    ) -> EnsembleModel:
        """Return an ensemble of ``members`` at this ensemble's weights, with ``metadata``."""
        if len(members) != len(self._members):
            raise ValueError(
                f"'members' must be {len(self._members)} single models (one per member), "
                f"got {len(members)}"
            )
        return EnsembleModel(members, self._weights, metadata)

    @property
    def features(self) -> str:
        """``"ensemble"``."""
        return "ensemble"

    @property
    def n_pad(self) -> int:
        """The longest filter warm-up of the members."""
        return max(m.n_pad for m in self._members)

    def member_scores(self, epochs: np.ndarray) -> np.ndarray:
        """Every member's score of raw ``epochs`` (each reads the end of the epoch it needs)."""
        epochs = self._check_epochs(epochs)
        return np.stack([m.decision_function(epochs) for m in self._members])

    def for_channels(self, ch_names: Sequence[str]) -> EnsembleModel:
        """Return a copy whose members read another channel order (or a superset)."""
        return EnsembleModel(
            [m.for_channels(ch_names) for m in self._members],
            self._weights,
            copy.deepcopy(self.metadata),
        )


def _normalised(weights, n: int) -> np.ndarray:
    """Return ``n`` weights normalised to sum to 1 (equal weights for None), checked."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.size != n or not np.isfinite(w).all() or (w < 0).any() or w.max() <= 0:
        raise ValueError(
            f"'weights' must be {n} finite non-negative numbers with a positive sum (one per "
            f"member), got {np.asarray(weights).tolist()}"
        )
    w = w / w.max()  # 1e308 twice sums to inf: scale first, then normalise
    return w / w.sum()

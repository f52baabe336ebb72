"""Scalp regions of channels, and where a model's weight lies among them.

In many motor-imagery data sets the target appears at the left or right (top or bottom)
of the screen, so eye movements and visual attention are locked to the class; a live
session with a central cue has neither. A model can score well by reading them. This
module says how much of a model's weight sits on the sensorimotor strip (FC, C, CP), on
channels that carry eye movements (Fp, AF, F7/F8, T7-T10) and on occipital ones (PO, O,
I), so that the report, ``sblr-rt inspect`` and the dashboard can warn.

Examples
--------
>>> region_of("C3"), region_of("Fp1."), region_of("PO8"), region_of("Pz")
('sensorimotor', 'eye', 'occipital', 'other')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["REGIONS", "WeightRegions", "region_of", "weight_regions"]

#: The regions, in the order reports list them.
REGIONS = ("sensorimotor", "eye", "occipital", "other")
#: Share of the weight on eye and occipital channels above which a model is flagged.
WARN_SHARE = 0.5

_RULES = (
    ("eye", re.compile(r"(FP|AF)\w*|F[78]|F9|F10|T[789]|T10", re.IGNORECASE)),
    ("occipital", re.compile(r"(PO|O|I)(Z|\d+)", re.IGNORECASE)),
    ("sensorimotor", re.compile(r"(FC|C|CP)(Z|\d+)", re.IGNORECASE)),
)


def region_of(ch_name: str) -> str:
    """Return the scalp region of a 10-20/10-10 channel label (``"other"`` if none)."""
    label = str(ch_name).strip().rstrip(".").replace(" ", "")
    for region, rule in _RULES:
        if rule.fullmatch(label):
            return region
    return "other"


@dataclass(frozen=True)
class WeightRegions:
    """Where a model's weight lies.

    Attributes
    ----------
    shares : dict
        Share of the weight per region (:data:`REGIONS`), summing to one.
    leading : list of (str, float)
        The channels of largest share, largest first.
    """

    shares: dict
    leading: list

    @property
    def warning(self) -> str | None:
        """A sentence when most of the weight is on eye or occipital channels, else None."""
        share = self.shares["eye"] + self.shares["occipital"]
        if share <= WARN_SHARE:
            return None
        return (
            f"{share:.0%} of the model's weight is on channels that carry eye movements "
            f"({self.shares['eye']:.0%}) or visual responses ({self.shares['occipital']:.0%}), "
            f"{self.shares['sensorimotor']:.0%} on the sensorimotor strip: with class-locked "
            "targets on the screen it may read gaze, not imagery"
        )

    def describe(self) -> str:
        """Return one line: the shares and the leading channels."""
        shares = ", ".join(f"{r} {self.shares[r]:.0%}" for r in REGIONS)
        lead = ", ".join(f"{c} {s:.0%}" for c, s in self.leading)
        return f"weight by region: {shares}; leading channels {lead}"


def weight_regions(model, *, n_leading: int = 5) -> WeightRegions:
    """Share of a model's weight per scalp region and its leading channels.

    The weight of a channel is the norm of its rows of the spatial factor U (every band on
    the band-power path, every output), plus, on the covariance path whose columns are
    channels too, its rows of V. An ensemble adds its members' shares, each weighted by its
    weight in the decision (:attr:`~sblr_rt.bci_model.BCIModel.member_weights`).

    Parameters
    ----------
    model : BCIModel
        A fitted model.
    n_leading : int
        How many channels to name.

    Returns
    -------
    regions : WeightRegions
    """
    members = getattr(model, "members", None) or [model]
    weights = getattr(model, "member_weights", None)
    if weights is None or len(weights) != len(members):
        weights = np.full(len(members), 1.0 / len(members))
    per_channel: dict[str, float] = {}
    for member, w in zip(members, weights, strict=True):
        for ch, share in _channel_shares(member).items():
            per_channel[ch] = per_channel.get(ch, 0.0) + share * float(w)
    shares = dict.fromkeys(REGIONS, 0.0)
    for ch, share in per_channel.items():
        shares[region_of(ch)] += share
    leading = sorted(per_channel.items(), key=lambda item: -item[1])[:n_leading]
    return WeightRegions(shares, leading)


def _channel_shares(model) -> dict[str, float]:
    """Share of one single model's weight per picked channel."""
    pre, est = model.preprocessor, model.estimator
    picks: Sequence[str] = pre.picks
    U = np.abs(np.asarray(est.spatial_, dtype=np.float64))
    U = U.reshape(-1, *U.shape[-2:])  # (n_outputs, n_rows, rank)
    rows = np.sqrt((U**2).sum(axis=(0, 2)))  # (n_rows,)
    weight = rows.reshape(-1, len(picks)).sum(axis=0)  # band-major rows -> channels
    if pre.features == "covariance":
        V = np.abs(np.asarray(est.temporal_, dtype=np.float64)).reshape(
            -1, len(picks), U.shape[-1]
        )
        weight = weight + np.sqrt((V**2).sum(axis=(0, 2)))
    total = weight.sum()
    if not total > 0:
        return dict.fromkeys(picks, 1.0 / len(picks))
    return {ch: float(w / total) for ch, w in zip(picks, weight, strict=True)}

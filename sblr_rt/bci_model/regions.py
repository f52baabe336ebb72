"""Scalp regions of channels, and where a model's weight lies among them.

In many motor-imagery data sets the target appears at the left or right (top or bottom)
of the screen, so eye movements and visual attention are locked to the class; a live
session with a central cue has neither. A model can score well by reading them. This
module says how much of a model's weight sits on the sensorimotor strip (FC, C, CP), on
channels that carry eye movements (Fp, AF, F7/F8, T7-T10) and on occipital ones (PO, O,
I), so that the report, ``sblr-rt inspect`` and the dashboard can warn
(:data:`WARN_SHARE`).

Examples
--------
>>> region_of("C3"), region_of("Fp1."), region_of("PO8"), region_of("Pz")
('sensorimotor', 'eye', 'occipital', 'other')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["REGIONS", "WARN_SHARE", "WeightRegions", "region_of", "weight_regions"]

#: The regions, in the order reports list them.
REGIONS = ("sensorimotor", "eye", "occipital", "other")
#: Share of the weight on the eye channels, or on the occipital ones, above which a model
#: is flagged. A model of sensorimotor rhythms puts little weight there; one whose weight
#: is spread evenly over a 64-channel 10-10 cap puts about 22% on the 14 eye channels.
WARN_SHARE = 0.15

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
    channels : dict
        Share of the weight per channel, summing to one.
    """

    shares: dict
    leading: list
    channels: dict = field(default_factory=dict)

    def flagged(self) -> list[str]:
        """Return the regions among eye and occipital whose share exceeds :data:`WARN_SHARE`."""
        return [r for r in ("eye", "occipital") if self.shares[r] > WARN_SHARE]

    def region_channels(self, region: str, n: int = 5) -> list[tuple[str, float]]:
        """Return the ``n`` channels of ``region`` of largest share, largest first."""
        inside = [(c, s) for c, s in self.channels.items() if region_of(c) == region]
        return sorted(inside, key=lambda item: -item[1])[:n]

    @property
    def warning(self) -> str | None:
        """A sentence when the eye or occipital channels carry more than :data:`WARN_SHARE`.

        It names the region's leading channels and says what to try: regressing the eye
        channels out (``--eog``) or reading the sensorimotor channels only (``picks``).
        None when neither region is above the threshold.
        """
        flagged = self.flagged()
        if not flagged:
            return None
        parts = []
        for region in flagged:
            n_region = sum(region_of(c) == region for c in self.channels)
            names = ", ".join(c for c, _ in self.region_channels(region, 4))
            what = "eye" if region == "eye" else "occipital (visual)"
            parts.append(
                f"{self.shares[region]:.0%} of the weight is on {what} channels ({names}"
                + (f"; {n_region} of {len(self.channels)} channels" if self.channels else "")
                + ")"
            )
        return (
            "; ".join(parts)
            + f", above the {WARN_SHARE:.0%} this check allows: the model may read eye "
            "movements or where the person looks, not imagery. Try --eog Fp1,Fp2 (or the "
            "EOG channels) to regress the eyes out, or read the sensorimotor channels only "
            "(picks in a --config file)"
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
    members, weights = model.members, model.member_weights
    per_channel: dict[str, float] = {}
    for member, w in zip(members, weights, strict=True):
        for ch, share in _channel_shares(member).items():
            per_channel[ch] = per_channel.get(ch, 0.0) + share * float(w)
    shares = dict.fromkeys(REGIONS, 0.0)
    for ch, share in per_channel.items():
        shares[region_of(ch)] += share
    leading = sorted(per_channel.items(), key=lambda item: -item[1])[:n_leading]
    return WeightRegions(shares, leading, per_channel)


def _channel_shares(model) -> dict[str, float]:
    """Share of one single model's weight per picked channel."""
    pre, est = model.preprocessor, model.estimator
    picks: Sequence[str] = pre.pick_names
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

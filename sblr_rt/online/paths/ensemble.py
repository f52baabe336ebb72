"""The ensemble path: every member of an ensemble model on its own fast path, scores weighted.

An ensemble (:meth:`BCIModel.ensemble <sblr_rt.bci_model.BCIModel.ensemble>`) scores a
window as the weighted mean of its members' scores. Each member streams on the path it would take
alone (projected virtual channels for a waveform member, running band power for the power
paths, the plain pipeline for the covariance path), fed the same samples, so a decision
costs the sum of the members' fast steps rather than four plain pipelines. Each member's
window is the last ``n_times`` samples of its own before ``stop``: the members' windows end
together, as offline, where the ensemble's raw epoch carries the longest warm-up.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.online.paths.base import Scoring, StreamingPath

__all__ = ["EnsemblePath"]


class EnsemblePath(StreamingPath):
    """Feed every member's streaming path; a decision is the weighted mean of their scores."""

    name = "ensemble"
    features = "ensemble"

    def __init__(self, scoring: Scoring, capacity: int) -> None:
        super().__init__(scoring, capacity)
        # A member's path keeps as much history as the ensemble's state does.
        self._members = [path(member, capacity) for path, member in scoring.members]

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples to every member's path."""
        for path in self._members:
            path.push(chunk)

    def skip(self, n: int) -> None:
        """Advance every member by ``n`` lost samples."""
        for path in self._members:
            path.skip(n)

    def mark_break(self) -> None:
        """Note a discontinuity in every member."""
        for path in self._members:
            path.mark_break()

    def settle(self) -> None:
        """Run every member's deferred work."""
        for path in self._members:
            path.settle()

    def scores(self, stop: int) -> np.ndarray:
        """Return the weighted mean of the members' scores of the window before ``stop``."""
        weights = self.scoring.member_weights
        total = weights[0] * self._members[0].scores(stop)
        for w, path in zip(weights[1:], self._members[1:], strict=True):
            total = total + w * path.scores(stop)
        return total

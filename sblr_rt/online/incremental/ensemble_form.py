"""The ensemble form: every member of an ensemble model on its own fast form, scores weighted.

An ensemble (:class:`~sblr_rt.bci_model.EnsembleModel`) scores a
window as the weighted mean of its members' scores. Each member streams on the form it would take
alone (projected virtual channels for a waveform member, running band power for the power
paths, filtered samples for the covariance form), fed the same samples, so a decision
costs the sum of the members' fast steps rather than four plain pipelines. Each member's
window is the last ``n_times`` samples of its own before ``stop``: the members' windows end
together, as offline, where the ensemble's raw epoch carries the longest warm-up.

Members whose forms read filtered samples and pick and filter alike (e.g. band power
through a common average and through a surface Laplacian) share one filter bank
(:class:`~sblr_rt.online.incremental._fir_bank.SharedFilterBank`): the picked channels are
filtered once, and each member applies its spatial stage to the filtered samples, as the
offline pipeline does. Their scores equal the unshared ones to rounding.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.online.incremental._fir_bank import SharedFilterBank, filter_key
from sblr_rt.online.incremental.form import IncrementalForm, Scoring

__all__ = ["EnsembleForm"]


class EnsembleForm(IncrementalForm):
    """Feed every member's incremental form; a decision is the weighted mean of their scores.

    Parameters
    ----------
    scoring, capacity
        As for :class:`~sblr_rt.online.incremental.form.IncrementalForm`.
    share : bool
        Share one filter bank between members that pick and filter alike (False: each
        member filters on its own, the reference a test compares with).
    """

    name = "ensemble"
    features = "ensemble"

    def __init__(self, scoring: Scoring, capacity: int, *, share: bool = True) -> None:
        super().__init__(scoring, capacity)
        groups: dict[tuple, list[int]] = {}
        for k, (form, member) in enumerate(scoring.members):
            if share and form.reads_filters:
                groups.setdefault(filter_key(member.preprocessor), []).append(k)
        #: list of SharedFilterBank: one per group of two or more members filtering alike.
        self.shared_banks = []
        readers = {}
        for ks in groups.values():
            if len(ks) < 2:
                continue
            bank = SharedFilterBank(scoring.members[ks[0]][1].preprocessor)
            self.shared_banks.append(bank)
            for k in ks:
                readers[k] = bank.reader(scoring.members[k][1].preprocessor)
        # A member's form keeps as much history as the ensemble's state does.
        self._members = [
            form(member, capacity, filtered_input=readers[k])
            if k in readers
            else form(member, capacity)
            for k, (form, member) in enumerate(scoring.members)
        ]

    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples to every member's form (shared filters run once)."""
        for bank in self.shared_banks:
            bank.feed(chunk)
        for form in self._members:
            form.push(chunk)

    def skip(self, n: int) -> None:
        """Advance every member by ``n`` lost samples."""
        for form in self._members:
            form.skip(n)

    def mark_break(self) -> None:
        """Note a discontinuity in every member."""
        for form in self._members:
            form.mark_break()

    def settle(self) -> None:
        """Run every member's deferred work (a shared bank's once)."""
        for form in self._members:
            form.settle()

    def scores(self, stop: int) -> np.ndarray:
        """Return the weighted mean of the members' scores of the window before ``stop``."""
        weights = self.scoring.member_weights
        total = weights[0] * self._members[0].scores(stop)
        for w, form in zip(weights[1:], self._members[1:], strict=True):
            total = total + w * form.scores(stop)
        return total

"""The interface of a streaming feature path: samples in, scores of any recent window out.

A form owns the per-sample state of one way of computing the model's scores as samples
arrive (projected virtual channels, filtered band power, raw samples, ...). Everything
that is the same for every form (absolute sample indices, timestamps, non-finite samples,
breaks, which windows may be classified) lives in
:class:`~sblr_rt.online.streaming.StreamingState`, which drives the form.

A form computes from a :class:`Scoring`: what the
:class:`~sblr_rt.online.classifier.OnlineClassifier` knows of its model's scores (factors,
folded factors, intercept, window sizes, the offline pipeline), taken once. A form never
calls back into the classifier.

To add a form: write a subclass in a module of this package, give it a ``name`` (and, for
a model's default fast form, the preprocessor ``features`` it serves), and register it in
:mod:`sblr_rt.online.incremental` (``FORMS``). Nothing else changes.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["IncrementalForm", "Scoring", "skip_rows"]


@dataclass(frozen=True, eq=False)
class Scoring:
    """How a model's scores are computed: what an incremental form needs, and nothing else.

    Built once by :class:`~sblr_rt.online.classifier.OnlineClassifier`; its scores equal
    the classifier's (the classifier computes with the same object).

    Attributes
    ----------
    model : BCIModel
        The model: its offline pipeline (:meth:`plain_scores`) and preprocessor.
    features : str
        The model's ``features`` (``"ensemble"`` for an ensemble).
    n_channels : int
        Raw channels, in the model's order.
    n_times_raw, n_pad : int
        Samples in a raw window, of which ``n_pad`` are filter warm-up.
    weights : ndarray, shape (n_outputs, n_rows, n_times_model) | None
        ``W_k = U_k V_k^T`` on the model grid; None for an ensemble (its members have
        theirs).
    intercept : ndarray, shape (n_outputs,)
        The intercepts (an ensemble's: its members' weighted).
    rank : int
        Components per output (an ensemble's: its members' largest).
    native : tuple of ndarray | None
        The folded factors on the raw window, ``(n_channels, n_outputs * rank)`` and
        ``(n_times_raw, n_outputs * rank)``, column ``k * rank + j`` output ``k``, component
        ``j`` (read-only); None unless the preprocessing is linear (waveform, no ensemble).
    members : tuple of (type of IncrementalForm, Scoring)
        An ensemble's members, each with the incremental form it takes alone (empty
        otherwise).
    member_weights : ndarray, shape (n_members,)
        An ensemble's member weights, summing to 1 (empty otherwise).
    """

    model: Any
    features: str
    n_channels: int
    n_times_raw: int
    n_pad: int
    weights: np.ndarray | None
    intercept: np.ndarray
    rank: int
    native: tuple[np.ndarray, np.ndarray] | None = None
    members: tuple = ()
    member_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_outputs(self) -> int:
        """Scores per window: 1 for two classes, else one per class."""
        if self.weights is None:
            return self.members[0][1].n_outputs
        return self.weights.shape[0]

    @property
    def preprocessor(self):
        """The model's :class:`~sblr_rt.preprocessing.Preprocessor`."""
        return self.model.preprocessor

    def folded(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Return :attr:`native`; ValueError naming ``what`` if the model has none."""
        if self.native is None:
            raise ValueError(
                f"'{what}' needs the waveform feature path (a linear preprocessing), got "
                f"features={self.features!r}"
            )
        return self.native

    def scores_from_columns(self, cols: np.ndarray) -> np.ndarray:
        """Return the scores from the products ``u_j^T X v_j``, shape (n_outputs * rank,)."""
        return np.asarray(cols).reshape(self.n_outputs, self.rank).sum(axis=1) + self.intercept

    def scores_from_features(self, X: np.ndarray) -> np.ndarray:
        """Return ``tr(U^T X V) + b`` per output, shape (..., n_outputs).

        ``X`` is one model input (n_rows, n_times) or a stack of them (..., n_rows, n_times).
        """
        return np.einsum("kst,...st->...k", self.weights, X) + self.intercept

    def plain_scores(self, window: np.ndarray) -> np.ndarray:
        """Return the scores (n_outputs,) of one raw window by the offline pipeline.

        An ensemble's: the weighted mean of its members' scores.
        """
        if self.members:
            return np.atleast_1d(self.model.decision_function(window[None])[0])
        X = self.model.transform(window[None])[0]
        return self.scores_from_features(X)


def skip_rows(ring: RingBuffer, n: int) -> None:
    """Advance ``ring`` by ``n`` zero rows without allocating them (lost samples)."""
    if n > 0:
        rows = np.broadcast_to(np.zeros(1, ring.dtype), (n, ring.n_channels))
        ring.push(rows, None)


class IncrementalForm(abc.ABC):
    """One streaming computation of the model's scores.

    Parameters
    ----------
    scoring : Scoring
        How the model's scores are computed (:attr:`OnlineClassifier.scoring
        <sblr_rt.online.classifier.OnlineClassifier.scoring>`).
    capacity : int
        Samples of history the form must keep (at least one raw window).

    Notes
    -----
    Samples are addressed by absolute index from 0, as in the driving state: the ``k``-th
    sample pushed (or skipped) has index ``k``. The state hands the form valid samples
    only (NaN, inf and samples beyond the bound of a measurement are zeroed and
    remembered by the state), so a form never sees NaN, inf or a glitch like 1e30.
    """

    #: Name of the form (``StreamingState.form``).
    name: ClassVar[str] = ""
    #: The preprocessor ``features`` whose fast form this is (None: any model).
    features: ClassVar[str | None] = None
    #: Whether the form reads its preprocessor's filtered samples (a ``filtered_input``
    #: keyword then lets an ensemble hand it a shared filter bank's reader).
    reads_filters: ClassVar[bool] = False

    def __init__(self, scoring: Scoring, capacity: int) -> None:
        self.scoring = scoring
        self.capacity = int(capacity)

    @classmethod
    def check_model(cls, scoring: Scoring) -> None:
        """Raise ValueError if this form cannot compute the model's scores."""
        if cls.features is not None and scoring.features != cls.features:
            raise ValueError(
                f"'form'={cls.name!r} needs the {cls.features} feature path, got "
                f"features={scoring.features!r}"
            )

    @abc.abstractmethod
    def push(self, chunk: np.ndarray) -> None:
        """Append finite raw samples, shape (n_samples, n_channels), model channel order."""

    @abc.abstractmethod
    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (no window will span them)."""

    def mark_break(self) -> None:  # noqa: B027 - most forms keep no state across samples
        """Note a discontinuity before the next sample (a form with running state resets)."""

    def settle(self) -> None:  # noqa: B027 - most forms defer no work
        """Run work deferred to a moment when no decision waits (the loop calls it)."""

    @abc.abstractmethod
    def scores(self, stop: int) -> np.ndarray:
        """Return the scores, shape (n_outputs,), of the raw window ending before ``stop``.

        The driving state has checked that the window is held and whole.
        """

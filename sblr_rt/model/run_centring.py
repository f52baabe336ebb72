r"""Unsupervised run centring: each run's features measured from that run's own mean.

Between two runs of one person the features shift (electrode contact, gain, posture,
fatigue) by as much as the class effect, so a model centred on the calibration runs reads
the shift of a new run as evidence. Run centring removes it without labels (Zanini et
al., IEEE TBME 2018, re-centre each session's covariances on that session's mean; here in
the model's own feature space, which for the covariance path is the log-Euclidean
tangent space):

- calibration centres the features of every calibration run on that run's mean, so the
  model learns in the space it will be used in, and keeps the mean of the run means as
  the **calibration reference** ``m_cal``;
- a new run starts from that reference and re-estimates its own mean from its trial
  windows as they come: after ``k`` trials, ``m_k = (w m_cal + sum_i Z_i) / (w + k)``
  with ``w`` the warm-up weight in trials (recursive and causal).

The bilinear model is linear in its input, so centring the input is centring the score:
with ``s(Z)`` the score of unscaled features ``Z`` relative to the calibration reference,

.. math:: s_k^{adapted} = s(Z_k) - \frac{1}{w + k} \sum_{i \le k} (s(Z_i) - s(m_{cal})),

which the online loop computes from the scores it already has, on every path (the folded
waveform path included), and which :meth:`~sblr_rt.bci_model.BCIModel.
decision_function_run` computes offline from the same trials in the same order: a
replayed run gives the same decisions online and offline.

Examples
--------
>>> import numpy as np
>>> centring = RunCentring(reference_score=[0.5], centre_score=[0.0], warmup=1.0)
>>> state = centring.start()
>>> [float(state.step(np.array([s]))[0]) for s in (2.0, 2.0, 2.0)]  # a run shifted by +2
[1.0, 0.6666666666666667, 0.5]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sblr_rt.validation.constraints import number

__all__ = ["WARMUP_RULE", "RunCentring", "RunCentringState", "centre_runs"]

#: :attr:`RunCentring.warmup`: how many trials' worth the calibration reference counts.
WARMUP_RULE = number(lambda v: v > 0, "be a positive number of trials")


@dataclass(frozen=True)
class RunCentring:
    """The calibration reference of a run-centred model, in score units.

    Parameters
    ----------
    reference_score : array-like, shape (n_outputs,)
        ``<W, m_cal>``: what every raw score ``tr(U^T X V) + b`` loses so that it is
        measured from the calibration reference (the model was trained on centred runs).
    centre_score : array-like, shape (n_outputs,)
        The score, after that, of the calibration reference itself (the intercept as
        seen from the reference): a run whose mean sits there needs no correction.
    warmup : float
        Weight of the calibration reference in a new run's running mean, in trials.
    """

    reference_score: np.ndarray
    centre_score: np.ndarray
    warmup: float = 1.0

    def __post_init__(self):
        ref = np.asarray(self.reference_score, dtype=np.float64).reshape(-1)
        centre = np.asarray(self.centre_score, dtype=np.float64).reshape(-1)
        if ref.shape != centre.shape or ref.size == 0:
            raise ValueError(
                "'reference_score' and 'centre_score' must be non-empty and of one length "
                f"(one per model output), got {ref.shape} and {centre.shape}"
            )
        if not (np.isfinite(ref).all() and np.isfinite(centre).all()):
            raise ValueError("'reference_score' and 'centre_score' must be finite")
        object.__setattr__(self, "warmup", WARMUP_RULE.check("warmup", self.warmup))
        ref.flags.writeable = centre.flags.writeable = False
        object.__setattr__(self, "reference_score", ref)
        object.__setattr__(self, "centre_score", centre)
        object.__setattr__(self, "warmup", float(self.warmup))

    @classmethod
    def from_fit(cls, raw_score, reference: np.ndarray, warmup: float) -> RunCentring:
        """Build it from a fitted model's raw scores and the calibration reference.

        Parameters
        ----------
        raw_score : callable
            ``raw_score(Z) -> scores`` of unscaled features ``Z`` (n, n_rows, n_times):
            the scaling, then ``tr(U^T X V) + b``.
        reference : ndarray, shape (n_rows, n_times)
            The calibration reference ``m_cal`` (mean of the calibration runs' means).
        warmup : float
            See :class:`RunCentring`.

        Returns
        -------
        centring : RunCentring
        """
        pair = np.stack([reference, np.zeros_like(reference)])
        scores = np.asarray(raw_score(pair), dtype=np.float64).reshape(2, -1)
        # The score is affine in Z: the difference is <W, m_cal> (scaled), the rest the
        # score of the reference itself once that is removed.
        return cls(scores[0] - scores[1], scores[1], warmup)

    def start(self) -> RunCentringState:
        """Return the state of a new run (starting at the calibration reference)."""
        return RunCentringState(self)

    def to_dict(self) -> dict:
        """Return the JSON-serialisable form (for the model file)."""
        return {
            "reference_score": self.reference_score.tolist(),
            "centre_score": self.centre_score.tolist(),
            "warmup": self.warmup,
        }

    @classmethod
    def from_dict(cls, data) -> RunCentring:
        """Rebuild from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            If a field is missing or invalid.
        """
        if not isinstance(data, dict):
            raise ValueError(f"'run_centring' must be a mapping, got {type(data).__name__}")
        missing = {"reference_score", "centre_score", "warmup"} - set(data)
        if missing:
            raise ValueError(f"'run_centring' lacks {sorted(missing)}")
        try:
            return cls(data["reference_score"], data["centre_score"], data["warmup"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"'run_centring' is invalid: {exc}") from None


class RunCentringState:
    """The running mean of one run's trial scores (see the module notes).

    Parameters
    ----------
    centring : RunCentring
        The model's calibration reference.

    Attributes
    ----------
    n_trials : int
        Trials seen in this run.
    """

    def __init__(self, centring: RunCentring) -> None:
        self.centring = centring
        self.n_trials = 0
        self._total = np.zeros_like(centring.centre_score)

    @property
    def offset(self) -> np.ndarray:
        """What the run's scores lose now, shape (n_outputs,)."""
        return self._total / (self.centring.warmup + self.n_trials)

    def update(self, scores: np.ndarray) -> None:
        """Add one trial's scores (relative to the calibration reference) to the mean.

        Non-finite scores are ignored: a window that cannot be decided does not move it.
        """
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        if np.isfinite(scores).all():
            self._total += scores - self.centring.centre_score
            self.n_trials += 1

    def adjust(self, scores: np.ndarray) -> np.ndarray:
        """Return ``scores`` measured from the run's current mean."""
        return np.asarray(scores, dtype=np.float64) - self.offset

    def step(self, scores: np.ndarray) -> np.ndarray:
        """Update with a trial's scores, then return them adjusted (a trial decision)."""
        self.update(scores)
        return self.adjust(scores)


def centre_runs(Z: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre each run's features on that run's mean; return them and the reference.

    Parameters
    ----------
    Z : ndarray, shape (n_epochs, n_rows, n_times)
        Unscaled features.
    runs : ndarray of int, shape (n_epochs,)
        The run of each epoch.

    Returns
    -------
    Zc : ndarray, shape (n_epochs, n_rows, n_times)
        Every run's epochs minus that run's mean epoch.
    reference : ndarray, shape (n_rows, n_times)
        The mean of the runs' means: the calibration reference.

    Examples
    --------
    >>> Z = np.array([1.0, 3.0, 10.0, 14.0]).reshape(4, 1, 1)
    >>> Zc, ref = centre_runs(Z, np.array([0, 0, 1, 1]))
    >>> Zc.ravel().tolist(), float(ref[0, 0])
    ([-1.0, 1.0, -2.0, 2.0], 7.0)
    """
    runs = np.asarray(runs)
    if runs.shape != (len(Z),):
        raise ValueError(f"'runs' must hold one run per epoch ({len(Z)}), got {runs.shape}")
    Zc = np.array(Z, dtype=np.float64, copy=True)
    means = []
    for run in np.unique(runs):
        idx = runs == run
        mean = Zc[idx].mean(axis=0)
        Zc[idx] -= mean
        means.append(mean)
    return Zc, np.mean(means, axis=0)

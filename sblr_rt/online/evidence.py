"""Evidence accumulated over a trial: smoothed probabilities and early decisions.

A single window's probability is noisy; feedback and dynamic stopping read the evidence
accumulated since the cue instead. :class:`Evidence` keeps, per class, the log-probability
of the decisions seen (for two classes this is the log-odds, up to a constant that the
normalisation removes) and smooths it in one of two ways:

- ``"ema"``: an exponential moving average over the decisions' stream time with time
  constant ``tau`` seconds: a decision ``dt`` seconds after the previous one weighs
  ``1 - exp(-dt / tau)``, so the weights do not depend on the hop;
- ``"mean"``: the cumulative mean since the cue (every decision weighs the same).

The smoothed probability is the softmax of the smoothed log-probabilities. A cue resets
the evidence to the decisions whose window ends at or after it (the few recent ones are
kept, so a marker that arrives after them still counts them). With ``early = P``, the
first decision after a cue (at least ``early_after`` seconds after it) whose smoothed
probability of one class reaches ``P`` decides the trial (dynamic stopping).

With a :class:`~sblr_rt.model.link.ProbabilityCalibration` (the model's), a window that
ends ``e`` seconds after the open trial's cue counts with its calibrated probabilities:
the decision's (calibrated at the trial window, sharpness ``a(tmax)``) raised to
``a(e) / a(tmax)`` and normalised, so that a window ending early, which holds less of the
imagery, weighs less, and an early decision at ``P`` is right about ``P`` of the time.

Pure numpy, no LSL: :class:`~sblr_rt.online.scheduler.Scheduler` feeds it.
"""

from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np

from sblr_rt.model.link import ProbabilityCalibration
from sblr_rt.validation.constraints import number, option

__all__ = ["SMOOTHING", "SMOOTHING_RULES", "Evidence", "Smoothing", "check_smoothing"]

#: Values of :attr:`Smoothing.method`.
SMOOTHING = ("none", "ema", "mean")
#: What each smoothing setting accepts, by the name the command line and the calibration's
#: configuration give it (:mod:`sblr_rt.validation.constraints`); the ranges of ``--tau``
#: and ``--early-after``.
SMOOTHING_RULES = {
    "smoothing": option(*SMOOTHING),
    "tau": number(limit="seconds"),
    "early": number(lambda v: 0 < v < 1, "be a probability in (0, 1)", none=True),
    "early_after": number(limit="seconds", low_open=False),
}

#: Probabilities are clipped to [_FLOOR, 1] before the log: one window at 0 or 1 must not
#: outweigh every other.
_FLOOR = 1e-6


@dataclasses.dataclass(frozen=True)
class Smoothing:
    """How the online loop accumulates evidence over a trial.

    Parameters
    ----------
    method : {"none", "ema", "mean"}
        ``"none"``: the smoothed probability is the window's own; ``"ema"``: exponential
        moving average of the log-probabilities with time constant ``tau``; ``"mean"``:
        their mean since the cue.
    tau : float
        Time constant of ``"ema"`` in seconds of stream time (> 0).
    early : float | None
        Decide a trial as soon as the smoothed probability of one class reaches this
        value (in (0, 1)); None: at ``tmax`` only.
    early_after : float
        Seconds of stream time after the cue before an early decision may be taken
        (>= 0): the sliding windows that end just after the cue hold mostly the EEG from
        before it.
    """

    method: str = "none"
    tau: float = 1.0
    early: float | None = None
    early_after: float = 0.0

    def __post_init__(self):
        # each field by the rule of the setting that names it (``method`` is ``smoothing``)
        for setting, field in (("smoothing", "method"), ("tau", "tau"), ("early", "early"),
                               ("early_after", "early_after")):  # fmt: skip
            value = SMOOTHING_RULES[setting].check(setting, getattr(self, field))
            object.__setattr__(self, field, value)

    def override(self, *, method=None, tau=None, early=None, early_after=None) -> Smoothing:
        """Return a copy with the values given (a command line's options) in place.

        Parameters
        ----------
        method, tau, early, early_after
            As the fields; None leaves a field as it is, and ``early="off"`` turns off
            the early decisions this smoothing sets.

        Returns
        -------
        smoothing : Smoothing
        """
        given = {"method": method, "tau": tau, "early": early, "early_after": early_after}
        changes = {k: v for k, v in given.items() if v is not None}
        if changes.get("early") == "off":
            changes["early"] = None
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """Return a short description for logs and status lines."""
        text = {"none": "no smoothing", "mean": "mean since the cue"}.get(
            self.method, f"EMA of the log-odds, tau {self.tau:g} s"
        )
        if self.early is not None:
            text += f", early decisions at p >= {self.early:g}"
            if self.early_after:
                text += f" from {self.early_after:g} s after the cue"
        return text


def check_smoothing(smoothing, classifier, mode: str, hop: float) -> Smoothing:
    """Return the loop's :class:`Smoothing`: given, or the model's run configuration's.

    Parameters
    ----------
    smoothing : Smoothing | None
        The loop's; None: ``classifier.run_info.smoothing``.
    classifier : OnlineClassifier
        Its ``run_info`` and ``classes``.
    mode : str
        The loop's mode.
    hop : float
        The loop's hop in seconds.

    Returns
    -------
    smoothing : Smoothing

    Raises
    ------
    TypeError
        If ``smoothing`` is neither a :class:`Smoothing` nor None.
    ValueError
        If ``early`` is set but the loop makes no trial decisions (``mode`` sliding), or
        no sliding ones to decide early on (``hop`` 0), or ``early`` is not above chance.
    """
    if smoothing is None:
        smoothing = classifier.run_info.smoothing
    if not isinstance(smoothing, Smoothing):
        raise TypeError(f"'smoothing' must be a Smoothing or None, got {type(smoothing).__name__}")
    early = smoothing.early
    if early is not None:
        if mode != "trial":
            raise ValueError(f"'early' decides trials: it needs mode='trial', got {mode!r}")
        if not hop > 0:
            raise ValueError(
                "'early' decides a trial on the sliding decisions after its cue: it needs "
                f"'hop' > 0, got {hop!r}"
            )
        chance = 1.0 / len(classifier.classes)
        if not early > chance:
            raise ValueError(
                f"'early' must exceed chance (1/{len(classifier.classes)} = {chance:.3g}), "
                f"got {early}"
            )
    return smoothing


class Evidence:
    """The evidence of the current trial, fed one decision at a time.

    Parameters
    ----------
    classes : sequence of str
        The class labels, in the order of the decisions' ``proba``.
    smoothing : Smoothing
        How to accumulate.
    history : int
        Recent decisions kept to be counted by a cue that arrives after them.
    calibration : ProbabilityCalibration | None
        The model's (:attr:`~sblr_rt.bci_model.BCIModel.probability`): the windows of an
        open trial count with the sharpness of their end relative to its cue. None: as
        their probabilities are.

    Examples
    --------
    >>> ev = Evidence(["left", "right"], Smoothing("mean"))
    >>> ev.cue(10.0, "left")
    >>> ev.observe({"proba": {"left": 0.8, "right": 0.2}, "window_end": 10.1, "trial": False})
    >>> ev.observe({"proba": {"left": 0.4, "right": 0.6}, "window_end": 10.2, "trial": False})
    >>> ev.smoothed
    {'left': 0.620204, 'right': 0.379796}
    """

    def __init__(
        self,
        classes,
        smoothing: Smoothing | None = None,
        *,
        history: int = 256,
        calibration: ProbabilityCalibration | None = None,
    ):
        self.classes = [str(c) for c in classes]
        if calibration is not None and not isinstance(calibration, ProbabilityCalibration):
            raise TypeError(
                "'calibration' must be a ProbabilityCalibration or None, got "
                f"{type(calibration).__name__}"
            )
        self.calibration = calibration
        self.smoothing = Smoothing() if smoothing is None else smoothing
        if not isinstance(self.smoothing, Smoothing):
            raise TypeError(
                f"'smoothing' must be a Smoothing, got {type(self.smoothing).__name__}"
            )
        self._recent: collections.deque = collections.deque(maxlen=int(history))
        self._state: np.ndarray | None = None  # EMA, or sum for the mean
        self._n = 0
        self._t: float | None = None
        self.trial: tuple[float, str] | None = None  # (t_cue, value) of the open trial
        self._upcoming: list[tuple[float, str]] = []  # cues the decisions did not reach

    # ------------------------------------------------------------------------------------
    def cue(self, t_cue: float, value) -> None:
        """Announce a trial starting at ``t_cue``.

        The trial opens when the decisions reach ``t_cue`` (at once if they already did:
        a marker that arrives late still counts the decisions since its cue). Opening it
        restarts the evidence from the decisions whose window ends at or after the cue,
        and closes an open trial that was not decided yet.
        """
        self._upcoming.append((float(t_cue), value))
        self._upcoming.sort(key=lambda cue: cue[0])
        if self._recent:
            self._open_due(self._recent[-1][0])

    def forget(self, t_cue: float, value) -> None:
        """Drop a cue that gets no trial decision (the loop refused its time or window)."""
        cue = (float(t_cue), value)
        self._upcoming = [c for c in self._upcoming if c != cue]
        if self.trial == cue:
            self.trial = None

    def _open_due(self, t: float) -> None:
        while self._upcoming and self._upcoming[0][0] <= t:
            self.trial = self._upcoming.pop(0)
            self._state, self._n, self._t = None, 0, None
            for t_seen, logp in self._recent:
                if t_seen >= self.trial[0]:
                    self._accumulate(logp, t_seen)

    def observe(self, decision: dict) -> tuple[float, str] | None:
        """Add a decision's evidence; write ``proba_smoothed`` and ``early`` into it.

        Parameters
        ----------
        decision : dict
            ``proba``, ``window_end``, ``trial`` (and ``cue``); changed in place.

        Returns
        -------
        trial : (float, str) | None
            See :meth:`add`.
        """
        smoothed, trial = self.add(decision)
        decision.setdefault("early", False)
        decision["proba_smoothed"] = smoothed
        return trial

    def add(self, decision) -> tuple[dict[str, float], tuple[float, str] | None]:
        """Add a decision's evidence; return the smoothed probability and any early trial.

        Sliding decisions update the evidence. A trial decision reads it (its window is
        counted in ``proba_smoothed`` without being stored: the sliding decisions around
        it already saw the same samples) and closes the trial.

        Parameters
        ----------
        decision : Decision | Mapping
            ``proba``, ``window_end``, ``trial`` (and ``cue``); not changed.

        Returns
        -------
        proba_smoothed : dict
            ``{class: probability}`` of the evidence with this decision.
        trial : (float, str) | None
            The open trial's ``(t_cue, value)`` when this sliding decision decides it
            early (``smoothing.early`` reached); None otherwise.
        """
        logp = self._log(decision["proba"])
        t = decision.get("window_end")
        t = math.nan if t is None else float(t)
        if decision.get("trial"):
            smoothed = self._proba(self._value(*self._combined(logp, t)))
            if self.trial is not None and decision.get("cue") == self.trial[1]:
                self.trial = None
            else:  # decided before the decisions reached its cue
                self._upcoming = [c for c in self._upcoming if c[1] != decision.get("cue")]
            return smoothed, None
        self._open_due(t)  # first: a cue opened now counts this decision below
        self._recent.append((t, logp))
        if self.trial is None or t >= self.trial[0]:
            self._accumulate(logp, t)
        # a window ending before the open trial's cue has no evidence but its own
        smoothed = self._proba(logp if self._state is None else self._value())
        early = self.smoothing.early
        if early is None or self.trial is None:
            return smoothed, None
        if not t - self.trial[0] >= self.smoothing.early_after:
            return smoothed, None
        if max(smoothed.values()) >= early:
            trial, self.trial = self.trial, None
            return smoothed, trial
        return smoothed, None

    @property
    def smoothed(self) -> dict[str, float] | None:
        """The smoothed probabilities now (rounded for display), None before any decision."""
        if self._state is None:
            return None
        return {c: round(p, 6) for c, p in self._proba(self._value()).items()}

    # ------------------------------------------------------------------------------------
    def _log(self, proba: dict) -> np.ndarray:
        p = np.array([float(proba[c]) for c in self.classes])
        return np.log(np.clip(p, _FLOOR, 1.0))

    def _factor(self, t: float) -> float:
        """Return the power on the probabilities of a window ending at ``t`` in the trial."""
        cal = self.calibration
        if cal is None or self.trial is None or not math.isfinite(t):
            return 1.0
        if not cal.trial > 0:  # every window at chance already
            return 1.0
        return cal.sharpness_at(t - self.trial[0]) / cal.trial

    def _combined(self, logp, t) -> tuple[np.ndarray, int]:
        """Return the state and count with ``logp`` at ``t`` added, without storing them."""
        factor = self._factor(t)
        if factor != 1.0:
            logp = factor * logp
        method = self.smoothing.method
        if method == "none" or self._state is None:
            return logp, 1
        if method == "mean":
            return self._state + logp, self._n + 1
        dt = t - self._t if math.isfinite(t) and self._t is not None else 0.0
        weight = -math.expm1(-max(dt, 0.0) / self.smoothing.tau)
        return self._state + weight * (logp - self._state), self._n + 1

    def _accumulate(self, logp, t) -> None:
        self._state, self._n = self._combined(logp, t)
        self._t = t if math.isfinite(t) else self._t

    def _value(self, state=None, n=None) -> np.ndarray:
        """Return the smoothed log-probabilities of a state (default the stored one)."""
        if state is None:
            state, n = self._state, self._n
        return state / n if self.smoothing.method == "mean" else state

    def _proba(self, value) -> dict[str, float]:
        z = np.exp(value - value.max())
        z /= z.sum()
        return dict(zip(self.classes, z.tolist(), strict=True))

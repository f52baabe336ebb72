"""Scores of decided trials: accuracy against chance, agreement, confusion, bit rate.

One function, :func:`score_trials`, turns the true and the decided class of each trial into
a :class:`Score`; ``sblr-rt run`` sums a session up with it and ``sblr-rt evaluate`` scores
a model on labelled recordings with it, so both say the same things in the same words.

The numbers
-----------
accuracy, balanced accuracy, Cohen's kappa, confusion matrix
    :mod:`sklearn.metrics` (``accuracy_score``, ``balanced_accuracy_score``,
    ``cohen_kappa_score``, ``confusion_matrix``), rows the true class, columns the decided
    one, in the model's class order.
interval
    The Wilson score interval (95%) of the accuracy
    (:func:`accuracy_interval`).
guessing, chance level
    Guessing is ``1 / n_classes``; the chance level is the accuracy that guessing exceeds
    with probability below 0.05 on this many trials
    (:func:`chance_level`, Combrisson and Jerbi 2015): an accuracy above
    it is significant. ``p_value`` is the one-sided binomial test of the number correct
    against guessing.
information transfer rate
    Wolpaw et al. (1998), in bits per trial (:func:`wolpaw_bits`), and in bits per minute
    when the seconds per trial are known.

Trials with no decision (``None``: a window the loop refused) are counted apart
(``n_undecided``) and left out of every figure.

Examples
--------
>>> s = score_trials(["l", "l", "r", "r"], ["l", "r", "r", "r"], ["l", "r"])
>>> s.n_correct, s.accuracy, s.balanced_accuracy
(3, 0.75, 0.75)
>>> s.confusion
((1, 1), (0, 2))
>>> round(wolpaw_bits(0.8, 2), 3)
0.278
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ALPHA",
    "Score",
    "above_chance",
    "accuracy_interval",
    "chance_level",
    "correct_needed",
    "score_trials",
    "wolpaw_bits",
]

#: Significance level of the chance level.
ALPHA = 0.05


def chance_level(
    n_trials: int, n_classes: int, *, alpha: float = ALPHA, n_candidates: int = 1
) -> float:
    """Return the accuracy that chance exceeds with probability below ``alpha``.

    Parameters
    ----------
    n_trials : int
        Trials the accuracy was measured on.
    n_classes : int
        Classes (chance is ``1 / n_classes`` per trial).
    alpha : float
        Significance level.
    n_candidates : int
        How many candidates the accuracy is the best of (Bonferroni: ``alpha /
        n_candidates``).

    Returns
    -------
    level : float
        ``binom.ppf(1 - alpha / n_candidates, n_trials, 1 / n_classes) / n_trials``: an
        accuracy above it is significant at ``alpha``.
    """
    n_trials, n_classes, n_candidates = int(n_trials), int(n_classes), int(n_candidates)
    if n_trials < 1 or n_classes < 2 or n_candidates < 1:
        raise ValueError(
            "'n_trials' and 'n_candidates' must be >= 1 and 'n_classes' >= 2, got "
            f"n_trials={n_trials}, n_classes={n_classes}, n_candidates={n_candidates}"
        )
    if not 0 < alpha < 1:
        raise ValueError(f"'alpha' must lie in (0, 1), got {alpha}")
    from scipy import stats

    q = 1.0 - alpha / n_candidates
    return float(stats.binom.ppf(q, n_trials, 1.0 / n_classes)) / n_trials


def above_chance(accuracy: float | None, n_trials: int, n_classes: int) -> bool | None:
    """Return whether one candidate's own CV accuracy exceeds :func:`chance_level`.

    The rule a member of the default (``features="auto"``) model must pass to be kept, and
    the one :class:`~sblr_rt.bci_model.verdict.MemberVerdict` reports.

    Parameters
    ----------
    accuracy : float | None
        The candidate's CV accuracy (None: unknown).
    n_trials, n_classes : int
        As for :func:`chance_level` (one candidate: ``n_candidates=1``).

    Returns
    -------
    above : bool | None
        None when ``accuracy`` is None or not finite, or ``n_trials`` is 0.

    Examples
    --------
    >>> above_chance(0.6, 30, 2), above_chance(0.7, 30, 2)
    (False, True)
    """
    if accuracy is None or not np.isfinite(accuracy) or int(n_trials) < 1:
        return None
    return bool(accuracy > chance_level(n_trials, n_classes))


def accuracy_interval(
    accuracy: float, n_trials: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Return the Wilson score interval of an accuracy measured on ``n_trials`` trials.

    Parameters
    ----------
    accuracy : float
        Fraction correct, in [0, 1] (a mean over CV repeats need not be a multiple of
        ``1 / n_trials``).
    n_trials : int
        Trials.
    confidence : float
        Coverage of the interval.

    Returns
    -------
    low, high : float
        Equal to ``scipy.stats.binomtest(k, n).proportion_ci(confidence,
        method="wilson")`` for ``accuracy = k / n``.
    """
    if not 0.0 <= accuracy <= 1.0:
        raise ValueError(f"'accuracy' must lie in [0, 1], got {accuracy}")
    if int(n_trials) < 1:
        raise ValueError(f"'n_trials' must be >= 1, got {n_trials}")
    from scipy import stats

    n = float(n_trials)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    centre = (accuracy + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def correct_needed(n_trials: int, n_classes: int) -> int:
    """Return the fewest correct of ``n_trials`` that beat chance at p < 0.05.

    The smallest count above :func:`chance_level` (at most ``n_trials``:
    when chance reaches 1, no count beats it and ``n_trials`` is returned).

    Examples
    --------
    >>> correct_needed(15, 2), correct_needed(30, 2)
    (12, 20)
    """
    level = chance_level(n_trials, n_classes)
    return min(int(n_trials), math.floor(level * n_trials + 1e-9) + 1)


def wolpaw_bits(accuracy: float, n_classes: int) -> float:
    r"""Return the bits per trial of Wolpaw's information transfer rate.

    .. math:: B = \log_2 N + P \log_2 P + (1 - P) \log_2 \frac{1 - P}{N - 1}

    Parameters
    ----------
    accuracy : float
        Fraction correct ``P``, in [0, 1].
    n_classes : int
        Classes ``N`` (>= 2).

    Returns
    -------
    bits : float
        0 at or below guessing (``P <= 1 / N``), where the formula does not apply.
    """
    if not 0.0 <= accuracy <= 1.0:
        raise ValueError(f"'accuracy' must lie in [0, 1], got {accuracy}")
    if int(n_classes) < 2:
        raise ValueError(f"'n_classes' must be >= 2, got {n_classes}")
    n, p = int(n_classes), float(accuracy)
    if p <= 1.0 / n:
        return 0.0
    bits = math.log2(n) + p * math.log2(p)
    if p < 1.0:
        bits += (1 - p) * math.log2((1 - p) / (n - 1))
    return bits


@dataclass(frozen=True)
class Score:
    """The scores of a set of decided trials (see :func:`score_trials`).

    Attributes
    ----------
    classes : tuple of str
        The classes, in the order of ``confusion``'s rows and columns.
    n_trials : int
        Trials decided (those scored).
    n_correct : int
        Trials decided right.
    n_undecided : int
        Trials given no decision (left out of every figure).
    accuracy, balanced_accuracy, kappa : float
        NaN with no trial.
    interval : tuple of float
        95% Wilson interval of ``accuracy`` (NaN, NaN with no trial).
    guessing : float
        ``1 / n_classes``.
    chance_level : float
        The accuracy an above-chance classifier must exceed on ``n_trials`` trials at
        p < 0.05 (NaN with no trial).
    p_value : float
        One-sided binomial test of ``n_correct`` against ``guessing``.
    confusion : tuple of tuple of int
        Rows: true class; columns: decided class.
    bits_per_trial : float
        Wolpaw's information transfer rate (NaN with no trial).
    seconds_per_trial : float | None
        Seconds from one trial to the next, when known.
    """

    classes: tuple[str, ...]
    n_trials: int
    n_correct: int
    n_undecided: int
    accuracy: float
    balanced_accuracy: float
    kappa: float
    interval: tuple[float, float]
    guessing: float
    chance_level: float
    p_value: float
    confusion: tuple[tuple[int, ...], ...]
    bits_per_trial: float
    seconds_per_trial: float | None = None

    @property
    def above_chance(self) -> bool:
        """Whether the accuracy exceeds :attr:`chance_level`."""
        return bool(self.n_trials and self.accuracy > self.chance_level)

    @property
    def bits_per_minute(self) -> float | None:
        """Wolpaw's rate per minute (None when :attr:`seconds_per_trial` is unknown)."""
        if self.seconds_per_trial is None or not self.seconds_per_trial > 0:
            return None
        return self.bits_per_trial * 60.0 / self.seconds_per_trial

    @property
    def n_correct_needed(self) -> int | None:
        """The fewest correct of :attr:`n_trials` that beat :attr:`chance_level` (None: none)."""
        return correct_needed(self.n_trials, len(self.classes)) if self.n_trials else None

    def lines(self) -> list[str]:
        """Return the scores as lines for a terminal: accuracy, chance, agreement, confusion.

        Returns
        -------
        lines : list of str
        """
        undecided = f" ({self.n_undecided} more given no decision)" if self.n_undecided else ""
        if not self.n_trials:
            return [f"trials: none scored{undecided}"]
        low, high = self.interval
        need = self.n_correct_needed
        if self.chance_level >= 1.0:
            needed = f"{self.n_trials} trial(s) are too few to beat chance at p < 0.05"
        else:
            needed = (
                f"above chance at p < 0.05 takes {need} of {self.n_trials} correct "
                f"({need / self.n_trials:.3f}, beating the chance level {self.chance_level:.3f})"
            )
        word = "above chance" if self.above_chance else "not above chance"
        rate = "" if self.bits_per_minute is None else f", {self.bits_per_minute:.2f} bits/min"
        return [
            f"trials: {self.n_trials} decided{undecided}, {self.n_correct} correct",
            f"accuracy {self.accuracy:.3f} (95% interval {low:.3f}-{high:.3f}): {word} "
            f"(binomial p = {self.p_value:.2g} against guessing {self.guessing:.2f}); {needed}",
            f"balanced accuracy {_fmt(self.balanced_accuracy)}, Cohen's kappa "
            f"{_fmt(self.kappa)}; information transfer rate {_fmt(self.bits_per_trial)} "
            f"bits/trial{rate} (Wolpaw)",
            *self.confusion_lines(),
        ]

    def confusion_lines(self) -> list[str]:
        """Return the confusion matrix as aligned lines (rows true, columns decided)."""
        names = [str(c) for c in self.classes]
        first = max(len("true \\ decided"), *(len(c) for c in names)) + 2
        width = max(6, *(len(c) for c in names)) + 2
        head = "true \\ decided".ljust(first) + "".join(c.rjust(width) for c in names)
        rows = [
            c.ljust(first) + "".join(str(v).rjust(width) for v in row)
            for c, row in zip(names, self.confusion, strict=True)
        ]
        return ["confusion matrix:", *("  " + line for line in (head, *rows))]

    def to_dict(self) -> dict:
        """Return the scores as JSON-ready values (``bits_per_minute`` included)."""

        def num(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "classes": list(self.classes),
            "n_trials": self.n_trials,
            "n_correct": self.n_correct,
            "n_undecided": self.n_undecided,
            "accuracy": num(self.accuracy),
            "interval_95": [num(x) for x in self.interval],
            "guessing": num(self.guessing),
            "chance_level": num(self.chance_level),
            "n_correct_needed": self.n_correct_needed,
            "above_chance": self.above_chance,
            "p_value": num(self.p_value),
            "balanced_accuracy": num(self.balanced_accuracy),
            "kappa": num(self.kappa),
            "confusion": [list(row) for row in self.confusion],
            "bits_per_trial": num(self.bits_per_trial),
            "seconds_per_trial": num(self.seconds_per_trial),
            "bits_per_minute": num(self.bits_per_minute),
        }


def _fmt(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "n/a"


def score_trials(
    y_true: Sequence[str],
    y_pred: Sequence[str | None],
    classes: Sequence[str],
    *,
    seconds_per_trial: float | None = None,
) -> Score:
    """Score decided trials against their true classes.

    Parameters
    ----------
    y_true : sequence of str
        Each trial's true class, one of ``classes``.
    y_pred : sequence of str | None
        Each trial's decided class; None for a trial given no decision.
    classes : sequence of str
        The model's classes (>= 2), in its order.
    seconds_per_trial : float | None
        Seconds from one trial to the next, for the bit rate per minute.

    Returns
    -------
    score : Score

    Raises
    ------
    ValueError
        If the lengths differ, fewer than two classes are given, or a label is not one of
        ``classes``.
    """
    from scipy import stats
    from sklearn import metrics

    classes = tuple(str(c) for c in classes)
    if len(classes) < 2:
        raise ValueError(f"'classes' must name at least 2 classes, got {list(classes)}")
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"'y_true' and 'y_pred' must have one entry per trial, got {len(y_true)} and "
            f"{len(y_pred)}"
        )
    decided = [(str(t), str(p)) for t, p in zip(y_true, y_pred, strict=True) if p is not None]
    seen = {str(x) for x in y_true} | {str(x) for x in y_pred if x is not None}
    unknown = sorted(seen - set(classes))
    if unknown:
        raise ValueError(f"labels must be among the classes {list(classes)}, got {unknown}")
    n, n_undecided = len(decided), len(y_true) - len(decided)
    guessing = 1.0 / len(classes)
    if n == 0:
        nan = float("nan")
        zeros = tuple(tuple(0 for _ in classes) for _ in classes)
        return Score(classes, 0, 0, n_undecided, nan, nan, nan, (nan, nan), guessing, nan,
                     nan, zeros, nan, seconds_per_trial)  # fmt: skip
    t = np.array([p[0] for p in decided], dtype=object)
    p = np.array([p[1] for p in decided], dtype=object)
    k = int(np.sum(t == p))
    accuracy = k / n
    with warnings.catch_warnings():  # a class decided but never true: sklearn's rule holds
        warnings.simplefilter("ignore")
        # balanced accuracy: the mean recall over the classes the trials hold
        balanced = float(metrics.balanced_accuracy_score(t, p))
        kappa = float(metrics.cohen_kappa_score(t, p, labels=list(classes)))
    confusion = metrics.confusion_matrix(t, p, labels=list(classes))
    return Score(
        classes=classes,
        n_trials=n,
        n_correct=k,
        n_undecided=n_undecided,
        accuracy=accuracy,
        balanced_accuracy=balanced,
        kappa=kappa if math.isfinite(kappa) else float("nan"),
        interval=accuracy_interval(accuracy, n),
        guessing=guessing,
        chance_level=chance_level(n, len(classes)),
        p_value=float(stats.binomtest(k, n, guessing, alternative="greater").pvalue),
        confusion=tuple(tuple(int(v) for v in row) for row in confusion),
        bits_per_trial=wolpaw_bits(accuracy, len(classes)),
        seconds_per_trial=None if seconds_per_trial is None else float(seconds_per_trial),
    )

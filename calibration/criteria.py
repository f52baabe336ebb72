"""Selection criteria: what the search keeps of a fitted point, and how it ranks points.

A criterion is pluggable into the selection engine (:mod:`.search`). It says what to
observe of a point fitted on a training fold (its labels or its class probabilities on
the fold's test epochs), how to summarise those observations over the folds (and the CV
repetitions) into a row of figures, and which figure ranks the points (its ``loss``,
lower is better).

:class:`Accuracy`
    The mean test accuracy over the folds (and its spread), the paper's criterion.
:class:`LogLoss`
    The out-of-fold log-loss: the probabilities of every epoch's held-out prediction,
    pooled over the folds of one repetition and averaged over repetitions. It scores the
    calibrated probability of every epoch, so it separates candidates where accuracy on a
    handful of test epochs ties (``features="auto"``).

Both rank with one rule (:func:`best_point`): the lowest loss, ties broken towards the
most regularised point (largest l1 fractions, then largest l2 penalties, then the
smallest rank).
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

__all__ = ["CRITERIA", "Accuracy", "Criterion", "LogLoss", "best_point"]

#: Two losses closer than this are a tie (:func:`best_point`).
TIE = 1e-12


class Criterion:
    """What the search observes of a fitted point, and how it scores the observations."""

    #: The name the report gives.
    name = ""
    #: Whether the observations are class probabilities (else predicted labels).
    probabilistic = False

    def observe(self, estimator, X) -> np.ndarray:
        """Return what is kept of ``estimator`` on a fold's scaled test epochs ``X``."""
        raise NotImplementedError

    def fold_score(self, observed: np.ndarray, y: np.ndarray) -> float:
        """Return the fold's accuracy from its observations (racing compares these)."""
        raise NotImplementedError

    def summarise(self, observed: list, y: np.ndarray, splits: list, n_repeats: int) -> dict:
        """Summarise one point's observations over every split.

        Parameters
        ----------
        observed : list of ndarray
            ``observed[i]``: the observation on split ``i``'s test epochs.
        y : ndarray of int
            Every epoch's class index.
        splits : list of (ndarray, ndarray)
            The (train, test) indices, ``n_repeats`` repetitions of the same number of folds
            one after the other.
        n_repeats : int
            CV repetitions in ``splits``.

        Returns
        -------
        row : dict
            ``loss`` (what ranks points, lower is better), ``accuracy``, ``accuracy_std``
            and ``log_loss`` (None when the criterion does not observe probabilities).
        """
        raise NotImplementedError


class Accuracy(Criterion):
    """The mean test accuracy over the folds, the paper's criterion.

    Observes the predicted labels; ``accuracy_std`` is the spread over the folds.
    """

    name = "accuracy"

    def observe(self, estimator, X) -> np.ndarray:
        """Return the labels predicted for ``X`` (checked once per fold, not here)."""
        return estimator.predict(X, check_input=False)

    def fold_score(self, observed, y) -> float:
        """Return the fold's test accuracy."""
        return float(accuracy_score(y, observed))

    def summarise(self, observed, y, splits, n_repeats) -> dict:
        """Mean and spread over every split of the test accuracy (see :class:`Criterion`)."""
        folds = np.array(
            [self.fold_score(o, y[test]) for o, (_, test) in zip(observed, splits, strict=True)]
        )
        mean = float(folds.mean())
        return {"loss": -mean, "accuracy": mean, "accuracy_std": float(folds.std()),
                "log_loss": None}  # fmt: skip


class LogLoss(Criterion):
    """The out-of-fold log-loss, pooled over each repetition's folds, mean over repetitions.

    Observes the class probabilities; ``accuracy`` is the pooled accuracy of their arg max
    (mean over repetitions) and ``accuracy_std`` the spread of the folds' accuracies.
    """

    name = "log-loss"
    probabilistic = True

    def observe(self, estimator, X) -> np.ndarray:
        """Return the class probabilities of ``X`` (checked once per fold, not here)."""
        return estimator.predict_proba(X, check_input=False)

    def fold_score(self, observed, y) -> float:
        """Return the fold's test accuracy of the most probable class."""
        return float(np.mean(np.argmax(observed, axis=1) == y))

    def summarise(self, observed, y, splits, n_repeats) -> dict:
        """Pooled log-loss and accuracy per repetition, their mean (see :class:`Criterion`)."""
        pooled = pool(observed, splits, len(y), n_repeats)
        scores = [pooled_scores(P, y) for P in pooled]
        folds = [
            self.fold_score(o, y[test]) for o, (_, test) in zip(observed, splits, strict=True)
        ]
        loss = float(np.mean([s["log_loss"] for s in scores]))
        return {
            "loss": loss,
            "accuracy": float(np.mean([s["accuracy"] for s in scores])),
            "accuracy_std": float(np.std(folds)),
            "log_loss": loss,
        }


def pool(observed: list, splits: list, n_epochs: int, n_repeats: int) -> list[np.ndarray]:
    """Gather each repetition's out-of-fold probabilities into one array per repetition."""
    n_folds = len(splits) // n_repeats
    pooled = [np.full((n_epochs, observed[0].shape[1]), np.nan) for _ in range(n_repeats)]
    for i, (o, (_, test)) in enumerate(zip(observed, splits, strict=True)):
        pooled[i // n_folds][test] = o
    return pooled


def pooled_scores(proba: np.ndarray, y: np.ndarray, *, auc: bool = False) -> dict:
    """Log-loss, accuracy and (``auc=True``) AUC of one repetition's pooled probabilities.

    The AUC is :func:`sklearn.metrics.roc_auc_score` (one class against the rest, macro
    mean, for more than two classes).
    """
    labels = np.arange(proba.shape[1])
    out = {
        "log_loss": float(log_loss(y, np.clip(proba, 1e-12, 1.0), labels=labels)),
        "accuracy": float(np.mean(np.argmax(proba, axis=1) == y)),
    }
    if auc and proba.shape[1] == 2:
        out["auc"] = float(roc_auc_score(y, proba[:, 1]))
    elif auc:
        out["auc"] = float(roc_auc_score(y, proba, multi_class="ovr", labels=labels))
    return out


def best_point(rows: list[dict]) -> int:
    """Return the index of the best row: the lowest ``loss``, ties the most regularised.

    Rows flagged ``"unbounded"`` are never chosen. A tie (losses within :data:`TIE`) goes
    to the largest l1 fractions, then the largest l2 penalties, then the smallest rank,
    then the first listed.

    Parameters
    ----------
    rows : list of dict
        Rows with ``loss``, ``rank``, ``mu1_fraction``, ``nu1_fraction``, ``mu2``, ``nu2``.

    Returns
    -------
    index : int
    """
    losses = np.array([np.inf if r.get("unbounded") else r["loss"] for r in rows])
    top = np.flatnonzero(losses <= losses.min() + TIE)
    return int(
        min(
            top,
            key=lambda i: (
                -(rows[i]["mu1_fraction"] + rows[i]["nu1_fraction"]),
                -(rows[i]["mu2"] + rows[i]["nu2"]),
                rows[i]["rank"],
                i,
            ),
        )
    )


#: Every criterion by the name a configuration gives.
CRITERIA: dict[str, type[Criterion]] = {"accuracy": Accuracy, "log-loss": LogLoss}

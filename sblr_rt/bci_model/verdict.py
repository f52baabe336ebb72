"""A verdict on a calibrated model: is it above chance, how sure, and what it reads.

What the person at the controls needs from a model is not a bare CV accuracy but what
that accuracy means for this number of trials: its interval, the accuracy that chance
alone reaches, a word for it, a warning when the weight lies on the eyes, the rank the
model actually uses and, for a weak model, what to try next. :func:`model_verdict` reads
all of that from a model and its metadata; ``calibrate``'s report, ``sblr-rt inspect``
(:meth:`BCIModel.summary <sblr_rt.bci_model.BCIModel.summary>`) and the dashboard print
:meth:`Verdict.lines`.

The numbers
-----------
interval
    The Wilson score interval (95%) of the CV accuracy over the ``n_trials`` distinct
    epochs (repeated CV scores each epoch more than once, but they are still ``n_trials``
    observations).
chance level
    The binomial bound of Combrisson and Jerbi (2015): the accuracy that a classifier
    guessing among ``n_classes`` classes exceeds with probability below ``alpha = 0.05``
    on ``n_trials`` trials, ``binom.ppf(1 - alpha, n_trials, 1 / n_classes) / n_trials``.
    When the accuracy is the best of ``n_candidates`` candidates compared on the same
    trials (``features="auto"`` compares every feature path and spatial stage), the bound is
    that of the best of them: ``alpha / n_candidates`` (Bonferroni), since the best of ten
    guessers scores higher than one. Penalty grids inside a candidate are not counted: their
    points are near neighbours whose scores move together.

The words (:func:`verdict_word`)
--------------------------------
``"not clearly above chance"``
    The CV accuracy does not exceed the chance level (for the best of the candidates).
``"strong"``
    The lower end of the interval reaches :data:`STRONG_KAPPA` of the way from guessing
    to perfect: 0.70 for two classes, the level usually required for a usable
    two-class BCI (Kuebler et al. 2001), so even the pessimistic end is usable.
``"likely usable"``
    Between the two: above chance, but the interval still reaches below that level.

References
----------
Combrisson E., Jerbi K. (2015). Exceeding chance level by chance: the caveat of
theoretical chance levels in brain signal classification and statistical assessment of
decoding accuracy. Journal of Neuroscience Methods 250, 126-136.

Examples
--------
>>> round(chance_level(30, 2), 3)
0.633
>>> round(chance_level(30, 2, n_candidates=10), 3)
0.733
>>> [round(x, 3) for x in accuracy_interval(0.7, 30)]
[0.521, 0.833]
>>> verdict_word(0.7, n_trials=30, n_classes=2, n_candidates=10)
'not clearly above chance'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sblr_rt.bci_model.regions import WeightRegions, weight_regions
from sblr_rt.bci_model.search_record import candidate_name, name_candidate, search_record
from sblr_rt.scoring import ALPHA, above_chance, accuracy_interval, chance_level

# The accuracy statistics live in sblr_rt.scoring; named here too, as before.
__all__ = [
    "ALPHA",
    "STRONG_KAPPA",
    "WORDS",
    "MemberVerdict",
    "Verdict",
    "above_chance",
    "accuracy_interval",
    "chance_level",
    "describe_rank",
    "model_verdict",
    "prior_info",
    "prior_lines",
    "rank_used",
    "spread_text",
    "verdict_word",
]

#: Where "strong" starts, as a fraction of the way from guessing (``1 / n_classes``) to
#: perfect: 0.4 puts it at 0.70 for two classes.
STRONG_KAPPA = 0.4
#: The words of :func:`verdict_word`, weakest first.
WORDS = ("not clearly above chance", "likely usable", "strong")


def verdict_word(accuracy: float, *, n_trials: int, n_classes: int, n_candidates: int = 1) -> str:
    """Return the plain word for a CV accuracy (one of :data:`WORDS`).

    ``"not clearly above chance"`` when the accuracy does not exceed
    :func:`chance_level` (for the best of ``n_candidates``); ``"strong"`` when the lower end
    of the 95% :func:`accuracy_interval` reaches :data:`STRONG_KAPPA` of the way from
    ``1 / n_classes`` to 1 (0.70 for two classes); else ``"likely usable"``.

    Parameters
    ----------
    accuracy : float
        CV accuracy.
    n_trials, n_classes, n_candidates : int
        As for :func:`chance_level`.

    Returns
    -------
    word : str
    """
    level = chance_level(n_trials, n_classes, n_candidates=n_candidates)
    if not accuracy > level:
        return WORDS[0]
    low = accuracy_interval(accuracy, n_trials)[0]
    guess = 1.0 / n_classes
    return WORDS[2] if low >= guess + STRONG_KAPPA * (1 - guess) - 1e-12 else WORDS[1]


def rank_used(estimator) -> int:
    """Return the components of a fitted estimator that contribute to its score.

    A component ``k`` whose spatial column ``U[:, k]`` or temporal column ``V[:, k]`` is
    all zeros (switched off by the l1 penalties) adds nothing; with several outputs a
    component counts when it is on for at least one of them.

    Parameters
    ----------
    estimator : SparseBilinearLogisticRegression
        Fitted (``spatial_`` and ``temporal_``).

    Returns
    -------
    rank : int
        Between 0 and ``estimator.rank``.
    """
    U = np.asarray(estimator.spatial_)
    V = np.asarray(estimator.temporal_)
    U = U.reshape(-1, *U.shape[-2:])
    V = V.reshape(-1, *V.shape[-2:])
    on = np.any(U != 0, axis=1) & np.any(V != 0, axis=1)  # (n_outputs, rank)
    return int(np.count_nonzero(on.any(axis=0)))


def spread_text(std) -> str:
    """Return ``" +/- 0.050"`` for a CV spread, or ``""`` where there is none (one split).

    Examples
    --------
    >>> spread_text(0.05), spread_text(None)
    (' +/- 0.050', '')
    """
    if std is None or not np.isfinite(std):
        return ""
    return f" +/- {std:.3f}"


def describe_rank(estimator) -> str:
    """Return ``"2"``, or ``"2 (1 used)"`` when components are switched off."""
    used = rank_used(estimator)
    return f"{estimator.rank}" + ("" if used == estimator.rank else f" ({used} used)")


@dataclass(frozen=True)
class MemberVerdict:
    """One single model's part: its name, rank and its own CV accuracy when known.

    Attributes
    ----------
    name : str
        ``"features/spatial"`` (``"waveform/car"``).
    rank : int
        The estimator's rank.
    rank_used : int
        Components that contribute (:func:`rank_used`).
    accuracy : float | None
        The candidate's own CV accuracy (None when the file holds none).
    above_chance : bool | None
        Whether ``accuracy`` exceeds the chance level of one candidate.
    """

    name: str
    rank: int
    rank_used: int
    accuracy: float | None = None
    above_chance: bool | None = None

    def describe(self) -> str:
        """Return ``name: rank 2 (1 used), CV accuracy 0.633``."""
        rank = f"rank {self.rank}" + (
            f" ({self.rank_used} used)" if self.rank_used != self.rank else ""
        )
        acc = "" if self.accuracy is None else f", CV accuracy {self.accuracy:.3f}"
        return f"{self.name}: {rank}{acc}"


@dataclass(frozen=True)
class Verdict:
    """What a model's CV accuracy means, where its weight lies and what to try next.

    Attributes
    ----------
    accuracy : float | None
        The CV accuracy the calibration reports (the chosen candidate's with
        ``features="auto"``); None when the model file holds none.
    n_trials, n_classes : int
        Calibration trials used and classes.
    n_candidates : int
        How many candidates ``accuracy`` is the best of.
    interval : tuple of float | None
        95% Wilson interval of ``accuracy``.
    chance : float | None
        Chance level of one candidate (:func:`chance_level`).
    chance_best : float | None
        Chance level of the best of ``n_candidates``; equals ``chance`` for one.
    word : str | None
        One of :data:`WORDS`; None without an accuracy.
    members : tuple of MemberVerdict
        Each single model (one for a single model).
    regions : WeightRegions
        Where the weight lies.
    advice : tuple of str
        What to try next (empty unless the word is the first of :data:`WORDS`).
    measure : str
        What ``accuracy`` is: ``"CV accuracy"``, or for a model built on a prior without
        a prior, the accuracy of its leading member on the person's trials it did not
        train on.
    missing : str
        What the first line says without an accuracy.
    prior : tuple of str
        A prior-based model's figures in words: the prior's weight and share, why that
        weight, each member's evidence on held-out trials, the prior's leave-one-person-out
        accuracy (empty without a prior).
    """

    accuracy: float | None
    n_trials: int
    n_classes: int
    n_candidates: int
    interval: tuple | None
    chance: float | None
    chance_best: float | None
    word: str | None
    members: tuple
    regions: WeightRegions
    advice: tuple = field(default_factory=tuple)
    measure: str = "CV accuracy"
    prior: tuple = ()
    missing: str = "no cross-validated accuracy in this model file"

    @property
    def warnings(self) -> list[str]:
        """The weight warning (:attr:`WeightRegions.warning`) and members at chance."""
        out = [self.regions.warning] if self.regions.warning else []
        weak = [m for m in self.members if m.above_chance is False]
        if weak and len(self.members) > 1:
            out.append(
                "member(s) not above chance in their own CV: "
                + ", ".join(f"{m.name} ({m.accuracy:.3f})" for m in weak)
                + f" against a chance level of {self.chance:.3f}"
            )
        return out

    def lines(self) -> list[str]:
        """Return the verdict as lines of text, the word first."""
        if self.accuracy is None:
            lines = [f"verdict: {self.missing}"]
        else:
            lo, hi = self.interval
            best = (
                f"; the best of {self.n_candidates} candidates, which chance alone reaches "
                f"up to {self.chance_best:.3f}"
                if self.n_candidates > 1
                else ""
            )
            lines = [
                f"verdict: {self.word.upper()}: {self.measure} {self.accuracy:.3f} on "
                f"{self.n_trials} trials (95% interval {lo:.3f}-{hi:.3f})",
                f"  chance level: {self.chance:.3f} ({self.n_classes} classes, "
                f"{self.n_trials} trials, p < {ALPHA:g}){best}",
            ]
        lines += [f"  {line}" for line in self.prior]
        lines.append(self._rank_line())
        lines += [f"  WARNING: {w}" for w in self.warnings]
        if self.advice:
            lines.append("  what to try next:")
            lines += [f"    - {a}" for a in self.advice]
        return lines

    def _rank_line(self) -> str:
        if len(self.members) == 1:
            m = self.members[0]
            note = (
                f" (rank {m.rank} fitted; {m.rank - m.rank_used} component(s) switched off "
                "by the penalty)"
                if m.rank_used != m.rank
                else ""
            )
            return f"  rank used: {m.rank_used}{note}"
        return "  rank used per member: " + "; ".join(
            f"{m.name} {m.rank_used}" + (f" of {m.rank}" if m.rank_used != m.rank else "")
            for m in self.members
        )


def model_verdict(model) -> Verdict:
    """Return the verdict on a model from its factors and its calibration metadata.

    Parameters
    ----------
    model : BCIModel
        A model, single or ensemble. Its ``metadata["epochs"]["used"]`` gives the trials
        and ``metadata["selection"]`` the CV accuracy (with ``features="auto"``: every
        candidate's); without them the verdict holds the rank and the weight only.

    Returns
    -------
    verdict : Verdict
    """
    md = getattr(model, "metadata", None) or {}
    sel = search_record(md)
    n_classes = max(2, len(model.classes))
    n_trials = int((md.get("epochs") or {}).get("used") or 0)
    accuracy = (sel.get("best") or {}).get("accuracy")
    candidates = {candidate_name(c): c for c in sel.get("candidates") or []}
    n_candidates = max(1, len(candidates))
    known = accuracy is not None and n_trials > 0 and np.isfinite(accuracy)
    chance = chance_level(n_trials, n_classes) if n_trials > 0 else None
    members = _members(model, sel, candidates, n_trials, n_classes)
    regions = weight_regions(model)
    info = prior_info(model)
    prior = tuple(prior_lines(info)) if info else ()
    measure = "CV accuracy"
    lead = _leading_evidence(info) if info else None
    if lead is not None:  # a model with a prior: its members' records on held-out trials
        name, n_trials, correct = lead
        accuracy, known = correct / n_trials, True
        chance = chance_level(n_trials, n_classes)
        measure = f"accuracy of the {name} member on the person's trials it did not train on"
        n_candidates = 1
    if not known:
        missing = "no cross-validated accuracy in this model file"
        if info.get("kind") == "prior" and info.get("n_trials") is None:
            missing = "a prior across people, not yet refined with anyone's trials"
        elif info:
            missing = "no figure on this person's own trials in this model file"
        return Verdict(None, n_trials, n_classes, n_candidates, None, chance, None, None,
                       members, regions, prior=prior, missing=missing)  # fmt: skip
    accuracy = float(accuracy)
    word = verdict_word(
        accuracy, n_trials=n_trials, n_classes=n_classes, n_candidates=n_candidates
    )
    advice = _advice(model, n_trials, n_classes, regions) if word == WORDS[0] else ()
    return Verdict(
        accuracy,
        n_trials,
        n_classes,
        n_candidates,
        accuracy_interval(accuracy, n_trials),
        chance,
        chance_level(n_trials, n_classes, n_candidates=n_candidates),
        word,
        members,
        regions,
        tuple(advice),
        measure,
        prior,
    )


def prior_info(model) -> dict:
    """Return the description of the prior a model is built on (``{}`` without one).

    ``metadata["prior"]`` of the model, else of its member that is a prior; a prior as
    built (``kind == "prior"``) describes itself the same way.

    Parameters
    ----------
    model : BCIModel

    Returns
    -------
    info : dict
        The keys present among ``weight``, ``share``, ``n_trials``, ``reason``,
        ``weights``, ``evidence``, ``people``, ``lopo``, ``created``, ...
    """
    md = getattr(model, "metadata", None) or {}
    info = md.get("prior")
    member = getattr(model, "prior_member", None)
    if not isinstance(info, dict) and member is not None:
        info = (member.metadata or {}).get("prior")
    if not isinstance(info, dict):
        return {}
    if member is not None and member is not model and isinstance(member.metadata, dict):
        own = member.metadata.get("prior")  # the pool's people and figures, where kept
        if isinstance(own, dict):
            info = {**own, **info}
    return info


def prior_lines(info: dict) -> list[str]:
    """Return a prior-based model's figures in words, each key only where present.

    Parameters
    ----------
    info : dict
        :func:`prior_info` of the model.

    Returns
    -------
    lines : list of str
        The prior's weight in the model and why, the pool's share of the training weight,
        each member's weight and evidence on held-out trials, the prior's leave-one-person-out
        accuracy per person.
    """
    lines = []
    weight, share = _float(info.get("weight")), _float(info.get("share"))
    if weight is not None:
        if weight == 0:
            text = "prior weight 0: the prior was dropped, the person's own model decides"
        else:
            text = f"prior weight {weight:.2f} of the decision"
        if info.get("reason"):
            text += f" ({info['reason']})"
        lines.append(text)
    if share is not None or info.get("n_trials") is not None:
        n = info.get("n_trials")
        part = f"refined with {n} of the person's trials" if n is not None else "refined"
        if share is not None:
            part += f"; {100 * share:.0f}% of its training weight is the pool of other people"
        lines.append(part)
    weights = info.get("weights") if isinstance(info.get("weights"), dict) else {}
    evidence = info.get("evidence") if isinstance(info.get("evidence"), dict) else {}
    for name in dict.fromkeys([*weights, *evidence]):
        ev = evidence.get(name) if isinstance(evidence.get(name), dict) else {}
        text = f"member {name}"
        if _float(weights.get(name)) is not None:
            text += f": weight {float(weights[name]):.2f}"
        n, correct = ev.get("n_trials"), ev.get("correct")
        if n and correct is not None:
            text += (
                f"; {int(correct)}/{int(n)} right ({correct / n:.3f}) on the person's trials "
                "it did not train on"
            )
            if isinstance(ev.get("how"), str) and ev["how"]:
                text += f" ({ev['how']})"
            if _float(ev.get("log_loss")) is not None:
                text += f", log-loss {float(ev['log_loss']):.3f}"
        lines.append(text)
    per_person = (info.get("lopo") or {}).get("per_person") or {}
    per_person = {p: float(a) for p, a in per_person.items() if _float(a) is not None}
    if per_person:
        worst = min(per_person, key=per_person.get)
        lines.append(
            f"the prior alone on people it never saw (leave-one-person-out, run-centred): "
            f"mean {np.mean(list(per_person.values())):.3f} over {len(per_person)} people, "
            f"worst {per_person[worst]:.3f} ({worst})"
        )
        lines.append("  per person: " + ", ".join(f"{p} {a:.3f}" for p, a in per_person.items()))
    return lines


def _float(value) -> float | None:
    """Return ``value`` as a finite float, or None."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _leading_evidence(info: dict) -> tuple[str, int, int] | None:
    """Return (member, trials, correct) of the weightiest member with evidence."""
    evidence = info.get("evidence")
    if not isinstance(evidence, dict):
        return None
    weights = info.get("weights") if isinstance(info.get("weights"), dict) else {}
    usable = [
        (name, int(ev["n_trials"]), int(ev["correct"]))
        for name, ev in evidence.items()
        if isinstance(ev, dict) and (ev.get("n_trials") or 0) > 0 and ev.get("correct") is not None
    ]
    if not usable:
        return None
    return max(usable, key=lambda u: _float(weights.get(u[0])) or 0.0)


def _members(model, sel: dict, candidates: dict, n_trials: int, n_classes: int) -> tuple:
    names = list((sel.get("ensemble") or [sel.get("chosen")]) if sel else [])
    out = []
    for i, m in enumerate(model.members):
        stored = m.metadata.get("name")  # files before members kept their names: by order
        name = stored or (names[i] if i < len(names) and names[i] else _single_name(m))
        # a prior across people was not one of the person's candidates, whatever its name
        acc = None if m.pool is not None else (candidates.get(name) or {}).get("accuracy")
        above = above_chance(acc, n_trials, n_classes)
        out.append(MemberVerdict(name, int(m.estimator.rank), rank_used(m.estimator), acc, above))
    return tuple(out)


def _single_name(model) -> str:
    return name_candidate(model.preprocessor.features, model.preprocessor.spatial)


def _advice(model, n_trials: int, n_classes: int, regions: WeightRegions) -> list[str]:
    """Plain steps for a model not clearly above chance, the likeliest first."""
    more = 2 * n_trials
    advice = [
        f"record more trials: chance alone reaches {chance_level(n_trials, n_classes):.3f} "
        f"on {n_trials} trials but {chance_level(more, n_classes):.3f} on {more}, and the "
        "interval narrows; calibrate on all the runs together",
    ]
    if regions.flagged():
        advice.append(
            "take the eyes out as the warning above says (--eog, or the sensorimotor "
            "channels only) and calibrate again"
        )
    advice += [
        f"check the window (now [{model.tmin:g}, {model.tmax:g}) s after the cue) covers "
        "the imagery and that the markers name the right classes (the report's markers line)",
        "ask the person to try another strategy (kinaesthetic imagery: feel the movement "
        "rather than see it) or another pair of tasks (hands against feet): some people show "
        "no clear change of their sensorimotor rhythm for a given task",
        "do not run feedback with this model: its decisions may be no better than guessing",
    ]
    return advice

"""Every field of a model file's header that sblr-rt reads, checked by type and range.

A model file is data from anywhere: its JSON header may hold any value in any field. The
preprocessor's and estimator's fields are checked by their own constructors; the rest (the
top-level strings, ``metadata`` that the online loop, ``inspect`` and the dashboard read)
are checked here, once, at load, so that a wrong field gives one
:class:`~sblr_rt.io.ModelFileError` naming it rather than a traceback later (a ``config``
that is a string in ``run``, ``excluded_channels`` a list in ``inspect``) or a silent
misbehaviour (a model version beyond float32's integers made every numeric outlet sample
non-finite). Fields sblr-rt does not read are left alone, so newer files still load.
"""

from __future__ import annotations

from sblr_rt.io._archive import ModelFileError
from sblr_rt.validation.constraints import (
    Rule,
    any_of,
    any_value,
    boolean,
    custom,
    integer,
    list_of,
    mapping,
    number,
    text,
)
from sblr_rt.validation.limits import LIMITS, MAX_MODEL_VERSION

__all__ = ["MAX_MODEL_VERSION", "check_header_fields"]

_BIG = 2**53  # counts and sizes: any integer a float64 holds exactly


def _integer(lo=-_BIG, hi=_BIG, none=False) -> Rule:
    """Return the rule of an integer in ``[lo, hi]`` (``1.0`` and ``1e3`` are refused)."""
    return integer(lambda v: lo <= v <= hi, f"be an integer in [{lo}, {hi}]", none=none)


def _number(lo=None, hi=None, none=False) -> Rule:
    """Return the rule of a finite number in ``[lo, hi]`` (None: unbounded on that side)."""
    if lo is None and hi is None:
        return number(none=none)
    low = -float("inf") if lo is None else lo
    high = float("inf") if hi is None else hi
    return number(lambda v: low <= v <= high, f"be a finite number in [{low:g}, {high:g}]",
                  none=none)  # fmt: skip


def _within(kind: str) -> Rule:
    """Return the rule of a number in the range of ``kind``, its lower bound included.

    The range of :data:`~sblr_rt.validation.limits.LIMITS`: the command line's and the
    configuration's for the same number.
    """
    return number(limit=kind, low_open=False, none=True)


_COUNT = _integer(0)
_TRACE = list_of(number(none=True))
#: The solver's objective trace: one list of numbers, or one per one-versus-rest problem
#: (three or more classes; their count is checked against ``classes`` below).
_OBJECTIVE = any_of(_TRACE, list_of(_TRACE, max_len=10_000), none=True)
_PAIR = list_of(any_of(text(), integer()), max_len=2)
_CONFIG = mapping(
    {
        "classes": any_of(mapping(values=any_of(text(), integer())), list_of(_PAIR), none=True),
        "tmin": _within("epoch"),
        "tmax": _within("epoch"),
        "reject": _number(0.0, none=True),
        "flat": _number(0.0, none=True),
        "clip_run": _integer(1, none=True),
        "smoothing": text(none=True),
        "tau": _within("seconds"),
        "early": _number(0.0, 1.0, none=True),
        "early_after": _within("seconds"),
        "recentre": boolean(none=True),
        "recentre_warmup": _within("trials"),
        "features": text(none=True),
        # Not bounded by this machine's CPUs: the calibrating machine's, and a refit runs
        # one job whatever it says.
        "n_jobs": _integer(none=True),
    },
    none=True,
)
_SCORES = mapping(
    {
        "accuracy": number(none=True),
        "accuracy_std": number(none=True),
        "log_loss": number(none=True),
        "auc": number(none=True),
        "mean": number(none=True),  # files before the one search report
        "std": number(none=True),
    },
    none=True,
)
_NAME = text(non_empty=True, max_len=1000)
_FRACTION = _number(0.0, 1.0)
#: The settings of a prior: a mapping of values (the calibration checks each against its
#: settings class when it uses a prior: ``PriorSettings.from_dict``).
_SETTING = any_of(boolean(), number(), text())
#: ``metadata.prior``: what ``build_prior`` and the calibration with a prior record.
PRIOR = mapping(
    {
        "kind": text(none=True),
        "people": list_of(_NAME, none=True),
        "runs": list_of(mapping({"person": _NAME, "source": text()}), none=True),
        "channels": list_of(_NAME, none=True),
        "settings": mapping(values=_SETTING, none=True),
        "lopo": mapping(
            {
                "per_person": mapping(values=_number(0.0, 1.0, none=True)),
                "mean": _number(0.0, 1.0, none=True),
                "worst": _number(0.0, 1.0, none=True),
                "protocol": text(none=True),
            },
            none=True,
        ),
        "seconds": _number(0.0, none=True),
        "n_trials": _integer(0, none=True),
        "share": _number(0.0, 1.0, none=True),
        "weight": _number(0.0, 1.0, none=True),
        "reason": text(none=True),
        # a loss that was not finite is written as null (sblr_rt.io.jsonable)
        "cv_log_loss": mapping(values=_number(0.0, none=True), none=True),
        "weights": mapping(values=_number(0.0), none=True),
        "person_weights": mapping(values=_number(0.0), none=True),
        "created": text(none=True),
        "evidence": mapping(
            values=mapping(
                {
                    "n_trials": _COUNT,
                    "correct": _COUNT,
                    "log_loss": _number(0.0, none=True),
                    "how": text(none=True),
                }
            ),
            none=True,
        ),
        # a session's trials already counted in the evidence (calibration/refit.py)
        "evidence_seen": _integer(0, none=True),
    },
    none=True,
)


_PROBABILITY_FIELDS = mapping(
    {
        "ends": list_of(_number(-3600.0, 3600.0), max_len=10_000),
        "sharpness": list_of(_number(0.0, 10.0), max_len=10_000),
        "how": text(none=True),
    }
)


def _probability(name, value):
    """Check the fields by their rules, then the calibration's own relations."""
    from sblr_rt.model.link import ProbabilityCalibration

    value = _PROBABILITY_FIELDS.check(name, value)
    try:
        ProbabilityCalibration.from_dict(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name!r} must {_PROBABILITY_SAYS}, got {value!r:.80}") from None
    return value


_PROBABILITY_SAYS = (
    "be a probability calibration: 'ends' strictly increasing seconds, 'sharpness' as many "
    "numbers in [0, 10], non-decreasing"
)
#: ``metadata.probability``: the probability calibration (:mod:`sblr_rt.model.link`).
PROBABILITY = custom(_probability, none=True)
#: The metadata fields sblr-rt reads, and what each must be.
METADATA = mapping(
    {
        "software_version": text(none=True),
        "created": text(none=True),
        "sources": list_of(text(), none=True),
        "unit": text(none=True),
        "excluded_channels": mapping(values=text(), none=True),
        "config": _CONFIG,
        "epochs": mapping(
            {
                "found": _COUNT,
                "used": _COUNT,
                "per_class": mapping(values=_COUNT),
                "rejected": mapping(values=_COUNT),
            },
            none=True,
        ),
        "selection": mapping(
            {
                "cv": any_of(text(), integer(), none=True),
                "repeats": _integer(1, none=True),
                "search": text(none=True),
                "criterion": text(none=True),
                "best": _SCORES,
                # the grid's axes; a list of points in files before the one search report
                "grid": any_of(mapping(), list_of(mapping()), none=True),
                "ranks": list_of(mapping({"rank": _integer(1)}), none=True),
                "candidates": list_of(
                    mapping(
                        {
                            "name": text(none=True),
                            "points": list_of(mapping(), none=True),
                        }
                    ),
                    none=True,
                ),
                "chosen": text(none=True),
                "ensemble": list_of(text(), none=True),
                "dropped": list_of(mapping(), none=True),
                "chance_level": _number(0.0, 1.0, none=True),
                "auto": mapping({"candidates": list_of(mapping(), none=True)}, none=True),
            },
            none=True,
        ),
        "train_accuracy": _number(0.0, 1.0, none=True),
        "objective": _OBJECTIVE,
        "seconds": _number(0.0, none=True),
        "prior": PRIOR,
        "probability": PROBABILITY,
        "adaptation": mapping(
            {
                "version": _integer(0, MAX_MODEL_VERSION),
                "parent": _integer(0, MAX_MODEL_VERSION),
                "reselected": boolean(),
                "n_epochs": _COUNT,
                "per_class": mapping(values=_COUNT),
                "seconds": _number(0.0),
                "n_session_trials": _COUNT,
                "n_calibration_runs": _COUNT,
                "trials": list_of(any_value()),
            },
            none=True,
        ),
    }
)
#: The solver's settings: bounded, so that a file cannot make a refit run for ever.
_ITERATIONS = _integer(1, LIMITS["iterations"][1])
_ESTIMATOR = mapping(
    {"params": mapping({"max_iter": _ITERATIONS, "tol": _number(0.0, 1.0)}, none=True)},
    none=True,
)
#: Top-level fields beside those the loader checks itself.
HEADER = mapping(
    {
        "software_version": text(none=True),
        "created": text(none=True),
        "metadata": mapping(none=True),
        "estimator": _ESTIMATOR,
        "members": list_of(mapping({"estimator": _ESTIMATOR}), none=True),
    }
)


def check_header_fields(header: dict) -> None:
    """Check the header's top-level strings and its ``metadata``; raise naming the field.

    ``metadata.objective`` is the solver's objective trace: a list of numbers, or for a
    one-versus-rest model of three or more classes one such list per class (as many lists
    as ``classes``).

    Parameters
    ----------
    header : dict
        The parsed JSON header.

    Raises
    ------
    ModelFileError
        ``header field 'metadata.adaptation.version' must be an integer in [0, 16777216],
        got 1e+40``, and so on; ``header field 'metadata.objective' must be one list of
        numbers, or one per class for three or more classes (one-versus-rest), got 2 lists
        for 3 classes``.
    """
    try:
        HEADER.check("", header)
        metadata = header.get("metadata")
        if metadata is not None:
            METADATA.check("metadata", metadata)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"header field {exc}") from None
    if metadata is not None:
        _check_objective_count(metadata.get("objective"), header.get("classes"))


def _check_objective_count(objective, classes) -> None:
    """Refuse per-problem objective traces whose count is not the number of classes."""
    if not objective or not isinstance(objective[0], list) or not isinstance(classes, list):
        return
    if len(classes) < 3 or len(objective) != len(classes):
        raise ModelFileError(
            "header field 'metadata.objective' must be one list of numbers, or one per class "
            f"for three or more classes (one-versus-rest), got {len(objective)} lists for "
            f"{len(classes)} classes"
        )

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

import math

from sblr_rt.io._archive import ModelFileError
from sblr_rt.validation.limits import LIMITS

__all__ = ["MAX_MODEL_VERSION", "check_header_fields"]

#: Largest model version: the numeric outlet sends it as float32, exact up to 2**24.
MAX_MODEL_VERSION = 2**24
_BIG = 2**53  # counts and sizes: any integer a float64 holds exactly


class _Spec:
    """One field's rule: ``check(value, name)`` raises ``ModelFileError`` naming ``name``."""

    def __init__(self, what: str, test, optional: bool = False) -> None:
        self.what, self.test, self.optional = what, test, optional

    def check(self, value, name: str) -> None:
        if value is None and self.optional:
            return
        try:
            ok = self.test(value, name)
        except ModelFileError:
            raise
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise ModelFileError(f"header field {name!r} must be {self.what}, got {_short(value)}")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(v, lo=-_BIG, hi=_BIG) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _is_num(v, lo=-math.inf, hi=math.inf) -> bool:
    ok = isinstance(v, int | float) and not isinstance(v, bool)
    return ok and math.isfinite(v) and lo <= v <= hi


def string(optional=False) -> _Spec:
    return _Spec("a string", lambda v, _: isinstance(v, str) and len(v) <= 100_000, optional)


def integer(lo=-_BIG, hi=_BIG, optional=False) -> _Spec:
    return _Spec(f"an integer in [{lo}, {hi}]", lambda v, _: _is_int(v, lo, hi), optional)


def number(lo=-math.inf, hi=math.inf, optional=False) -> _Spec:
    what = f"a finite number in [{lo:g}, {hi:g}]"
    return _Spec(what, lambda v, _: _is_num(v, lo, hi), optional)


def within(kind: str, optional=False) -> _Spec:
    """Return the rule of a number in the range of ``kind`` (:data:`~.limits.LIMITS`).

    The same range as the command line's and the configuration's for the same number.
    """
    lo, hi, unit, why = LIMITS[kind]
    unit = f" {unit}" if unit else ""
    what = f"a finite number in [{lo:g}, {hi:g}]{unit} ({why})"
    return _Spec(what, lambda v, _: _is_num(v, lo, hi), optional)


def boolean(optional=False) -> _Spec:
    return _Spec("true or false", lambda v, _: isinstance(v, bool), optional)


def any_of(*specs: _Spec, optional=False) -> _Spec:
    def test(v, name):
        for spec in specs:
            try:
                spec.check(v, name)
            except ModelFileError:
                continue
            return True
        return False

    return _Spec(" or ".join(s.what for s in specs), test, optional)


def list_of(item: _Spec, optional=False, max_len=1_000_000) -> _Spec:
    def test(v, name):
        if not isinstance(v, list) or len(v) > max_len:
            return False
        for i, x in enumerate(v):
            item.check(x, f"{name}[{i}]")
        return True

    return _Spec(f"a list (of {item.what})", test, optional)


def mapping(fields: dict | None = None, *, values: _Spec | None = None, optional=False):
    """Return the rule of an object: its known ``fields`` by name, or every value."""

    def test(v, name):
        if not isinstance(v, dict):
            return False
        for key, spec in (fields or {}).items():
            if key in v:
                spec.check(v[key], f"{name}.{key}" if name else key)
        if values is not None:
            for key, x in v.items():
                values.check(x, f"{name}.{key}" if name else str(key))
        return True

    what = "an object" + (f" (of {values.what})" if values is not None else "")
    return _Spec(what, test, optional)


_COUNT = integer(0)
_TRACE = list_of(number(optional=True))
#: The solver's objective trace: one list of numbers, or one per one-versus-rest problem
#: (three or more classes; their count is checked against ``classes`` below).
_OBJECTIVE = any_of(_TRACE, list_of(_TRACE, max_len=10_000), optional=True)
_PAIR = list_of(any_of(string(), integer()), max_len=2)
_CONFIG = mapping(
    {
        "classes": any_of(
            mapping(values=any_of(string(), integer())), list_of(_PAIR), optional=True
        ),
        "tmin": within("epoch", optional=True),
        "tmax": within("epoch", optional=True),
        "reject": number(0.0, optional=True),
        "flat": number(0.0, optional=True),
        "clip_run": integer(1, optional=True),
        "smoothing": string(optional=True),
        "tau": within("seconds", optional=True),
        "early": number(0.0, 1.0, optional=True),
        "early_after": within("seconds", optional=True),
        "recentre": boolean(optional=True),
        "recentre_warmup": within("trials", optional=True),
        "features": string(optional=True),
        # Not bounded by this machine's CPUs: the calibrating machine's, and a refit runs
        # one job whatever it says.
        "n_jobs": integer(optional=True),
    },
    optional=True,
)
_SCORES = mapping(
    {
        "accuracy": number(optional=True),
        "accuracy_std": number(optional=True),
        "log_loss": number(optional=True),
        "auc": number(optional=True),
        "mean": number(optional=True),  # files before the one search report
        "std": number(optional=True),
    },
    optional=True,
)
_NAME = _Spec("a non-empty string", lambda v, _: isinstance(v, str) and 0 < len(v.strip()) <= 1000)
_FRACTION = number(0.0, 1.0)
#: The settings of a prior: a mapping of values (the calibration checks each against its
#: settings class when it uses a prior: ``PriorSettings.from_dict``).
_SETTING = any_of(boolean(), number(), string())
#: ``metadata.prior``: what ``build_prior`` and the calibration with a prior record.
PRIOR = mapping(
    {
        "kind": string(optional=True),
        "people": list_of(_NAME, optional=True),
        "runs": list_of(mapping({"person": _NAME, "source": string()}), optional=True),
        "channels": list_of(_NAME, optional=True),
        "settings": mapping(values=_SETTING, optional=True),
        "lopo": mapping(
            {
                "per_person": mapping(values=number(0.0, 1.0, optional=True)),
                "mean": number(0.0, 1.0, optional=True),
                "worst": number(0.0, 1.0, optional=True),
                "protocol": string(optional=True),
            },
            optional=True,
        ),
        "seconds": number(0.0, optional=True),
        "n_trials": integer(0, optional=True),
        "share": number(0.0, 1.0, optional=True),
        "weight": number(0.0, 1.0, optional=True),
        "reason": string(optional=True),
        # a loss that was not finite is written as null (sblr_rt.io.jsonable)
        "cv_log_loss": mapping(values=number(0.0, optional=True), optional=True),
        "weights": mapping(values=number(0.0), optional=True),
        "person_weights": mapping(values=number(0.0), optional=True),
        "created": string(optional=True),
        "evidence": mapping(
            values=mapping(
                {
                    "n_trials": _COUNT,
                    "correct": _COUNT,
                    "log_loss": number(0.0, optional=True),
                    "how": string(optional=True),
                }
            ),
            optional=True,
        ),
        # a session's trials already counted in the evidence (calibration/refit.py)
        "evidence_seen": integer(0, optional=True),
    },
    optional=True,
)


def _probability_ok(v, name) -> bool:
    from sblr_rt.model.link import ProbabilityCalibration

    ProbabilityCalibration.from_dict(v)  # ValueError / TypeError: refused
    return True


#: ``metadata.probability``: the probability calibration (:mod:`sblr_rt.model.link`).
PROBABILITY = _Spec(
    "a probability calibration: 'ends' strictly increasing seconds, 'sharpness' as many "
    "numbers in [0, 10], non-decreasing",
    lambda v, name: (
        mapping(
            {
                "ends": list_of(number(-3600.0, 3600.0), max_len=10_000),
                "sharpness": list_of(number(0.0, 10.0), max_len=10_000),
                "how": string(optional=True),
            }
        ).test(v, name)
        and _probability_ok(v, name)
    ),
    optional=True,
)
#: The metadata fields sblr-rt reads, and what each must be.
METADATA = mapping(
    {
        "software_version": string(optional=True),
        "created": string(optional=True),
        "sources": list_of(string(), optional=True),
        "unit": string(optional=True),
        "excluded_channels": mapping(values=string(), optional=True),
        "config": _CONFIG,
        "epochs": mapping(
            {
                "found": _COUNT,
                "used": _COUNT,
                "per_class": mapping(values=_COUNT),
                "rejected": mapping(values=_COUNT),
            },
            optional=True,
        ),
        "selection": mapping(
            {
                "cv": any_of(string(), integer(), optional=True),
                "repeats": integer(1, optional=True),
                "search": string(optional=True),
                "criterion": string(optional=True),
                "best": _SCORES,
                # the grid's axes; a list of points in files before the one search report
                "grid": any_of(mapping(), list_of(mapping()), optional=True),
                "ranks": list_of(mapping({"rank": integer(1)}), optional=True),
                "candidates": list_of(
                    mapping(
                        {
                            "name": string(optional=True),
                            "points": list_of(mapping(), optional=True),
                        }
                    ),
                    optional=True,
                ),
                "chosen": string(optional=True),
                "ensemble": list_of(string(), optional=True),
                "dropped": list_of(mapping(), optional=True),
                "chance_level": number(0.0, 1.0, optional=True),
                "auto": mapping({"candidates": list_of(mapping(), optional=True)}, optional=True),
            },
            optional=True,
        ),
        "train_accuracy": number(0.0, 1.0, optional=True),
        "objective": _OBJECTIVE,
        "seconds": number(0.0, optional=True),
        "prior": PRIOR,
        "probability": PROBABILITY,
        "adaptation": mapping(
            {
                "version": integer(0, MAX_MODEL_VERSION),
                "parent": integer(0, MAX_MODEL_VERSION),
                "reselected": boolean(),
                "n_epochs": _COUNT,
                "per_class": mapping(values=_COUNT),
                "seconds": number(0.0),
                "n_session_trials": _COUNT,
                "n_calibration_runs": _COUNT,
                "trials": list_of(_Spec("any value", lambda v, _: True)),
            },
            optional=True,
        ),
    }
)
#: The solver's settings: bounded, so that a file cannot make a refit run for ever.
_ITERATIONS = integer(1, LIMITS["iterations"][1])
_ESTIMATOR = mapping(
    {"params": mapping({"max_iter": _ITERATIONS, "tol": number(0.0, 1.0)}, optional=True)},
    optional=True,
)
#: Top-level fields beside those the loader checks itself.
HEADER = mapping(
    {
        "software_version": string(optional=True),
        "created": string(optional=True),
        "metadata": mapping(optional=True),
        "estimator": _ESTIMATOR,
        "members": list_of(mapping({"estimator": _ESTIMATOR}), optional=True),
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
    HEADER.check(header, "")
    metadata = header.get("metadata")
    if metadata is not None:
        METADATA.check(metadata, "metadata")
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

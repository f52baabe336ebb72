"""What each calibration setting accepts: rules, and the checker that applies a table of them.

The idea of scikit-learn's ``_parameter_constraints``: every setting's type and range is one
entry of one table (:data:`sblr_rt.calibration.concerns.CONSTRAINTS`), and one function
(:func:`apply_constraints`) checks a settings object against it, so that a rule is written
once and its message is the same wherever the setting is given (keyword, TOML, command
line). Relations between settings (``tmax > tmin``) stay with the settings class.

Messages quote the setting, say what was expected and end with what was got:
TypeError for a wrong type, ValueError for a wrong value.

Examples
--------
>>> rule = number(lambda v: v > 0, "be a positive number")
>>> rule.check("tol", 1)
1.0
>>> rule.check("tol", 0)
Traceback (most recent call last):
...
ValueError: 'tol' must be a positive number, got 0.0
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

from sblr_rt.validation.limits import check_number

__all__ = [
    "Rule",
    "any_value",
    "apply_constraints",
    "boolean",
    "custom",
    "fractions",
    "integer",
    "integers",
    "names",
    "non_negative",
    "number",
    "numbers_list",
    "option",
    "positive",
]


@dataclass(frozen=True)
class Rule:
    """What one setting accepts.

    Parameters
    ----------
    convert : callable
        ``convert(name, value) -> value``: the type check and normalisation (raises
        TypeError or ValueError naming the setting).
    test : callable | None
        ``test(value) -> bool`` on the converted value; False raises ValueError.
    says : str
        What ``test`` requires, after "must" (``"be a positive number"``).
    none : bool
        None is accepted (and kept) without any check.
    """

    convert: Callable
    test: Callable | None = None
    says: str = ""
    none: bool = False

    def check(self, name: str, value):
        """Return ``value`` converted, or raise naming the setting ``name``."""
        if value is None and self.none:
            return None
        value = self.convert(name, value)
        if self.test is not None and not self.test(value):
            raise ValueError(f"{name!r} must {self.says}, got {value!r:.80}")
        return value


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name!r} must be a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name!r} must be a finite number, got {value}")
    return float(value)


def _integer(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name!r} must be an integer, got {value!r:.80}")
    return int(value)


def _sequence(name: str, values, what: str) -> Sequence:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{name!r} must be {what}, got {type(values).__name__} {values!r:.80}")
    return values


def number(test=None, says="", *, none=False, limit=None, low_open=True) -> Rule:
    """Return the rule of a finite real number, kept as a float.

    ``limit``: a kind of :data:`~sblr_rt.validation.limits.LIMITS` it must also lie within
    (the command line's range and words).
    """

    def convert(name, value):
        value = _finite(name, value)
        if limit is not None:
            check_number(name, value, limit, low_open=low_open)
        return value

    return Rule(convert, test, says, none)


def integer(test=None, says="", *, none=False) -> Rule:
    """Return the rule of an integer (a bool, a float or a string is refused)."""
    return Rule(_integer, test, says, none)


def numbers_list(test=None, says="", *, none=False) -> Rule:
    """Return the rule of a list of finite numbers, kept as a tuple (``test`` sees it)."""

    def convert(name, values):
        values = _sequence(name, values, "a list of numbers")
        return tuple(_finite(name, v) for v in values)

    return Rule(convert, test, says, none)


def integers(test=None, says="") -> Rule:
    """Return the rule of a list of integers, kept as a tuple (a string is refused)."""

    def convert(name, values):
        what = f"a list of integers (TOML: {name} = [1, 2])"
        return tuple(_integer(name, v) for v in _sequence(name, values, what))

    return Rule(convert, test, says)


def names(*, empty_is_none: bool = False) -> Rule:
    """Return the rule of a list of channel names, kept as a tuple of str (or None)."""

    def convert(name, values):
        if isinstance(values, str):
            raise TypeError(f"{name!r} must be a list of channel names, got a str")
        try:
            out = tuple(str(v) for v in values)  # any iterable of names (a numpy array too)
        except TypeError:
            raise TypeError(
                f"{name!r} must be a list of channel names, got {type(values).__name__}"
            ) from None
        return None if empty_is_none and not out else out

    return Rule(convert, none=True)


def option(*choices, aliases=None) -> Rule:
    """Return the rule of one of ``choices`` (``aliases``: other spellings, TOML's ``"none"``)."""
    aliases = dict(aliases or {})
    words = [repr(c) for c in choices]
    says = "be " + (", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0])

    def convert(name, value):
        if isinstance(value, str) and value in aliases:
            return aliases[value]
        return value

    return Rule(convert, lambda v: v in choices, says, none=None in choices)


def boolean() -> Rule:
    """Return the rule of a truth value (``True`` or ``False``; not 0, 1 or a string)."""

    def convert(name, value):
        if not isinstance(value, bool):
            raise TypeError(f"{name!r} must be True or False, got {value!r:.80}")
        return value

    return Rule(convert)


def custom(convert: Callable, *, none: bool = False) -> Rule:
    """Return the rule whose check is ``convert(name, value) -> value`` alone."""
    return Rule(convert, none=none)


def any_value() -> Rule:
    """Return the rule of a setting with no rule of its own.

    A truth value, or a value that a relation between settings checks.
    """
    return Rule(lambda name, value: value, none=True)


def positive(value) -> bool:
    """Return whether ``value > 0`` (a test of :func:`number` or :func:`integer`)."""
    return value > 0


def fractions(values) -> bool:
    """Return whether every value lies in ``[0, 1)`` (a test of :func:`numbers_list`)."""
    return all(0 <= v < 1 for v in values)


def non_negative(values) -> bool:
    """Return whether every value is ``>= 0`` (a test of :func:`numbers_list`)."""
    return all(v >= 0 for v in values)


def apply_constraints(settings, table: dict[str, Rule]) -> None:
    """Check every field of a frozen settings dataclass against ``table``, in place.

    Parameters
    ----------
    settings : dataclass instance
        Frozen; its fields are replaced by their converted values.
    table : dict
        Field name -> :class:`Rule`; every field must have one.

    Raises
    ------
    TypeError, ValueError
        From the first field that breaks its rule.
    """
    for f in fields(settings):
        value = table[f.name].check(f.name, getattr(settings, f.name))
        object.__setattr__(settings, f.name, value)

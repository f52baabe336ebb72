"""What a setting, an argument or a model file's field accepts: rules, and their checker.

The idea of scikit-learn's ``_parameter_constraints``: every setting's type and range is one
entry of one table, and one function (:func:`apply_constraints`) checks a settings object
against it, so that a rule is written once and its message is the same wherever the
setting is given (keyword, TOML, command line). The tables: the calibration's settings
(:data:`sblr_rt.calibration.concerns.CONSTRAINTS`), the preprocessor's parameters
(:data:`sblr_rt.preprocessing.PARAMETER_RULES`), a prior's settings and the fields of a
model file's header (:mod:`sblr_rt.io._header_fields`, built of the structural rules
:func:`text`, :func:`list_of`, :func:`mapping` and :func:`any_of`). Relations between
settings (``tmax > tmin``) stay with the settings class.

Messages quote the setting, say what was expected and end with what was got:
TypeError for a wrong type, ValueError for a wrong value. A rule inside a list or a mapping
names the element (``'runs[0].person'``).

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from sblr_rt.validation.limits import check_number

__all__ = [
    "Rule",
    "any_of",
    "any_value",
    "apply_constraints",
    "boolean",
    "custom",
    "fractions",
    "integer",
    "integers",
    "list_of",
    "mapping",
    "names",
    "non_negative",
    "number",
    "numbers_list",
    "option",
    "positive",
    "text",
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
        What the rule accepts, after "must" (``"be a positive number"``): the message when
        ``test`` fails, and this rule's part of an :func:`any_of` message.
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
        raise TypeError(f"{name!r} must be a number, got {type(value).__name__} {value!r:.80}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer beyond any float (a JSON file may hold one)
        finite = False
    if not finite:
        raise ValueError(f"{name!r} must be a finite number, got {value!r:.80}")
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

    return Rule(convert, test, says or "be a finite number", none)


def integer(test=None, says="", *, none=False) -> Rule:
    """Return the rule of an integer (a bool, a float or a string is refused)."""
    return Rule(_integer, test, says or "be an integer", none)


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


def boolean(*, none=False) -> Rule:
    """Return the rule of a truth value (``True`` or ``False``; not 0, 1 or a string)."""

    def convert(name, value):
        if not isinstance(value, bool):
            raise TypeError(f"{name!r} must be True or False, got {value!r:.80}")
        return value

    return Rule(convert, says="be True or False", none=none)


def custom(convert: Callable, *, none: bool = False) -> Rule:
    """Return the rule whose check is ``convert(name, value) -> value`` alone."""
    return Rule(convert, none=none)


def any_value() -> Rule:
    """Return the rule of a setting with no rule of its own.

    A truth value, or a value that a relation between settings checks.
    """
    return Rule(lambda name, value: value, none=True)


#: Longest string :func:`text` accepts unless told.
_MAX_TEXT = 100_000


def text(*, none=False, non_empty=False, max_len=_MAX_TEXT) -> Rule:
    """Return the rule of a string of at most ``max_len`` characters (``non_empty``: not blank)."""

    def convert(name, value):
        if not isinstance(value, str):
            raise TypeError(f"{name!r} must be a string, got {type(value).__name__} {value!r:.80}")
        return value

    def test(value):
        return len(value) <= max_len and (bool(value.strip()) or not non_empty)

    says = "be a non-empty string" if non_empty else "be a string"
    if max_len != _MAX_TEXT:
        says += f" of at most {max_len} characters"
    return Rule(convert, test, says, none)


def list_of(item: Rule, *, none=False, max_len=1_000_000) -> Rule:
    """Return the rule of a list of at most ``max_len`` elements, each checked by ``item``.

    An element that breaks ``item`` is named by its index (``'sources[2]'``). A string or a
    mapping is not a list.
    """

    def convert(name, values):
        if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
            raise TypeError(
                f"{name!r} must {_list_says(item)}, got {type(values).__name__} {values!r:.80}"
            )
        if len(values) > max_len:
            raise ValueError(f"{name!r} must hold at most {max_len} elements, got {len(values)}")
        return [item.check(f"{name}[{i}]", v) for i, v in enumerate(values)]

    return Rule(convert, says=_list_says(item), none=none)


def mapping(fields: dict[str, Rule] | None = None, *, values: Rule | None = None, none=False):
    """Return the rule of a mapping: its known ``fields`` by key, or else every value.

    A key of ``fields`` that is absent is not checked (a missing field is the reader's
    default); keys that are not in ``fields`` are kept unchecked unless ``values`` is given.
    An element that breaks its rule is named by its path (``'prior.weights.a'``).
    """

    def convert(name, value):
        if not isinstance(value, Mapping):
            raise TypeError(
                f"{name!r} must be a mapping, got {type(value).__name__} {value!r:.80}"
            )
        out = dict(value)
        for key, rule in (fields or {}).items():
            if key in out:
                out[key] = rule.check(_child(name, key), out[key])
        if values is not None:
            for key in list(out):
                out[key] = values.check(_child(name, str(key)), out[key])
        return out

    return Rule(convert, says="be a mapping", none=none)


def any_of(*rules: Rule, none=False) -> Rule:
    """Return the rule of a value that one of ``rules`` accepts (the first one's result).

    The message names what each rule accepts: ``'x' must be a string or an integer``.
    """
    says = " or ".join(
        r.says if k == 0 else r.says.removeprefix("be ") for k, r in enumerate(rules)
    )

    def convert(name, value):
        for rule in rules:
            try:
                return rule.check(name, value)
            except (TypeError, ValueError):
                continue
        raise ValueError(f"{name!r} must {says}, got {value!r:.80}")

    return Rule(convert, says=says, none=none)


def _child(name: str, key: str) -> str:
    return f"{name}.{key}" if name else key


def _list_says(item: Rule) -> str:
    """Return what a list of ``item`` accepts: ``"be a list (each a string ...)"``."""
    inner = item.says.removeprefix("be ")
    return f"be a list (each {inner})" if inner else "be a list"


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

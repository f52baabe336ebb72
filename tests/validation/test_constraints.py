"""The rules: what each accepts, and messages that name the element that broke one."""

from __future__ import annotations

import re

import pytest

from sblr_rt.validation.constraints import (
    any_of,
    integer,
    list_of,
    mapping,
    number,
    text,
)


def test_a_list_names_the_element_that_breaks_its_rule():
    rule = list_of(number(lambda v: v >= 0, "be >= 0"))
    assert rule.check("x", [1, 2.5]) == [1.0, 2.5]
    with pytest.raises(ValueError, match=re.escape("'x[2]' must be >= 0, got -1.0")):
        rule.check("x", [1, 2, -1])
    with pytest.raises(TypeError, match=re.escape("'x' must be a list (each a finite number)")):
        list_of(number()).check("x", "123")  # a string is not a list of its characters
    with pytest.raises(TypeError, match="'x' must be a list"):
        rule.check("x", {"a": 1})
    with pytest.raises(ValueError, match="'x' must hold at most 2 elements, got 3"):
        list_of(integer(), max_len=2).check("x", [1, 2, 3])


def test_a_mapping_checks_its_known_fields_by_path_and_keeps_the_others():
    rule = mapping({"runs": list_of(mapping({"person": text(non_empty=True)}))})
    value = {"runs": [{"person": "S002"}], "future": object()}
    assert rule.check("prior", value)["future"] is value["future"]
    with pytest.raises(ValueError, match=re.escape("'prior.runs[1].person' must be a non-empty")):
        rule.check("prior", {"runs": [{"person": "S002"}, {"person": "  "}]})
    with pytest.raises(TypeError, match="'prior' must be a mapping, got list"):
        rule.check("prior", [1])
    values = mapping(values=number(lambda v: v >= 0, "be >= 0"))
    with pytest.raises(ValueError, match=re.escape("'w.a' must be >= 0, got -1.0")):
        values.check("w", {"b": 1, "a": -1})


def test_any_of_says_every_alternative_and_keeps_the_first_that_accepts():
    rule = any_of(text(), integer(), none=True)
    assert rule.check("cv", 5) == 5 and rule.check("cv", "loro") == "loro"
    assert rule.check("cv", None) is None
    with pytest.raises(
        ValueError, match=re.escape("'cv' must be a string or an integer, got 1.5")
    ):
        rule.check("cv", 1.5)


@pytest.mark.parametrize("value", [10**400, -(10**400)])
def test_an_integer_beyond_any_float_is_not_a_finite_number(value):
    # A JSON file may hold one: it must be refused with a message, not an OverflowError.
    with pytest.raises(ValueError, match="'x' must be a finite number"):
        number().check("x", value)
    with pytest.raises(ValueError, match="'x' must be a finite number"):
        number(limit="epoch").check("x", value)

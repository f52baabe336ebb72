"""One table of bounds on numbers, whichever entry point a number comes through."""

from __future__ import annotations

import math
import os

import pytest

from sblr_rt.validation.limits import (
    LIMITS,
    N_JOBS_PER_CPU,
    check_n_jobs,
    check_number,
    max_n_jobs,
)


@pytest.mark.parametrize(
    ("kind", "value", "low_open", "match"),
    [
        ("epoch", 1e5, False, r"'x' must be a finite number >= -60 and <= 60 seconds \(an epoch"),
        ("epoch", -1e5, False, r"'x' must be >= -60 seconds, got -100000\.0"),
        ("epoch", math.nan, False, r"finite number .*, got nan"),
        ("seconds", 0.0, True, r"'x' must be > 0 seconds, got 0\.0"),
        (
            "sfreq",
            1e9,
            True,
            r"<= 100000 Hz \(no EEG amplifier samples faster\), got 1000000000\.0",
        ),
    ],
)
def test_numbers_out_of_range_are_refused_naming_the_range(kind, value, low_open, match):
    with pytest.raises(ValueError, match=match):
        check_number("x", value, kind, low_open=low_open)


def test_numbers_in_range_are_returned_and_types_checked():
    assert check_number("x", -60.0, "epoch", low_open=False) == -60.0
    assert check_number("x", 60, "epoch") == 60
    with pytest.raises(TypeError, match="'x' must be a number, got str '3'"):
        check_number("x", "3", "epoch")
    with pytest.raises(TypeError, match="'x' must be a number, got bool"):
        check_number("x", True, "epoch")
    with pytest.raises(ValueError, match="'kind' must be one of"):
        check_number("x", 1.0, "furlongs")
    assert set(LIMITS) >= {"epoch", "seconds", "sfreq", "trials"}


def test_n_jobs_is_bounded_by_the_cpu_count():
    assert max_n_jobs(2) == 2 * N_JOBS_PER_CPU == 8
    assert max_n_jobs() == N_JOBS_PER_CPU * (os.cpu_count() or 1)
    for good in (1, 8, -1, -2):
        assert check_n_jobs("n_jobs", good, cpu_count=2) == good
    msg = r"'n_jobs' must be an integer from 1 to 8 \(4 per CPU, 2 CPUs\) or from -2 to -1"
    for bad in (0, 9, 100_000, -3, -100_000):
        with pytest.raises(ValueError, match=rf"{msg} \(-1: all CPUs\), got {bad}"):
            check_n_jobs("n_jobs", bad, cpu_count=2)
    for bad in ("4", 2.0, True, None):
        with pytest.raises(TypeError, match="'--n-jobs' must be an integer, got"):
            check_n_jobs("--n-jobs", bad)

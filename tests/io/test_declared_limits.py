"""The bounds every reader and source checks before it allocates (sblr_rt.io.declared_limits)."""

from __future__ import annotations

import math

import pytest

from sblr_rt.io.declared_limits import MAX_DATA_BYTES, MAX_SFREQ, check_allocation, check_sfreq


@pytest.mark.parametrize("sfreq", [0.001, 160.0, MAX_SFREQ])
def test_rates_an_amplifier_gives_are_taken(sfreq):
    assert check_sfreq(sfreq, what="'x'") == sfreq


@pytest.mark.parametrize("sfreq", [0.0, -1.0, MAX_SFREQ * 1.01, 1e9, 1e300, math.inf, math.nan])
def test_other_rates_are_refused_naming_the_bound(sfreq):
    with pytest.raises(ValueError, match=r"'x' declares a sampling rate .*\(0, 100000\] Hz"):
        check_sfreq(sfreq, what="'x'")


def test_a_rate_that_is_no_number_is_refused():
    with pytest.raises(ValueError, match="expected a number of Hz in"):
        check_sfreq("fast", what="'x'")


def test_an_allocation_beyond_the_limit_is_refused_with_both_sizes():
    check_allocation(MAX_DATA_BYTES, what="the buffer")
    with pytest.raises(ValueError, match=r"the buffer would take 4\.0 GiB .* at most 2\.0 GiB"):
        check_allocation(2 * MAX_DATA_BYTES, what="the buffer")
    with pytest.raises(ValueError, match=r"at most 1\.0 kiB, got 2\.0 kiB"):
        check_allocation(2048, what="x", limit=1024)

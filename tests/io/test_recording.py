"""The Recording container: validation and concatenation."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.io import Recording, concatenate_recordings, read_recording


def test_concatenate(bcicomp2003_path, physionet_dir):
    a = read_recording(physionet_dir / "S001R05.edf")
    b = read_recording(physionet_dir / "S001R09.edf")
    ab = concatenate_recordings([a, b])
    assert ab.n_samples == a.n_samples + b.n_samples
    np.testing.assert_array_equal(
        ab.marker_samples, np.r_[a.marker_samples, b.marker_samples + a.n_samples]
    )
    assert ab.marker_values == a.marker_values + b.marker_values
    with pytest.raises(ValueError, match="must share 'ch_names'"):
        concatenate_recordings([a, read_recording(bcicomp2003_path)])
    with pytest.raises(ValueError, match="at least one"):
        concatenate_recordings([])


def test_recording_validation():
    with pytest.raises(ValueError, match="'ch_names'"):
        Recording(data=np.zeros((2, 5)), sfreq=10, ch_names=["a"])
    rec = Recording(
        data=np.zeros((1, 5)), sfreq=10, ch_names=["a"], marker_times=[0.3, 0.1],
        marker_values=["b", "a"],
    )  # fmt: skip
    assert rec.marker_values == ["a", "b"]  # sorted by time


def test_gaps_are_checked_and_shifted_by_concatenation():
    def rec(n, gaps=(), warnings=()):
        return Recording(
            data=np.zeros((1, n)), sfreq=10, ch_names=["a"], gaps=list(gaps),
            warnings=list(warnings),
        )  # fmt: skip

    a = rec(20, gaps=[(15, 2.0), (5, 0.5)], warnings=["a: 2 gaps"])
    assert a.gaps == [(5, 0.5), (15, 2.0)] and "2 gaps" in repr(a)
    ab = concatenate_recordings([a, rec(10, gaps=[(3, 1.0)], warnings=["b: 1 gap"])])
    assert ab.gaps == [(5, 0.5), (15, 2.0), (23, 1.0)]
    assert ab.warnings == ["a: 2 gaps", "b: 1 gap"]
    assert rec(5).gaps == [] and rec(5).warnings == []
    for bad in ([(0, 1.0)], [(5, 1.0)], [(2, 0.0)], [3]):
        with pytest.raises(ValueError, match="gap"):
            rec(5, gaps=bad)

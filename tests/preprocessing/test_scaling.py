"""Scaling: the one rule, fitted on training features and applied unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.preprocessing.scaling import apply_scaling, fit_scaling, safe_scale


def test_channel_scaling_gives_unit_rms_rows():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 4, 10)) * np.array([1e-5, 1.0, 3.0, 1e3])[None, :, None]
    off, row, col = fit_scaling(Z, "channel")
    X = apply_scaling(Z, off, row, col)
    np.testing.assert_allclose(np.sqrt(np.mean(X**2, axis=(0, 2))), 1.0)
    assert np.all(off == 0) and np.all(col == 1)


def test_channel_time_scaling_is_separable_and_centring_optional():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((30, 3, 8)) * np.linspace(1, 4, 8) + 2.0
    off, row, col = fit_scaling(Z, "channel_time", center=True)
    np.testing.assert_allclose(off, Z.mean(axis=(0, 2)))
    X = apply_scaling(Z, off, row, col)
    np.testing.assert_allclose(np.sqrt(np.mean(X**2, axis=(0, 1))), 1.0)
    off0, row0, col0 = fit_scaling(Z, None)
    np.testing.assert_array_equal(apply_scaling(Z, off0, row0, col0), Z)


def test_scaling_refuses_bad_features():
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit_scaling(np.full((2, 2, 2), np.nan), "channel")
    with pytest.raises(ValueError, match="every row"):
        fit_scaling(np.zeros((2, 2, 2)), "channel")
    np.testing.assert_allclose(safe_scale(np.array([0.0, 2.0]), "row"), [2e-12, 2.0])

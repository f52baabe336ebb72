"""The spatial stage: the operators and their algebra."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.preprocessing.spatial import spatial_operator

CHANNELS = ["FC3", "FCz", "FC4", "C5", "C3", "C1", "Cz", "C2", "C4", "C6", "CP3", "CPz", "CP4"]


def test_identity_and_common_average():
    assert np.array_equal(spatial_operator(None, CHANNELS), np.eye(len(CHANNELS)))
    S = spatial_operator("car", CHANNELS)
    x = np.random.default_rng(0).standard_normal((len(CHANNELS), 50)) + 7.0
    out = S @ x
    assert np.allclose(out.mean(axis=0), 0.0)  # the average is gone at every sample
    assert np.allclose(out, x - x.mean(axis=0))


def test_csd_equals_mne_on_data_and_removes_a_common_signal():
    import mne

    from sblr_rt.montage import make_montage

    S = spatial_operator("csd", CHANNELS)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((len(CHANNELS), 200))
    raw = mne.io.RawArray(x, mne.create_info(CHANNELS, 100.0, "eeg"), verbose="error")
    raw.set_montage(make_montage(CHANNELS), verbose="error")
    ref = mne.preprocessing.compute_current_source_density(raw, verbose="error").get_data()
    # the operator is MNE's up to one positive scale factor
    scale = np.linalg.lstsq((S @ x).reshape(-1, 1), ref.reshape(-1), rcond=None)[0][0]
    assert scale > 0
    assert np.allclose(S @ x * scale, ref, rtol=1e-6, atol=1e-9 * np.abs(ref).max())
    common = np.ones((len(CHANNELS), 1))
    assert np.abs(S @ common).max() < 1e-6 * np.abs(S).max()


def test_csd_refuses_channels_without_positions():
    with pytest.raises(ValueError, match=r"no position is known for 1: \['EOG1'\]"):
        spatial_operator("csd", [*CHANNELS, "EOG1"])


def test_unknown_stage_and_too_few_channels():
    with pytest.raises(ValueError, match="'spatial' must be one of"):
        spatial_operator("laplace", CHANNELS)
    with pytest.raises(ValueError, match="at least 3 channels, got 2"):
        spatial_operator("car", ["C3", "C4"])

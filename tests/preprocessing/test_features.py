"""Feature paths: the registry and what each path owns."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.preprocessing import FEATURE_PATHS, FEATURES, BandpowerPath, WaveformPath
from sblr_rt.preprocessing.features import CovariancePath, SpectralPath, log_covariance


def test_registry_names_every_path():
    assert FEATURES == ("waveform", "bandpower", "spectral", "covariance")
    assert all(FEATURE_PATHS[name].name == name for name in FEATURES)


def test_waveform_path_is_linear_with_baseline():
    path = WaveformPath(
        sfreq=100.0, tmin=-0.2, tmax=0.8, n_window=100, l_freq=None, h_freq=None,
        n_times=20, baseline=(-0.2, 0.0), numtaps=None,
    )  # fmt: skip
    assert path.linear and not path.filters and path.baseline_samples == (0, 20)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 3, 100))
    np.testing.assert_allclose(path.features(w + 7.0), path.features(w), atol=1e-10)
    assert path.n_rows(3) == 3 and path.grid_index().shape == (20,)
    with pytest.raises(ValueError, match="baseline"):
        WaveformPath(
            sfreq=100.0, tmin=0.0, tmax=1.0, n_window=100, l_freq=None, h_freq=None,
            n_times=None, baseline=(-1.0, 0.0), numtaps=None,
        )  # fmt: skip


def test_bandpower_path_rows_are_band_major_log_power():
    path = BandpowerPath(
        sfreq=100.0,
        n_window=80,
        bands=[(8.0, 12.0), (18.0, 26.0)],
        n_times=4,
        numtaps=None,
        reference=None,
    )
    assert not path.linear and path.centred
    assert path.n_rows(2) == 4
    assert path.row_names(["C3", "C4"]) == ["C3 8-12Hz", "C4 8-12Hz", "C3 18-26Hz", "C4 18-26Hz"]
    assert len({len(b) for b in path.filters}) == 1  # one warm-up for every band
    w = np.full((1, 4, 80), 2.0)
    np.testing.assert_allclose(path.features(w), np.log(4.0))


def test_bandpower_reference_cancels_a_gain_change_of_every_electrode():
    path = BandpowerPath(
        sfreq=100.0, n_window=80, bands=[(8.0, 12.0), (18.0, 26.0)], n_times=4, numtaps=None
    )
    assert path.reference == "channels"
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2 * 5, 80))
    gain = np.tile(rng.uniform(0.5, 2.0, 5), 2)[None, :, None]  # per electrode, both bands
    np.testing.assert_allclose(path.features(w * 3.0), path.features(w), atol=1e-10)
    Z = path.features(w).reshape(3, 2, 5, 4)
    np.testing.assert_allclose(Z.mean(axis=2), 0.0, atol=1e-12)  # relative to the scalp mean
    assert not np.allclose(path.features(w * gain), path.features(w))  # per-channel gain stays


def test_spectral_path_is_channels_by_bands_relative_to_each_channel():
    path = SpectralPath(
        sfreq=160.0, n_window=480, bands=SpectralPath.default_bands(), n_times=None, numtaps=None
    )
    n_bands = len(path.bands)
    assert (n_bands, path.n_times, path.n_rows(3)) == (14, 14, 3)
    np.testing.assert_allclose(path.freqs[[0, -1]], [7.0, 33.0])
    assert path.row_names(["C3", "Cz", "C4"]) == ["C3", "Cz", "C4"]
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, n_bands * 3, 480))
    gain = np.tile(rng.uniform(0.5, 2.0, 3), n_bands)[None, :, None]
    Z = path.features(w)
    assert Z.shape == (2, 3, n_bands)
    np.testing.assert_allclose(Z.mean(axis=2), 0.0, atol=1e-12)
    # a broadband gain of each electrode (contact, amplifier) is cancelled exactly
    np.testing.assert_allclose(path.features(w * gain), Z, atol=1e-10)
    plain = SpectralPath(
        sfreq=160.0, n_window=480, bands=path.bands, n_times=None, numtaps=None, reference=None
    ).features(w)
    np.testing.assert_allclose(plain[0, 1, 2], np.log(np.mean(w[0, 2 * 3 + 1] ** 2)))
    with pytest.raises(ValueError, match="'reference' must be one of"):
        SpectralPath(
            sfreq=160.0, n_window=480, bands=path.bands, n_times=None, numtaps=None,
            reference="channels",
        )  # fmt: skip


def test_covariance_path_is_the_log_of_the_oas_covariance():
    from scipy.linalg import logm
    from sklearn.covariance import oas

    rng = np.random.default_rng(3)
    windows = rng.standard_normal((3, 4, 50)) * np.array([1.0, 2.0, 0.5, 3.0])[:, None]
    Z = CovariancePath(
        sfreq=100.0, n_window=50, bands=[(8.0, 30.0)], n_picks=4, numtaps=None
    ).features(windows)
    for w, z in zip(windows, Z, strict=True):
        expected = logm(oas(w.T)[0]).real
        np.testing.assert_allclose(z, expected, atol=1e-10)


def test_covariance_path_keeps_flat_and_rank_deficient_windows_finite():
    rng = np.random.default_rng(4)
    flat = np.zeros((1, 3, 40))
    deficient = np.repeat(rng.standard_normal((1, 1, 40)), 3, axis=1)  # one source, 3 copies
    Z = log_covariance(np.concatenate([flat, deficient]))
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z, Z.transpose(0, 2, 1), atol=1e-12)


def test_covariance_path_checks_its_band_and_grid():
    with pytest.raises(ValueError, match="one \\(low, high\\) band"):
        CovariancePath(sfreq=100.0, n_window=50, bands=[(8, 12), (12, 30)], n_picks=3,
                       numtaps=None)  # fmt: skip
    with pytest.raises(ValueError, match="number of channels"):
        CovariancePath.from_params(
            sfreq=100.0, n_window=50, bands=[(8.0, 30.0)], n_picks=3, numtaps=None,
            n_times=5, baseline=None,
        )  # fmt: skip

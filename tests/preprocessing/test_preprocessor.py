"""Preprocessing: offline == chunked streaming, linear operators, resampling, errors."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.preprocessing import Preprocessor

CH = ["Fz", "C3", "Cz", "C4", "Pz"]


def _pre(features="waveform", **kw):
    params = dict(
        ch_names=CH,
        sfreq=160.0,
        tmin=0.5,
        tmax=2.5,
        picks=["C4", "C3", "Cz"],
        features=features,
    )
    if features == "waveform":
        params.update(l_freq=8.0, h_freq=30.0, n_times=40)
    params.update(kw)
    return Preprocessor(**params)


def _chunked(pre, data, rng, start=0):
    filt = pre.make_streaming_filter()
    out, i = [], start
    while i < data.shape[1]:
        n = int(rng.integers(1, 40))
        out.append(filt.process(data[:, i : i + n]))
        i += n
    return np.concatenate(out, axis=1)


def _epochs(pre, data, onsets):
    starts = np.asarray(onsets) + round(pre.tmin * pre.sfreq) - pre.n_pad
    return np.stack([data[:, s : s + pre.n_times_raw] for s in starts])


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_offline_equals_chunked_streaming(features):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((len(CH), 4000)) * 1e-5
    pre = _pre(features)
    offline = pre.filter_continuous(data)
    online = _chunked(pre, data, rng)
    np.testing.assert_allclose(online, offline, rtol=1e-12, atol=1e-12 * np.abs(offline).max())
    # A stream joined at any time agrees exactly after the FIR warm-up.
    join = 1234
    late = pre.make_streaming_filter().process(data[:, join:])
    np.testing.assert_array_equal(late[:, pre.n_pad :], offline[:, join + pre.n_pad :])


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_features_same_through_epochs_and_stream(features):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((len(CH), 3000))
    pre = _pre(features)
    onsets = [600, 1100, 1900, 2500]
    raw = _epochs(pre, data, onsets)
    pre.fit(raw)
    offline = pre.transform(raw)
    assert offline.shape == (4, pre.n_rows, pre.n_columns)
    # Online: stream in chunks, keep the filtered output, cut each window at its end.
    filtered = _chunked(pre, data, rng)
    w0 = np.asarray(onsets) + round(pre.tmin * pre.sfreq)
    windows = np.stack([filtered[:, s : s + pre.n_window] for s in w0])
    online = pre.transform_filtered(windows)
    np.testing.assert_allclose(online, offline, rtol=1e-9, atol=1e-9)
    # Per-epoch filtering equals windows cut from the continuous offline filter, to rounding.
    cont = pre.filter_continuous(data)
    np.testing.assert_allclose(
        pre.filter_epochs(raw),
        np.stack([cont[:, s : s + pre.n_window] for s in w0]),
        rtol=1e-10,
        atol=1e-12 * np.abs(cont).max(),
    )


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_windows_sliced_from_a_filtered_stretch_equal_each_window_filtered_alone(features):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((len(CH), 3000))
    pre = _pre(features, spatial="car")
    start, n = 200, 700
    stretch = pre.filter_stretch(data[:, start : start + pre.n_pad + n])
    assert stretch.shape == (len(pre.pick_names) * max(1, len(pre.filters)), n)
    onsets = np.arange(start, start + n - pre.n_window + 1, 37) - round(pre.tmin * pre.sfreq)
    onsets += pre.n_pad
    alone = pre.filter_epochs(_epochs(pre, data, onsets))
    sliced = np.stack([stretch[:, i : i + pre.n_window] for i in range(0, len(onsets) * 37, 37)])
    np.testing.assert_allclose(sliced, alone, rtol=1e-10, atol=1e-12 * np.abs(alone).max())
    with pytest.raises(ValueError, match="more than the"):
        pre.filter_stretch(data[:, : pre.n_pad])
    with pytest.raises(ValueError, match="must have shape"):
        pre.filter_stretch(data[:3])


def test_real_recording_offline_equals_streaming(physionet_dir):
    from sblr_rt.io import read_recording

    rec = read_recording(physionet_dir / "S001R06.edf")
    rng = np.random.default_rng(2)
    for features in ("waveform", "bandpower"):
        pre = Preprocessor(
            ch_names=rec.ch_names,
            sfreq=rec.sfreq,
            tmin=0.5,
            tmax=3.5,
            picks=["C3", "Cz", "C4", "FC3", "FC4"],
            features=features,
            l_freq=8.0 if features == "waveform" else None,
            h_freq=30.0 if features == "waveform" else None,
        )
        onsets = np.round(rec.marker_times[3:10] * rec.sfreq).astype(int)
        raw = _epochs(pre, rec.data, onsets)
        offline = pre.fit(raw).transform(raw)
        filtered = _chunked(pre, rec.data[:, :12000], rng)
        w0 = onsets + round(pre.tmin * pre.sfreq)
        online = pre.transform_filtered(np.stack([filtered[:, s : s + pre.n_window] for s in w0]))
        np.testing.assert_allclose(online, offline, rtol=1e-8, atol=1e-8)


def test_linear_operators_fold_the_waveform_path():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((len(CH), 2000))
    pre = _pre(baseline=(0.5, 1.0), scaling="channel_time")
    raw = _epochs(pre, data, [500, 900, 1300])
    X = pre.fit(raw).transform(raw)
    S, T = pre.linear_operators()
    assert S.shape == (3, len(CH)) and T.shape == (pre.n_window, pre.n_columns)
    # Every channel filtered alike, in the raw order: X = S @ filtered @ T.
    everything = Preprocessor(
        ch_names=CH, sfreq=160.0, tmin=0.5, tmax=2.5, l_freq=8.0, h_freq=30.0, n_times=40
    )
    filtered_all = everything.filter_epochs(raw)
    np.testing.assert_allclose(S @ filtered_all @ T, X, rtol=1e-10, atol=1e-10)
    S2, T2 = pre.linear_operators(include_filter=True)
    assert T2.shape == (pre.n_times_raw, pre.n_columns)
    np.testing.assert_allclose(S2 @ raw @ T2, X, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="waveform path only"):
        _pre("bandpower").fit(raw).linear_operators()


def test_bandpower_layout_and_times():
    pre = _pre("bandpower", bands=[(8, 12), (18, 26)], n_times=5)
    assert pre.n_rows == 6
    assert pre.row_names[:2] == ["C4 8-12Hz", "C3 8-12Hz"]
    assert pre.times.shape == (5,) and pre.tmin < pre.times[0] < pre.times[-1] < pre.tmax
    assert not pre.is_linear


def test_for_channels_reorders():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((len(CH), 2000))
    pre = _pre()
    raw = _epochs(pre, data, [500, 900])
    X = pre.fit(raw).transform(raw)
    order = [4, 2, 0, 3, 1]
    other = pre.for_channels([CH[i] for i in order] + ["EOG"])
    raw2 = np.concatenate([raw[:, order], np.zeros((2, 1, raw.shape[2]))], axis=1)
    np.testing.assert_array_equal(other.transform(raw2), X)


def test_errors():
    with pytest.raises(ValueError, match="missing from the data"):
        _pre(picks=["C3", "T7"])
    with pytest.raises(ValueError, match="features"):
        _pre(features="spectrum")
    pre = _pre()
    with pytest.raises(RuntimeError, match=r"call fit\(\)"):
        pre.transform(np.zeros((1, len(CH), pre.n_times_raw)))
    with pytest.raises(ValueError, match="filter warm-up"):
        pre.fit(np.zeros((1, len(CH), pre.n_window)))
    with pytest.raises(ValueError, match="n_times"):
        _pre(n_times=10_000)
    with pytest.raises(ValueError, match="baseline"):
        _pre(baseline=(0.0, 0.2))
    with pytest.raises(ValueError, match="chunk"):
        pre.make_streaming_filter().process(np.zeros((3, 10)))
    with pytest.raises(TypeError, match="ch_names"):
        Preprocessor(ch_names="C3", sfreq=100.0, tmin=0.0, tmax=1.0)


@pytest.mark.parametrize("name", ["sfreq", "tmin", "tmax", "l_freq", "filter_length"])
@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_non_finite_numbers_refused(name, value):
    with pytest.raises(ValueError, match=f"'{name}' must be a finite number"):
        _pre(**{name: value})


# it checks its design when made, not in fit (its Notes say why): set_params raises at once
@pytest.mark.filterwarnings("ignore:.*occurred during set_params:UserWarning")
@pytest.mark.parametrize("features", ["waveform", "bandpower", "spectral"])
def test_the_preprocessor_keeps_its_parameters_as_given_and_clones(features):
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_set_params,
    )

    pre = _pre(features, picks=None, spatial="car")
    check_no_attributes_set_in_init("Preprocessor", pre)
    check_get_params_invariance("Preprocessor", pre)
    check_set_params("Preprocessor", pre)
    params = pre.get_params()
    # what was given, not what it resolved to
    assert params["picks"] is None and params["n_times"] == (
        40 if features == "waveform" else None
    )
    assert params["bands"] is None and params["reference"] == "default"
    assert params["spatial_matrix"] is None
    assert pre.pick_names == CH and pre.spatial_operator.shape == (5, 5)
    assert pre.n_columns > 0 and pre.n_rows == 5 * (
        len(pre.freq_bands) if features == "bandpower" else 1
    )
    rng = np.random.default_rng(0)
    raw = rng.standard_normal((6, 5, pre.n_times_raw))
    twin = clone(pre.fit(raw))
    assert not twin.is_fitted and twin.get_config() == pre.get_config()
    np.testing.assert_array_equal(twin.fit(raw).transform(raw), pre.transform(raw))


def test_set_params_designs_again_and_drops_the_fitted_scaling():
    pre = _pre()
    raw = np.random.default_rng(1).standard_normal((4, 5, pre.n_times_raw))
    pre.fit(raw)
    assert pre.set_params(n_times=20, picks=["Cz"]) is pre
    assert not pre.is_fitted and (pre.n_rows, pre.n_columns) == (1, 20)
    assert pre.fit(raw).transform(raw).shape == (4, 1, 20)
    with pytest.raises(ValueError, match="'picks' names channels missing"):
        pre.set_params(picks=["Oz"])


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("tmin", -100.0, ValueError),  # the command line's range: an epoch within a minute
        ("n_times", 2.5, TypeError),
        ("n_times", 0, ValueError),
        ("bands", [(8.0, 13.0, 20.0)], ValueError),
        ("baseline", (0.5,), ValueError),
        ("scaling", "z", ValueError),
        ("filter_length", -1.0, ValueError),
    ],
)
def test_the_preprocessor_and_a_configuration_refuse_alike(name, value, error):
    from sblr_rt.calibration.concerns import EpochSettings, PreprocessingSettings

    with pytest.raises(error) as by_preprocessor:
        _pre("bandpower" if name == "bands" else "waveform", **{name: value})
    settings = EpochSettings if name == "tmin" else PreprocessingSettings
    with pytest.raises(error) as by_configuration:
        settings(**{name: value})
    assert str(by_preprocessor.value) == str(by_configuration.value)
    assert f"'{name}' must" in str(by_preprocessor.value)


def test_a_rate_beyond_any_amplifier_is_refused():
    with pytest.raises(ValueError, match=r"'sfreq' must be a finite number > 0 and <= 100000 Hz"):
        _pre(sfreq=1e6)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(ch_names=None), "'ch_names' must be a list of str, got None"),
        (dict(ch_names=5), "'ch_names' must be a list of str, got 5"),
        (dict(spatial="car", spatial_matrix="x"), r"'spatial_matrix' must be a \(3, 3\) array"),
    ],
)
def test_a_wrong_kind_of_channel_list_or_operator_is_named(params, message):
    with pytest.raises(TypeError, match=message):
        _pre(**params)

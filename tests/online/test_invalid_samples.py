"""A sample beyond 1 V is no measurement: a gap, as NaN is, in every incremental form.

A finite burst too large for float64 to filter exactly (1e100, 1e30) used to reach the
filter bank, whose FFT rounding then spoilt windows past the filter's taps: finite wrong
scores, published. Now the streaming state zeroes every sample beyond the bound of the
model's unit (:func:`~sblr_rt.units.max_abs_sample`) before any filter sees it and
refuses every window holding it; every other window equals the offline pipeline.
"""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier
from sblr_rt.units import MAX_ABS_VOLTS, invalid_samples, max_abs_sample
from tests.models import fit_model

#: Feature paths and the fast form each runs on.
FORMS = {
    "bandpower": "filtered",
    "spectral": "filtered-spectral",
    "covariance": "filtered-covariance",
    "waveform": "projected",
}
BOUND = 1e6  # 1 V in microvolts, the unit of the models here
SCALE = 10.0  # the signal's standard deviation, microvolts


@pytest.fixture(scope="module")
def models():
    """One model per feature path, calibrated in microvolts, 6 channels at 100 Hz."""
    ch_names = [f"EEG{i:03d}" for i in range(6)]
    extra = {
        "bandpower": {"bands": ((8.0, 13.0), (13.0, 30.0))},
        "waveform": {"l_freq": 1.0, "h_freq": 20.0},  # a filter folded into the factors
    }
    out = {}
    for features in FORMS:
        out[features], _, _ = fit_model(
            ch_names, sfreq=100.0, tmin=0.0, tmax=1.0, informative=ch_names, n_epochs=30,
            features=features, metadata={"unit": "uV"}, estimator={"rank": 2, "max_iter": 50},
            **extra.get(features, {}),
        )  # fmt: skip
    return out


def _stream(model, data, chunk=7):
    """Push ``data`` in chunks; yield ``(state, stop)`` after each chunk of a full window."""
    clf = OnlineClassifier(model)
    state = clf.streaming(capacity=2 * clf.n_times_raw)
    times = np.arange(len(data)) / clf.sfreq
    for pos in range(0, len(data), chunk):
        state.push(data[pos : pos + chunk], times[pos : pos + chunk])
        if state.n_pushed >= clf.n_times_raw:
            yield state, state.n_pushed


def _offline(model, data, stop):
    n = model.n_times_raw
    return np.atleast_1d(model.decision_function(data[stop - n : stop].T[None])[0])


def test_the_bound_is_one_volt_in_the_models_unit():
    assert MAX_ABS_VOLTS == 1.0
    assert [max_abs_sample(u) for u in ("V", "millivolts", "µV", "nV")] == [1.0, 1e3, 1e6, 1e9]
    assert max_abs_sample(None) == max_abs_sample("unknown") == 1e9  # beyond 1 V in any unit
    x = np.array([0.0, BOUND, -BOUND, np.nextafter(BOUND, np.inf), -1e30, np.nan, np.inf])
    np.testing.assert_array_equal(invalid_samples(x, BOUND), [0, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("burst", [1e100, -1e30, np.nextafter(BOUND, np.inf)])
@pytest.mark.parametrize("features", list(FORMS))
def test_no_decision_from_a_window_holding_a_sample_beyond_the_bound(models, features, burst):
    """Refused while the warm-up or window holds it; every other window equals offline."""
    model = models[features]
    n = model.n_times_raw
    data = SCALE * np.random.default_rng(4).standard_normal((5 * n, 6))
    first, last = n + 17, n + 19  # a burst of three samples on one channel
    data[first : last + 1, 3] = burst
    refused = after = 0
    for state, stop in _stream(model, data):
        assert state.form == FORMS[features]
        assert state.max_abs == BOUND
        if stop - n <= last and first < stop:
            assert state.why_not(stop) == "nonfinite"
            with pytest.raises(ValueError, match="nonfinite"):
                state.decide(stop)
            refused += 1
            continue
        assert state.why_not(stop) is None
        got = state.decide(stop)["score"]
        np.testing.assert_allclose(got, _offline(model, data, stop), rtol=1e-9, atol=1e-9)
        after += stop - n > last
    assert refused >= n // 7 and after >= 2 * n // 7


@pytest.mark.parametrize("value", [BOUND, -BOUND, 0.5 * BOUND])
@pytest.mark.parametrize("features", list(FORMS))
def test_a_sample_within_the_bound_is_processed(models, features, value):
    """A large sample at most 1 V is a measurement: every window is decided, as offline.

    The filter bank's rounding of it stays below the usual tolerance; the running sums of
    squares of the band-power and spectral forms lose more of the small powers after it
    (their scores here agree to about 1e-7).
    """
    model = models[features]
    n = model.n_times_raw
    data = SCALE * np.random.default_rng(5).standard_normal((4 * n, 6))
    data[n + 17, 3] = value
    tol = 1e-6 if features in ("bandpower", "spectral") else 1e-9
    decided = 0
    for state, stop in _stream(model, data):
        assert state.why_not(stop) is None
        decision = state.decide(stop)
        offline = _offline(model, data, stop)
        np.testing.assert_allclose(decision["score"], offline, rtol=tol, atol=tol)
        assert decision["label"] == model.predict(data[stop - n : stop].T[None])[0]
        decided += 1
    assert decided >= 3 * n // 7


@pytest.mark.parametrize("burst", [1e30, np.nan])
def test_a_refused_trial_leaves_the_run_mean_alone_online_and_offline(burst):
    """Run centring: the trial holding the burst gets no decision online and NaN offline;
    the later trials' run-centred scores are :meth:`BCIModel.decision_function_run`'s."""
    ch_names = [f"EEG{i:03d}" for i in range(6)]
    model, _, _ = fit_model(
        ch_names, sfreq=100.0, tmin=0.0, tmax=1.0, informative=ch_names, n_epochs=20,
        run_offsets=[0.0, 2.0], warmup=1.0, metadata={"unit": "uV"},
        estimator={"rank": 1, "max_iter": 50},
    )  # fmt: skip
    n = model.n_times_raw
    data = SCALE * np.random.default_rng(6).standard_normal((10 * n, 6)) + 3.0
    stops = [k * n for k in range(1, 10)]
    data[stops[3] - 40, 2] = burst  # inside the fourth trial's window
    clf = OnlineClassifier(model)
    state = clf.streaming(capacity=10 * n)
    state.push(data, np.arange(len(data)) / clf.sfreq)
    online = [
        state.decide(stop, trial=True)["score"] if state.why_not(stop) is None else None
        for stop in stops
    ]
    offline = model.decision_function_run(np.stack([data[s - n : s].T for s in stops]))
    assert online[3] is None and np.isnan(offline[3]).all()
    for k in (0, 1, 2, 4, 5, 6, 7, 8):
        np.testing.assert_allclose(online[k], offline[k], rtol=1e-9, atol=1e-9)
    shifted = model.decision_function(np.stack([data[s - n : s].T for s in stops[4:]]))
    assert not np.allclose(offline[4:], shifted)  # the run's mean moved the scores

"""The filtered band-power form: running sums that survive bursts, breaks and rebases."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, 1e300])
def test_a_burst_does_not_poison_the_running_sums(make_model, bad):
    """After a burst of non-finite (or huge) samples and a break, decisions equal plain."""
    model = make_model(features="bandpower")
    clf = OnlineClassifier(model)
    n = clf.n_times_raw
    rng = np.random.default_rng(7)
    data = rng.standard_normal((5 * n, len(clf.ch_names)))
    times = np.arange(5 * n) / clf.sfreq
    data[n : n + 30, 1:3] = bad
    fast = clf.streaming(capacity=2 * n)
    plain = clf.streaming(capacity=2 * n, form="plain")
    assert fast.form == "filtered"
    for state in (fast, plain):
        for i in range(0, 5 * n, 50):
            if i == n + 50 and bad == 1e300:
                state.mark_break()  # a huge finite burst is data: the loop breaks after it
            state.push(data[i : i + 50], times[i : i + 50])
    for stop in range(n + 31 + n + 20, 5 * n + 1, 37):
        reason = fast.why_not(stop)
        assert reason == plain.why_not(stop)
        if reason is not None:
            continue
        got = fast.decide(stop)
        assert np.isfinite(got["score"]) and got["label"] is not None
        np.testing.assert_allclose(got["score"], plain.decide(stop)["score"], rtol=1e-9)
    assert fast.why_not(5 * n) is None


def test_rebased_sums_still_give_windows_from_before_the_rebase(make_model):
    """Windows held across rebases (every ``capacity`` samples, and at breaks) stay exact."""
    model = make_model(features="bandpower")
    clf = OnlineClassifier(model)
    n = clf.n_times_raw
    rng = np.random.default_rng(8)
    data = 1e3 * rng.standard_normal((6 * n, len(clf.ch_names)))
    times = np.arange(6 * n) / clf.sfreq
    state = clf.streaming(capacity=n + 40)
    for i in range(0, 6 * n, 17):
        state.push(data[i : i + 17], times[i : i + 17])
        stop = state.n_pushed
        for s in (stop, stop - 39):
            if s >= n and state.why_not(s) is None:
                ref = model.decision_function(data[s - n : s].T[None])[0]
                np.testing.assert_allclose(state.decide(s)["score"], ref, rtol=1e-9)


@pytest.mark.parametrize("features", ["bandpower", "spectral"])
def test_settling_changes_when_work_is_done_not_the_scores(make_model, features):
    """Deferred filter work run after each decision (as the loop does) or left to push."""
    model = make_model(features=features, n_channels=5)
    clf = OnlineClassifier(model)
    n = clf.n_times_raw
    rng = np.random.default_rng(9)
    data = rng.standard_normal((4 * n, len(clf.ch_names)))
    times = np.arange(4 * n) / clf.sfreq
    lazy, eager = clf.streaming(), clf.streaming()
    got = {id(lazy): [], id(eager): []}
    for i in range(0, 4 * n, 7):
        for state in (lazy, eager):
            state.push(data[i : i + 7], times[i : i + 7])
            if state.why_not(state.n_pushed) is None:
                got[id(state)].append(state.decide(state.n_pushed)["score"])
        eager.settle()
    assert len(got[id(lazy)]) > 10
    np.testing.assert_array_equal(got[id(lazy)], got[id(eager)])
    stop = eager.n_pushed
    ref = model.decision_function(data[stop - n : stop].T[None])[0]
    np.testing.assert_allclose(got[id(eager)][-1], ref, rtol=1e-9)


@pytest.mark.parametrize("features", ["bandpower", "spectral"])
def test_decisions_use_the_folded_weights(make_model, features, monkeypatch):
    """Everything after the log is one affine map, checked at construction, so folded: a
    decision applies neither the scaling nor the factors, and equals the offline model."""
    from sblr_rt.online.incremental import bandpower

    model = make_model(features=features)
    clf = OnlineClassifier(model)
    n = clf.n_times_raw
    data = np.random.default_rng(10).standard_normal((3 * n, len(clf.ch_names)))
    times = np.arange(3 * n) / clf.sfreq
    state = clf.streaming()

    def per_decision(*_args, **_kwargs):
        raise AssertionError("a decision applied the rules after the log one by one")

    monkeypatch.setattr(bandpower, "apply_scaling", per_decision)
    monkeypatch.setattr(type(state.incremental_form.scoring), "scores_from_features", per_decision)
    state.push(data, times)
    stops = [s for s in range(n, 3 * n + 1, 29) if state.why_not(s) is None]
    assert len(stops) > 5
    for stop in stops:
        ref = model.decision_function(data[stop - n : stop].T[None])[0]
        np.testing.assert_allclose(state.decide(stop)["score"], ref, rtol=1e-9)

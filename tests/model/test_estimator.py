"""The estimator's API: shapes, labels, factors, patterns, warnings and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sblr_rt.model import (
    SparseBilinearLogisticRegression,
    ZeroTrapWarning,
    canonical_factors,
    l1_penalty_max,
)


def _data(n=60, s=5, t=7, n_classes=2, shift=1.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, s, t))
    pattern = np.outer(rng.standard_normal(s), np.hanning(t))
    X += shift * (y[:, None, None] - (n_classes - 1) / 2) * pattern
    return X, y


def test_binary_shapes_labels_and_scores():
    X, y = _data()
    labels = np.array(["left", "right"])[y]
    clf = SparseBilinearLogisticRegression(rank=2, mu1=0.001).fit(X, labels)
    assert clf.classes_.tolist() == ["left", "right"]
    assert clf.spatial_.shape == (5, 2) and clf.temporal_.shape == (7, 2)
    assert clf.spatial_patterns_.shape == (5, 2)
    assert clf.intercept_.shape == (1,)
    assert isinstance(clf.n_iter_, int) and clf.objective_.shape == (clf.n_iter_ + 1,)
    scores = clf.decision_function(X)
    # score = tr(U^T X V) + b, positive means classes_[1].
    ref = np.einsum("nst,sr,tr->n", X, clf.spatial_, clf.temporal_) + clf.intercept_[0]
    np.testing.assert_allclose(scores, ref, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "right", "left"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)))
    assert clf.score(X, labels) > 0.9


@pytest.mark.parametrize("multi_class", ["ovr", "multinomial"])
def test_multiclass_shapes(multi_class):
    X, y = _data(n=90, n_classes=3)
    clf = SparseBilinearLogisticRegression(rank=2, multi_class=multi_class).fit(X, y)
    assert clf.spatial_.shape == (3, 5, 2) and clf.temporal_.shape == (3, 7, 2)
    assert clf.spatial_patterns_.shape == (3, 5, 2)
    assert clf.intercept_.shape == (3,)
    scores = clf.decision_function(X)
    assert scores.shape == (90, 3)
    ref = np.einsum("nst,csr,ctr->nc", X, clf.spatial_, clf.temporal_) + clf.intercept_
    np.testing.assert_allclose(scores, ref, atol=1e-12)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, 1)])
    assert clf.score(X, y) > 0.8
    if multi_class == "ovr":
        assert clf.n_iter_.shape == (3,) and len(clf.objective_) == 3
    else:
        # classes_[0] is the reference class: zero factors and intercept, zero score.
        assert not np.any(clf.spatial_[0]) and clf.intercept_[0] == 0
        np.testing.assert_array_equal(scores[:, 0], 0.0)
        assert clf.objective_.shape == (clf.n_iter_ + 1,)


def test_multinomial_with_two_classes_is_the_binary_model():
    X, y = _data()
    a = SparseBilinearLogisticRegression(mu1=0.01, multi_class="ovr").fit(X, y)
    b = SparseBilinearLogisticRegression(mu1=0.01, multi_class="multinomial").fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))


def test_two_dimensional_input_is_one_time_point_per_feature():
    X, y = _data(t=1)
    a = SparseBilinearLogisticRegression().fit(X[:, :, 0], y)
    b = SparseBilinearLogisticRegression().fit(X, y)
    np.testing.assert_allclose(a.decision_function(X[:, :, 0]), b.decision_function(X))
    assert a.n_features_in_ == 5 and a.n_times_in_ == 1


def test_canonical_factors():
    rng = np.random.default_rng(1)
    U, V = rng.standard_normal((6, 3)), rng.standard_normal((8, 3))
    U[:, 1] *= 10  # make the second component the strongest
    V[:, 2] = 0  # and the third zero
    spatial, temporal, order, _ = canonical_factors(U, V)
    np.testing.assert_allclose(spatial @ temporal.T, U @ V.T, atol=1e-12)
    assert order[0] == 1 and order[-1] == 2
    np.testing.assert_allclose(np.linalg.norm(spatial[:, :2], axis=0), 1.0)
    assert not np.any(spatial[:, 2]) and not np.any(temporal[:, 2])
    strength = np.linalg.norm(spatial, axis=0) * np.linalg.norm(temporal, axis=0)
    assert np.all(np.diff(strength) <= 0)
    for k in range(2):  # sign rule: largest-magnitude spatial entry positive
        assert spatial[np.argmax(np.abs(spatial[:, k])), k] > 0
    # Invariant to the paired sign flip and column order the penalties leave free.
    again = canonical_factors(-U[:, [2, 0, 1]], -V[:, [2, 0, 1]])
    np.testing.assert_allclose(again[0], spatial, atol=1e-12)
    np.testing.assert_allclose(again[1], temporal, atol=1e-12)


def test_estimator_canonical_factors_keep_the_weights():
    X, y = _data(n=90, n_classes=3)
    clf = SparseBilinearLogisticRegression(rank=2, mu1=0.001).fit(X, y)
    spatial, temporal = clf.canonical_factors()
    np.testing.assert_allclose(
        np.einsum("csr,ctr->cst", spatial, temporal),
        np.einsum("csr,ctr->cst", clf.spatial_, clf.temporal_),
        atol=1e-12,
    )


def test_spatial_patterns_are_haufe_patterns():
    # Haufe et al. 2014 / MNE LinearModel.patterns_: Cov(features) @ filter, where the
    # features of component k are the temporally projected epochs X_i v_k.
    X, y = _data(n=80, s=6, t=9)
    # the paper's route computes the patterns from X itself (the fast one from float32)
    clf = SparseBilinearLogisticRegression(rank=2, solver="paper").fit(X, y)
    for k in range(2):
        Z = X @ clf.temporal_[:, k]
        np.testing.assert_allclose(
            clf.spatial_patterns_[:, k], np.cov(Z.T) @ clf.spatial_[:, k], rtol=1e-10
        )


def test_zero_trap_warning_and_l1_penalty_max():
    X, y = _data(shift=0.5)
    mu1_max, nu1_max = l1_penalty_max(X, y)
    # V bounded by its ridge: with mu1 above the start's sup-norm, U collapses for good.
    clf = SparseBilinearLogisticRegression(mu1=1.01 * mu1_max, nu2=1.0)
    with pytest.warns(ZeroTrapWarning) as record:
        clf.fit(X, y)
    messages = [str(w.message) for w in record]
    assert any(f"'mu1'={1.01 * mu1_max:.4g} >= {mu1_max:.4g}" in m for m in messages)
    assert any("fitted factors are all zero" in m for m in messages)
    assert not np.any(clf.spatial_)
    # the default route takes the moments from its float32 copy
    np.testing.assert_allclose(clf.l1_penalty_max_[0], [mu1_max, nu1_max], rtol=1e-6)
    with pytest.warns(ZeroTrapWarning) as record:  # the penalty named, then the collapse
        SparseBilinearLogisticRegression(nu1=1.01 * nu1_max, mu2=1.0).fit(X, y)
    assert any("'nu1'" in str(w.message) for w in record)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroTrapWarning)
        fitted = SparseBilinearLogisticRegression(mu1=0.2 * mu1_max, nu1=0.2 * nu1_max).fit(X, y)
    assert np.any(fitted.spatial_) and np.any(fitted.temporal_)


def test_l1_penalty_max_multiclass_is_the_largest_over_classes():
    X, y = _data(n=90, n_classes=3)
    mu1_max, nu1_max = l1_penalty_max(X, y, multi_class="ovr")
    clf = SparseBilinearLogisticRegression().fit(X, y)
    np.testing.assert_allclose([mu1_max, nu1_max], clf.l1_penalty_max_.max(axis=0), rtol=1e-6)
    assert clf.l1_penalty_max_.shape == (3, 2)


def test_warm_start_continues_from_previous_fit():
    X, y = _data()
    clf = SparseBilinearLogisticRegression(mu1=0.005, nu2=0.05, tol=1e-6, warm_start=True)
    clf.fit(X, y)
    first = clf.n_iter_
    clf.fit(X, y)
    assert clf.n_iter_ < first
    assert clf.objective_[0] == pytest.approx(clf.objective_[-1], rel=1e-5)
    cold = clone(clf).set_params(warm_start=False).fit(X, y)
    assert cold.n_iter_ == first


def test_random_init_is_reproducible():
    X, y = _data()
    a = SparseBilinearLogisticRegression(init="random", random_state=0).fit(X, y)
    b = SparseBilinearLogisticRegression(init="random", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.spatial_, b.spatial_)


X_OK, Y_OK = _data(n=20, s=4, t=5)


@pytest.mark.parametrize(
    ("params", "X", "y", "error", "match"),
    [
        ({}, X_OK[:, :, :, None], Y_OK, ValueError, r"'X' must be a 3-D array.*got a 4-D"),
        ({}, X_OK[0, 0], Y_OK, ValueError, "Expected 2D array, got 1D array"),
        (
            {},
            np.where(np.arange(X_OK.size).reshape(X_OK.shape) == 7, np.nan, X_OK),
            Y_OK,
            ValueError,
            "Input X contains NaN",
        ),
        (
            {},
            np.where(np.arange(X_OK.size).reshape(X_OK.shape) == 7, np.inf, X_OK),
            Y_OK,
            ValueError,
            "Input X contains infinity",
        ),
        ({}, X_OK, np.zeros(20), ValueError, r"at least 2 classes.*got 1 class"),
        ({}, X_OK, Y_OK[:-1], ValueError, r"inconsistent numbers of samples: \[20, 19\]"),
        ({"mu1": -0.1}, X_OK, Y_OK, ValueError, r"'mu1' parameter .* range \[0.0, inf\).*-0.1"),
        ({"nu2": -1}, X_OK, Y_OK, ValueError, r"'nu2' parameter .*Got -1"),
        ({"rank": 0}, X_OK, Y_OK, ValueError, r"'rank' parameter .*Got 0"),
        ({"rank": 5}, X_OK, Y_OK, ValueError, r"'rank' must be at most .* = 4; got 5"),
        ({"rank": 1.5}, X_OK, Y_OK, TypeError, r"'rank' parameter .* int"),
        ({"multi_class": "ova"}, X_OK, Y_OK, ValueError, r"'multi_class' parameter.*'ova'"),
        ({"eta": 1.0}, X_OK, Y_OK, ValueError, r"'eta' parameter .*\(1.0, inf\)"),
        ({}, X_OK, np.linspace(0, 1, 20), ValueError, "Unknown label type"),
        ({}, X_OK.astype(complex), Y_OK, ValueError, "Complex data not supported"),
    ],
)
def test_bad_fit_input(params, X, y, error, match):
    with pytest.raises(error, match=match):
        SparseBilinearLogisticRegression(**params).fit(X, y)


def test_bad_predict_input():
    clf = SparseBilinearLogisticRegression().fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match=r"X has 3 features, but .* expecting 4 features"):
        clf.predict(X_OK[:, :3])
    with pytest.raises(ValueError, match=r"n_times=4, but .* fitted with n_times=5"):
        clf.decision_function(X_OK[:, :, :4])
    with pytest.raises(ValueError, match=r"'X' must be a 3-D array"):
        clf.predict_proba(X_OK[..., None])
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted yet"):
        SparseBilinearLogisticRegression().predict(X_OK)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_unchecked_input_gives_the_checked_results(n_classes):
    """check_input=False (an array checked once by the caller) changes no prediction."""
    from sblr_rt.model._fitting import check_X

    X, y = _data(n=60, n_classes=n_classes)
    clf = SparseBilinearLogisticRegression(rank=2, mu1=0.001).fit(X, y)
    Xc, _ = check_X(X, estimator=clf, reset=False)
    for method in ("decision_function", "predict_proba", "predict"):
        checked = getattr(clf, method)(X)
        np.testing.assert_array_equal(getattr(clf, method)(Xc, check_input=False), checked)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_from_factors_rebuilds_the_same_predictions(n_classes):
    X, y = _data(n=60, n_classes=n_classes)
    clf = SparseBilinearLogisticRegression(rank=2, mu1=0.001, multi_class="multinomial")
    clf.fit(X, y)
    again = SparseBilinearLogisticRegression.from_factors(
        clf.spatial_,
        clf.temporal_,
        clf.intercept_,
        clf.classes_,
        spatial_patterns=clf.spatial_patterns_,
        multi_class="multinomial",
    )
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.rank == 2 and not hasattr(again, "n_iter_")
    info = {"n_iter": clf.n_iter_, "objective": clf.objective_}
    with_info = SparseBilinearLogisticRegression.from_factors(
        clf.spatial_, clf.temporal_, clf.intercept_, clf.classes_, fit_info=info
    )
    assert with_info.n_iter_ is clf.n_iter_ and with_info.objective_ is clf.objective_
    with pytest.raises(ValueError, match=r"'fit_info' may hold .* got \['tol'\]"):
        SparseBilinearLogisticRegression.from_factors(
            clf.spatial_, clf.temporal_, clf.intercept_, clf.classes_, fit_info={"tol": 1}
        )
    with pytest.raises(ValueError, match="must be 3-D for 3 classes"):
        SparseBilinearLogisticRegression.from_factors(
            clf.spatial_[0], clf.temporal_[0], [0.0], [0, 1, 2]
        )


def test_warm_start_ignores_an_incompatible_previous_fit():
    X, y = _data(n=90, n_classes=3)
    clf = SparseBilinearLogisticRegression(warm_start=True).fit(X, y)
    clf.set_params(multi_class="multinomial").fit(X, y)
    clf.set_params(rank=2).fit(X, y)
    assert clf.spatial_.shape == (3, 5, 2)
    clf.fit(X[:, :4], y)
    assert clf.spatial_.shape == (3, 4, 2)


def test_svd_gradient_start_avoids_the_zero_trap_of_the_mean_epoch():
    # Balanced +-1 classes (the paper's Table 1 data and l2-dominated penalties): the mean
    # epoch is pure noise, and on some draws the paper's start collapses to zero; the
    # label-weighted start does not, and finds a far better point.
    rng = np.random.default_rng(0)
    y = np.repeat([1, -1], 50)
    p = dict(mu1=0.1, nu1=0.1, mu2=1.0, nu2=1.0)
    for _ in range(30):
        X = rng.standard_normal((100, 20, 20)) + y[:, None, None]
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", ZeroTrapWarning)
            paper = SparseBilinearLogisticRegression(**p).fit(X, y)
        if paper.objective_[-1] > 0.69:
            break
    else:
        pytest.fail("the paper's start never collapsed in 30 draws")
    assert paper.objective_[-1] == pytest.approx(np.log(2), abs=1e-6)
    assert any("fitted factors are all zero" in str(w.message) for w in record)
    ours = SparseBilinearLogisticRegression(init="svd_gradient", **p)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroTrapWarning)
        ours.fit(X, y)
    assert ours.score(X, y) == 1.0
    assert ours.objective_[-1] < np.log(2) - 0.05
    # The start is scaled to the best point of its ray: already better than zero.
    assert ours.objective_[0] < np.log(2)
    assert min(l1_penalty_max(X, y, init="svd_gradient")) > 1.0


def test_l1_penalty_max_bad_input():
    with pytest.raises(ValueError, match="at least 2 classes"):
        l1_penalty_max(X_OK, np.zeros(20))
    with pytest.raises(ValueError, match="same number of epochs; got 20 and 19"):
        l1_penalty_max(X_OK, Y_OK[:-1])

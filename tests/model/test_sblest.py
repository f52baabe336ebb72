"""SBLEST (Wang et al. 2023): its features, its updates, its API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg
from sklearn.utils.estimator_checks import parametrize_with_checks

from sblr_rt.model.sblest import SBLEST, _learn, augmented_covariances, sblest_cost


def _planted(n, *, n_channels=6, n_times=200, ratio=1.15, seed=0):
    """Epochs whose class lives in a rank-2 covariance difference (two mixed sources)."""
    rng = np.random.default_rng(seed)
    mixing = np.random.default_rng(123).standard_normal((n_channels, n_channels))
    y = np.arange(n) % 2
    sources = rng.standard_normal((n, n_channels, n_times))
    sources[:, 0] *= np.where(y == 1, ratio, 1.0)[:, None]
    sources[:, 1] *= np.where(y == 0, ratio, 1.0)[:, None]
    return np.einsum("cd,ndt->nct", mixing, sources), y


def _independent_features(X, clf):
    """Zero-filled delays, trace-normalised covariance, whitened, matrix log (scipy)."""
    order, lag = clf.order, clf.lag
    P = linalg.inv(linalg.sqrtm(clf.reference_).real)
    out = []
    for epoch in X:
        Z = np.vstack(
            [np.hstack([np.zeros((len(epoch), k * lag)), epoch[:, : epoch.shape[1] - k * lag]])
             for k in range(order)]
        )  # fmt: skip
        C = Z @ Z.T / np.trace(Z @ Z.T)
        out.append(linalg.logm(P @ C @ P).real)
    return np.array(out)


def _column_by_column(R, y, n_updates):
    """The updates of SBLEST written literally, one column of W at a time."""
    n, d, _ = R.shape
    A = [np.array([R[m][:, c] for m in range(n)]) for c in range(d)]
    vec = np.array([R[m].ravel(order="F") for m in range(n)])
    psi, noise, costs = np.eye(d), 1.0, []
    for _ in range(n_updates):
        S = sum(A[c] @ psi @ A[c].T for c in range(d)) + noise * np.eye(n)
        S_inv = np.linalg.inv(S)
        costs.append(y @ S_inv @ y + np.linalg.slogdet(S)[1])
        U = np.column_stack([psi @ A[c].T @ S_inv @ y for c in range(d)])
        U = (U + U.T) / 2
        Phi = [psi - psi @ A[c].T @ S_inv @ A[c] @ psi for c in range(d)]
        theta = sum(np.trace(Phi[c] @ A[c].T @ A[c]) for c in range(d))
        noise = (np.sum((y - vec @ U.ravel(order="F")) ** 2) + theta) / n
        psi = sum(np.outer(U[:, c], U[:, c]) + Phi[c] for c in range(d)) / d
        psi = (psi + psi.T) / 2
    return psi, noise, costs


def test_learns_a_planted_covariance_difference():
    X, y = _planted(40)
    X_test, y_test = _planted(400, seed=1)
    clf = SBLEST().fit(X, y)
    assert clf.score(X_test, y_test) > 0.8  # chance is 0.5
    assert clf.coef_.shape == (12, 12) and np.abs(clf.coef_).max() > 0.1
    np.testing.assert_allclose(clf.coef_, clf.coef_.T)
    # the two planted sources pull W both ways: filters with weights of both signs
    assert clf.weights_.max() > 0 > clf.weights_.min()
    assert clf.filters_.shape == (clf.weights_.size, 12)
    filters = clf.filters_
    np.testing.assert_allclose(filters @ filters.T, np.eye(clf.weights_.size), atol=1e-10)
    np.testing.assert_allclose(filters @ clf.coef_ @ filters.T, np.diag(clf.weights_), atol=1e-10)
    eigenvalues = np.linalg.eigvalsh(clf.coef_)
    kept = np.abs(eigenvalues) > 0.05 * np.abs(eigenvalues).max()
    assert clf.weights_.size == kept.sum() < 12
    assert clf.noise_variance_ > 0.01 and 1 < clf.n_iter_ < clf.max_iter


def test_the_updates_are_the_papers_column_by_column():
    rng = np.random.default_rng(0)
    R = rng.standard_normal((15, 5, 5))
    R = (R + R.transpose(0, 2, 1)) / 2
    y = np.where(np.arange(15) % 2 == 1, 1.0, -1.0)
    psi, noise, costs = _column_by_column(R, y, 6)
    _, fast_psi, fast_noise, fast_costs = _learn(R, y, tol=0, max_iter=6)
    np.testing.assert_allclose(fast_costs[:6], costs, rtol=1e-10)
    np.testing.assert_allclose(fast_psi, psi, rtol=1e-9, atol=1e-12)
    assert fast_noise == pytest.approx(noise, rel=1e-9)


def test_the_cost_never_increases_and_matches_its_formula():
    X, y = _planted(30)
    clf = SBLEST(tol=0, max_iter=300).fit(X, y)
    curve = clf.loss_curve_
    assert curve.shape == (clf.n_iter_ + 1,) == (301,)
    assert np.all(np.diff(curve) <= 1e-10 * np.abs(curve).max())
    assert curve[-1] < curve[0] - 10.0
    # the final cost recomputed from the fitted hyperparameters and independent features
    features = _independent_features(X, clf)
    cost = sblest_cost(features, clf.column_covariance_, clf.noise_variance_, 2.0 * y - 1)
    assert cost == pytest.approx(curve[-1], rel=1e-6)


def test_noise_variance_stays_positive_with_more_weights_than_epochs():
    # 20 epochs against (K C)^2 = 256 weights: a bound-type update drove lambda to 0 here
    X, y = _planted(20, n_channels=8)
    clf = SBLEST(tol=0, max_iter=2000).fit(X, y)
    assert clf.noise_variance_ > 1e-3
    assert np.all(np.isfinite(clf.decision_function(X)))


def test_decision_is_the_trace_against_independent_features():
    X, y = _planted(40)
    clf = SBLEST(max_iter=20).fit(X, y)
    np.testing.assert_allclose(clf.reference_, augmented_covariances(X, 2, 1).mean(axis=0))
    expected = np.einsum("mij,ij->m", _independent_features(X, clf), clf.coef_)
    np.testing.assert_allclose(clf.decision_function(X), expected, rtol=1e-6, atol=1e-9)


def test_embedding_stacks_zero_filled_delayed_copies():
    X = np.arange(2 * 1 * 10, dtype=float).reshape(2, 1, 10) ** 1.5
    P = augmented_covariances(X, order=3, lag=2)
    for epoch, cov in zip(X, P, strict=True):
        x = epoch[0]
        Z = np.vstack([x, np.r_[0, 0, x[:-2]], np.r_[0, 0, 0, 0, x[:-4]]])  # x(t), x(t - 2)...
        np.testing.assert_allclose(cov, Z @ Z.T / np.trace(Z @ Z.T), rtol=1e-10)


def test_label_encoding_does_not_matter():
    X, y = _planted(40)
    ref = SBLEST(max_iter=30).fit(X, y)
    names = SBLEST(max_iter=30).fit(X, np.where(y == 1, "right", "left"))
    swapped = SBLEST(max_iter=30).fit(X, 1 - y)  # the other class is +1: W changes sign
    np.testing.assert_allclose(names.decision_function(X), ref.decision_function(X))
    np.testing.assert_allclose(swapped.decision_function(X), -ref.decision_function(X))
    assert list(names.classes_) == ["left", "right"]
    np.testing.assert_array_equal(names.predict(X) == "right", ref.predict(X) == 1)


def test_short_epochs_need_shrinkage():
    X, y = _planted(40, n_times=10)  # 12 embedded channels, 10 samples
    with pytest.raises(ValueError, match=r"singular.*'shrinkage'.*or lower 'order'"):
        SBLEST().fit(X, y)
    clf = SBLEST(shrinkage="oas").fit(X, y)
    np.testing.assert_allclose(np.trace(clf.reference_), 1.0)
    assert np.all(np.isfinite(clf.decision_function(X)))


@pytest.mark.parametrize(
    ("X", "y", "error", "match"),
    [
        (np.zeros((4, 2, 3, 5)), [0, 1, 0, 1], ValueError, "3-D array"),
        (np.full((4, 2, 50), np.nan), [0, 1, 0, 1], ValueError, "NaN"),
        (np.ones((6, 2, 50)), [0, 1, 2, 0, 1, 2], ValueError,
         "Only binary classification is supported.*got 3 classes"),
        (np.ones((4, 2, 1)), [0, 1, 0, 1], ValueError, "n_times > 1.*got X of shape"),
        (np.ones((4, 2, 50)), [1, 1, 1, 1], ValueError, "at least 2 classes.*got 1 class"),
    ],
)  # fmt: skip
def test_rejects_bad_input_with_clear_messages(X, y, error, match):
    with pytest.raises(error, match=match):
        SBLEST().fit(X, y)


def test_rejects_bad_parameters_and_other_channel_counts():
    X, y = _planted(20)
    with pytest.raises(ValueError, match="'shrinkage' parameter"):
        SBLEST(shrinkage=2.0).fit(X, y)
    with pytest.raises(ValueError, match="'order' parameter"):
        SBLEST(order=0).fit(X, y)
    with pytest.raises(ValueError, match="n_times > 9"):
        SBLEST(order=4, lag=3).fit(X[:, :, :9], y)
    clf = SBLEST(max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :4])


# The common checks feed 2-D X (n_samples, n_features), read as epochs of one sample: no
# delay fits in one sample and a one-sample covariance is singular, so the checks run
# with order=1 and shrinkage.
@parametrize_with_checks([SBLEST(order=1, shrinkage=0.5, max_iter=50)])
def test_sklearn_compatible(estimator, check):
    check(estimator)

"""SBLEST (Wang et al. 2023): its features, its evidence maximisation, its API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg
from sklearn.utils.estimator_checks import parametrize_with_checks

from sblr_rt.model.sblest import SBLEST, augmented_covariances, sblest_evidence


def _planted(n, *, n_channels=6, n_times=200, seed=0):
    """Epochs whose class lives in a rank-2 covariance difference (two mixed sources)."""
    rng = np.random.default_rng(seed)
    mixing = np.random.default_rng(123).standard_normal((n_channels, n_channels))
    y = np.arange(n) % 2
    sources = rng.standard_normal((n, n_channels, n_times))
    sources[:, 0] *= np.where(y == 1, 1.3, 1.0)[:, None]
    sources[:, 1] *= np.where(y == 0, 1.3, 1.0)[:, None]
    return np.einsum("cd,ndt->nct", mixing, sources), y


def test_learns_a_planted_covariance_difference():
    X, y = _planted(60)
    X_test, y_test = _planted(400, seed=1)
    clf = SBLEST().fit(X, y)
    assert clf.score(X_test, y_test) > 0.8  # chance is 0.5
    assert clf.coef_.shape == (12, 12) and np.abs(clf.coef_).max() > 0
    assert np.count_nonzero(clf.relevance_) >= 1


def test_the_evidence_never_increases_and_matches_its_formula():
    X, y = _planted(40)
    clf = SBLEST(tol=0, max_iter=60).fit(X, y)
    curve = clf.loss_curve_
    assert curve.shape == (clf.n_iter_ + 1,) and clf.n_iter_ > 5
    assert np.all(np.diff(curve) <= 1e-8 * np.abs(curve).max())
    assert curve[-1] < curve[0] - 1.0
    # the final cost recomputed from the fitted hyperparameters and independent features
    features = _independent_features(X, clf)
    Phi = features.transpose(1, 0, 2)
    K = Phi @ clf.column_covariance_ @ Phi.transpose(0, 2, 1)
    y_pm = np.where(y == 1, 1.0, -1.0)
    assert sblest_evidence(K, clf.relevance_, clf.noise_variance_, y_pm) <= curve[-2] + 1e-8


def _independent_features(X, clf):
    """Delay-embed, covariance, whiten by the training mean, matrix log (scipy)."""
    order, lag = clf.order, clf.lag
    start, n_kept = (order - 1) * lag, X.shape[2] - (order - 1) * lag
    out = []
    for epoch in X:
        Z = np.vstack([epoch[:, start - k * lag : start - k * lag + n_kept] for k in range(order)])
        C = Z @ Z.T / n_kept
        P = linalg.inv(linalg.sqrtm(clf.reference_).real)
        out.append(linalg.logm(P @ C @ P).real)
    return np.array(out)


def test_decision_is_the_trace_against_independent_features():
    X, y = _planted(40)
    clf = SBLEST(max_iter=20).fit(X, y)
    np.testing.assert_allclose(clf.reference_, augmented_covariances(X, 2, 1).mean(axis=0))
    expected = np.einsum("mij,ij->m", _independent_features(X, clf), clf.coef_)
    np.testing.assert_allclose(clf.decision_function(X), expected, rtol=1e-6, atol=1e-9)


def test_embedding_stacks_delayed_copies():
    X = np.arange(2 * 1 * 10, dtype=float).reshape(2, 1, 10) ** 1.5
    R = augmented_covariances(X, order=3, lag=2)
    for epoch, cov in zip(X, R, strict=True):
        x = epoch[0]
        Z = np.vstack([x[4:], x[2:-2], x[:-4]])  # x(t), x(t - 2), x(t - 4)
        np.testing.assert_allclose(cov, Z @ Z.T / Z.shape[1], rtol=1e-10)


def test_label_encoding_does_not_matter():
    X, y = _planted(40)
    ref = SBLEST(max_iter=30).fit(X, y)
    names = SBLEST(max_iter=30).fit(X, np.where(y == 1, "right", "left"))
    swapped = SBLEST(max_iter=30).fit(X, 1 - y)  # the other class is +1: W changes sign
    np.testing.assert_allclose(names.decision_function(X), ref.decision_function(X))
    np.testing.assert_allclose(swapped.decision_function(X), -ref.decision_function(X))
    assert list(names.classes_) == ["left", "right"]
    np.testing.assert_array_equal(names.predict(X) == "right", ref.predict(X) == 1)


def test_riemannian_mean_and_shrinkage():
    X, y = _planted(40)
    clf = SBLEST(mean="riemann", shrinkage="oas", max_iter=30).fit(X, y)
    R = augmented_covariances(X, 2, 1, "oas")
    # the Riemannian mean whitens the training covariances to logs that average to zero
    P = linalg.inv(linalg.sqrtm(clf.reference_).real)
    logs = np.array([linalg.logm(P @ C @ P).real for C in R])
    np.testing.assert_allclose(logs.mean(axis=0), 0.0, atol=1e-7)
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize(
    ("X", "y", "error", "match"),
    [
        (np.zeros((4, 2, 3, 5)), [0, 1, 0, 1], ValueError, "3-D array"),
        (np.full((4, 2, 50), np.nan), [0, 1, 0, 1], ValueError, "NaN"),
        (np.ones((6, 2, 50)), [0, 1, 2, 0, 1, 2], ValueError,
         "Only binary classification is supported.*got 3 classes"),
        (np.ones((4, 2, 1)), [0, 1, 0, 1], ValueError, "n_times > 1; got X of shape"),
        (np.ones((4, 2, 50)), [1, 1, 1, 1], ValueError, "2 classes for SBLEST; got 1 class"),
        (np.random.default_rng(0).standard_normal((4, 8, 10)), [0, 1, 0, 1], ValueError,
         "singular.*'shrinkage'"),
    ],
)  # fmt: skip
def test_rejects_bad_input_with_clear_messages(X, y, error, match):
    with pytest.raises(error, match=match):
        SBLEST().fit(X, y)


def test_rejects_bad_parameters_and_other_channel_counts():
    X, y = _planted(20)
    with pytest.raises(ValueError, match="'mean' parameter"):
        SBLEST(mean="harmonic").fit(X, y)
    with pytest.raises(ValueError, match="'shrinkage' parameter"):
        SBLEST(shrinkage=2.0).fit(X, y)
    clf = SBLEST(max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :4])


# The common checks feed 2-D X (n_samples, n_features), read as epochs of one sample: no
# delay fits in one sample and a one-sample covariance is singular, so the checks run
# with order=1 and shrinkage.
@parametrize_with_checks([SBLEST(order=1, shrinkage=0.5, max_iter=50)])
def test_sklearn_compatible(estimator, check):
    check(estimator)

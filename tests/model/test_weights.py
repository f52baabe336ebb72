"""sample_weight and class_weight: repeated epochs, left-out epochs, imbalanced classes."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.model.penalty_path import fit_fold_paths, fit_penalty_paths

PARAMS = dict(rank=1, mu1=0.01, mu2=0.1, nu2=0.1, tol=1e-6, max_iter=2000)


def _epochs(n=40, seed=0, shift=0.5, n_classes=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, 6, 9))
    X[:, 1, 2:6] += shift * (y - (n_classes - 1) / 2)[:, None]
    return X, y


@pytest.mark.parametrize("multi_class", ["ovr", "multinomial"])
def test_integer_weights_are_repeated_epochs(multi_class):
    X, y = _epochs(n=30, n_classes=3)
    w = np.random.default_rng(1).integers(0, 4, size=len(y))
    # exactly on the paper's route (the fast one's float32 phase rounds the weighted and
    # the repeated sums differently, and may stop an iteration apart)
    est = SparseBilinearLogisticRegression(multi_class=multi_class, solver="paper", **PARAMS)
    weighted = est.fit(X, y, sample_weight=w).predict_proba(X)
    repeated = est.fit(np.repeat(X, w, axis=0), np.repeat(y, w)).predict_proba(X)
    np.testing.assert_allclose(weighted, repeated, rtol=1e-7, atol=1e-10)


def test_unit_weights_are_no_weights_and_scaling_them_changes_nothing():
    X, y = _epochs()
    ref = SparseBilinearLogisticRegression(**PARAMS).fit(X, y).decision_function(X)
    for w in (np.ones(len(y)), np.full(len(y), 7.5)):
        got = SparseBilinearLogisticRegression(**PARAMS).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(got.decision_function(X), ref, rtol=1e-9, atol=1e-12)


def test_class_weight_balanced_is_its_dict_and_helps_the_rare_class():
    # ERP-like 1:5 imbalance: without weights the rare class is mostly missed
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(100, int), np.ones(20, int)]
    X = rng.standard_normal((120, 8, 10))
    X[y == 1, 2, 3:7] += 1.0
    Xt = rng.standard_normal((600, 8, 10))
    yt = np.r_[np.zeros(300, int), np.ones(300, int)]
    Xt[yt == 1, 2, 3:7] += 1.0
    params = dict(rank=1, mu2=0.1, nu2=0.1)
    plain = SparseBilinearLogisticRegression(**params).fit(X, y)
    balanced = SparseBilinearLogisticRegression(class_weight="balanced", **params).fit(X, y)
    by_hand = SparseBilinearLogisticRegression(class_weight={0: 0.6, 1: 3.0}, **params)
    np.testing.assert_allclose(
        by_hand.fit(X, y).decision_function(Xt), balanced.decision_function(Xt), rtol=1e-9
    )
    acc_plain = balanced_accuracy_score(yt, plain.predict(Xt))
    acc_balanced = balanced_accuracy_score(yt, balanced.predict(Xt))
    assert acc_balanced > acc_plain + 0.1, (acc_plain, acc_balanced)  # 0.68 -> 0.82
    assert np.mean(balanced.predict(Xt[yt == 1])) > np.mean(plain.predict(Xt[yt == 1]))


def test_weights_are_checked():
    X, y = _epochs()
    est = SparseBilinearLogisticRegression()
    with pytest.raises(ValueError, match="non-zero"):
        est.fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match=r"(?i)negative"):
        est.fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match=r"shape|samples"):
        est.fit(X, y, sample_weight=np.ones(len(y) + 1))
    with pytest.raises(ValueError, match="class_weight"):
        SparseBilinearLogisticRegression(class_weight="even").fit(X, y)


def test_paths_weigh_as_the_estimator():
    X, y = _epochs(seed=3)
    w = np.random.default_rng(2).uniform(0.0, 3.0, size=len(y))
    point = dict(mu1=0.01, mu2=0.1, nu1=0.0, nu2=0.1)
    ((path_est,),) = fit_penalty_paths(X, y, [[point]], sample_weight=w, class_weight="balanced")
    est = SparseBilinearLogisticRegression(
        rank=1, class_weight="balanced", solver="paper", **point
    )  # the paths make the paper's updates
    est.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(path_est.decision_function(X), est.decision_function(X), rtol=1e-6)
    # folds with their own weights, fitted in one lockstep, as each alone
    X2, y2 = _epochs(seed=4)
    w2 = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y2))
    both = fit_fold_paths([(X, y, [[point]], w), (X2, y2, [[point]], w2)])
    for (Xf, yf, wf), got in zip([(X, y, w), (X2, y2, w2)], both, strict=True):
        ((alone,),) = fit_penalty_paths(Xf, yf, [[point]], sample_weight=wf)
        np.testing.assert_allclose(
            got[0][0].decision_function(Xf), alone.decision_function(Xf), rtol=1e-6, atol=1e-9
        )

"""Penalty paths in lockstep equal the estimator refitted point by point."""

import warnings

import numpy as np
import pytest

from sblr_rt.model import SparseBilinearLogisticRegression, l1_penalty_max
from sblr_rt.model.penalty_path import fit_fold_paths, fit_penalty_paths


def _data(n_classes, n=60, s=8, t=10, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, s, t))
    y = np.arange(n) % n_classes
    for c in range(n_classes):
        X[y == c, c, 2:5] += 0.8
    return X, y


def _sequential(X, y, path, **params):
    """What calibration did before: one warm-started estimator along the path."""
    out, est = [], None
    for point in path:
        if est is None or not (np.any(est.spatial_) and np.any(est.temporal_)):
            est = SparseBilinearLogisticRegression(
                **point, warm_start=True, solver="paper", **params
            )  # the paths make the paper's updates
        else:
            est.set_params(**point)
        est.fit(X, y)
        out.append((est.spatial_.copy(), est.temporal_.copy(), est.intercept_.copy(), est.n_iter_))
    return out


@pytest.mark.parametrize(
    ("n_classes", "multi_class"), [(2, "ovr"), (3, "ovr"), (3, "multinomial")]
)
@pytest.mark.parametrize("init", ["svd", "svd_gradient"])
def test_lockstep_paths_equal_the_estimator_point_by_point(n_classes, multi_class, init):
    X, y = _data(n_classes)
    params = dict(rank=2, multi_class=multi_class, tol=1e-6, init=init)
    mu1_max, nu1_max = l1_penalty_max(X, y, rank=2, multi_class=multi_class, init=init)
    # 1.2 x the largest useful penalty collapses the factors: the next point starts cold.
    fractions = [0.4, 0.2, 1.2, 0.05, 0.0]
    paths = [
        [dict(mu1=f * mu1_max, mu2=l2, nu1=f * nu1_max, nu2=l2) for f in fractions]
        for l2 in (0.01, 0.1, 1.0)
    ]
    paths.append(paths[0][:2])  # paths of different lengths finish at different rounds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fit_penalty_paths(X, y, paths, **params)
        for path, fitted in zip(paths, got, strict=True):
            expected = _sequential(X, y, path, **params)
            assert len(fitted) == len(expected)
            for est, (U, V, b, n_iter) in zip(fitted, expected, strict=True):
                np.testing.assert_allclose(est.spatial_, U, atol=1e-10)
                np.testing.assert_allclose(est.temporal_, V, atol=1e-10)
                np.testing.assert_allclose(est.intercept_, b, atol=1e-10)
                np.testing.assert_array_equal(est.n_iter_, n_iter)
    collapsed = got[0][2]
    assert not np.any(collapsed.spatial_)
    assert np.any(got[0][3].spatial_)  # restarted cold, not stuck at zero


def test_float32_paths_match_float64_and_predict():
    X, y = _data(2, n=80, s=12, t=15, seed=3)
    mu1_max, nu1_max = l1_penalty_max(X, y)
    path = [dict(mu1=f * mu1_max, mu2=0.1, nu1=f * nu1_max, nu2=0.1) for f in (0.3, 0.1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e64 = fit_penalty_paths(X, y, [path])[0][-1]
        e32 = fit_penalty_paths(X.astype(np.float32), y, [path])[0][-1]
    w64 = np.outer(e64.spatial_[:, 0], e64.temporal_[:, 0])
    w32 = np.outer(e32.spatial_[:, 0], e32.temporal_[:, 0])
    np.testing.assert_allclose(w32, w64, atol=1e-3 * np.abs(w64).max())
    np.testing.assert_array_equal(e32.predict(X), e64.predict(X))
    assert e64.objective_[-1] <= e64.objective_[0]


def test_callback_results_replace_the_estimators():
    X, y = _data(2)
    path = [dict(mu1=0.0, mu2=0.1, nu1=0.0, nu2=0.1), dict(mu1=0.0, mu2=0.01, nu1=0.0, nu2=0.01)]
    seen = []

    def score(p, k, est):
        seen.append((p, k))
        return float(np.mean(est.predict(X) == y))

    out = fit_penalty_paths(X, y, [path, [], path[:1]], callback=score)
    assert [len(p) for p in out] == [2, 0, 1]
    assert sorted(seen) == [(0, 0), (0, 1), (2, 0)]
    assert all(0.5 < a <= 1.0 for a in out[0] + out[2])
    assert fit_penalty_paths(X, y, []) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(paths=[[dict(mu1=0.1, mu2=0.0, nu1=0.0)]]), "must be a dict of"),
        (dict(paths=[[dict(mu1=-0.1, mu2=0.0, nu1=0.0, nu2=0.0)]]), "finite and >= 0"),
        (dict(paths=[[]], rank=9), "'rank' must lie in"),
        (dict(paths=[[]], max_iter=0), "'max_iter' must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    X, y = _data(2)
    with pytest.raises(ValueError, match=match):
        fit_penalty_paths(X, y, **kwargs)


def test_bad_data_is_refused():
    X, y = _data(2)
    with pytest.raises(ValueError, match="'y' must have shape"):
        fit_penalty_paths(X, y[:-1], [[]])
    with pytest.raises(ValueError, match="at least 2 classes"):
        fit_penalty_paths(X, np.zeros(len(y)), [[]])
    bad = X.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_penalty_paths(bad, y, [[]])


@pytest.mark.parametrize(
    ("n_classes", "multi_class"), [(2, "ovr"), (3, "ovr"), (3, "multinomial")]
)
def test_folds_in_one_lockstep_equal_each_fold_on_its_own(n_classes, multi_class):
    X, y = _data(n_classes, n=48)
    rng = np.random.default_rng(3)
    # Three training sets of 40 epochs (one batch, labels per run) and one of 36 (its own).
    folds_idx = [np.sort(rng.choice(48, 40, replace=False)) for _ in range(3)]
    folds_idx.append(np.sort(rng.choice(48, 36, replace=False)))
    params = dict(rank=2, multi_class=multi_class, tol=1e-6, max_iter=80)
    folds = []
    for f, idx in enumerate(folds_idx):
        mu1_max, nu1_max = l1_penalty_max(X[idx], y[idx], rank=2, multi_class=multi_class)
        paths = [
            [dict(mu1=fr * mu1_max, mu2=l2, nu1=fr * nu1_max, nu2=l2) for fr in (0.3, 1.2, 0.0)]
            for l2 in (0.01, 1.0)
        ][: 1 + f % 2]  # different numbers of paths per fold
        folds.append((X[idx], y[idx], paths))
    seen = []

    def score(f, p, k, est):
        seen.append((f, p, k))
        return est

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fit_fold_paths(folds, **params, callback=score)
        for f, (Xf, yf, paths) in enumerate(folds):
            alone = fit_penalty_paths(Xf, yf, paths, **params)
            assert len(got[f]) == len(paths)
            for a_path, g_path in zip(alone, got[f], strict=True):
                for a, g in zip(a_path, g_path, strict=True):
                    np.testing.assert_allclose(g.spatial_, a.spatial_, atol=1e-10)
                    np.testing.assert_allclose(g.temporal_, a.temporal_, atol=1e-10)
                    np.testing.assert_allclose(g.intercept_, a.intercept_, atol=1e-10)
                    np.testing.assert_array_equal(g.n_iter_, a.n_iter_)
    assert sorted(seen) == sorted(
        (f, p, k) for f, (_, _, paths) in enumerate(folds) for p, path in enumerate(paths)
        for k in range(len(path))
    )  # fmt: skip


def test_stop_early_ends_a_point_at_its_iterate_and_the_path_goes_on():
    X, y = _data(2)
    path = [dict(mu1=0.0, mu2=l2, nu1=0.0, nu2=l2) for l2 in (0.01, 0.001, 0.0001)]
    params = dict(tol=1e-8, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = fit_fold_paths([(X, y, [path])], **params)[0][0]
        # never stopping is no racing at all
        kept = fit_fold_paths([(X, y, [path])], **params, stop_early=lambda *a: False)[0][0]
        asked = []

        def stop_second(f, p, k, est):
            asked.append((f, p, k, int(est.n_iter_)))
            return k == 1

        raced = fit_fold_paths([(X, y, [path])], **params, stop_early=stop_second, check_every=7)
    raced = raced[0][0]
    for a, b in zip(full, kept, strict=True):
        np.testing.assert_array_equal(a.spatial_, b.spatial_)
        assert a.n_iter_ == b.n_iter_
    assert full[1].n_iter_ > 7  # the point would have run on
    assert raced[1].n_iter_ == 7  # ended at the first question
    assert all(n % 7 == 0 and n > 0 for *_, n in asked)
    assert [k for _, _, k, _ in asked if k == 1] == [1]  # asked once: ended there
    np.testing.assert_array_equal(raced[0].spatial_, full[0].spatial_)  # before: untouched
    assert len(raced) == 3 and raced[2].n_iter_ >= 1  # the path went on from the iterate
    assert not np.array_equal(raced[2].spatial_, full[2].spatial_)


def test_check_every_must_be_positive():
    X, y = _data(2)
    with pytest.raises(ValueError, match="'check_every' must be at least 1; got 0"):
        fit_fold_paths([(X, y, [[]])], stop_early=lambda *a: False, check_every=0)


@pytest.mark.parametrize("multi_class", ["ovr", "multinomial"])
def test_stop_early_ends_every_class_problem_of_a_point(multi_class):
    X, y = _data(3)
    path = [dict(mu1=0.0, mu2=l2, nu1=0.0, nu2=l2) for l2 in (0.01, 0.001)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fit_fold_paths(
            [(X, y, [path])], multi_class=multi_class, tol=1e-8, max_iter=200,
            stop_early=lambda *a: True, check_every=5,
        )[0][0]  # fmt: skip
    assert [int(np.max(est.n_iter_)) for est in out] == [5, 5]

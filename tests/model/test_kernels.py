"""The compiled block update (numba) against the numpy one it replaces on the fast route."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.model.datafit import Logistic, Multinomial
from sblr_rt.model.penalties import ElasticNet
from sblr_rt.model.solver import (
    BCPDBatch,
    SolverSettings,
    _block,
    _block_compiled,
    bcpd,
    svd_init,
)


def _case(K=3, n=40, p=12, per_run=False, weighted=False, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((K, 1, n, p))
    Z = 0.1 * rng.standard_normal((K, 1, p))
    b = 0.1 * rng.standard_normal((K, 1))
    y = np.where(rng.random((K, n) if per_run else n) > 0.5, 1.0, -1.0)
    w = rng.uniform(0.0, 3.0, size=y.shape) if weighted else None
    pen = ElasticNet(np.array([0.0, 0.02, 0.2])[:K], np.array([0.0, 0.5, 0.1])[:K])
    L_prev = np.array([1e-4, 0.3, 5.0])[:K]
    return Logistic(y, w), pen, A, Z, b, L_prev


@pytest.mark.parametrize("per_run", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_block_update_equals_numpy(per_run, weighted):
    datafit, *args = _case(per_run=per_run, weighted=weighted)
    ref = _block(datafit, *args, 2.0, 1e-4)
    got = _block_compiled(datafit, *args, 2.0, 1e-4)
    np.testing.assert_array_equal(got[5], ref[5])  # the same step: the same trials
    np.testing.assert_array_equal(got[2], ref[2])  # and the same step parameter
    for g, r in zip(got[:5], ref[:5], strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-15)
    assert np.any(got[0])


def test_compiled_block_update_takes_the_large_step_branch():
    # margins that move by more than 1 take the divergence's direct form, as in numpy
    datafit, pen, A, Z, b, L_prev = _case(K=1, seed=3)
    A *= 30.0
    ref = _block(datafit, pen, A, Z, b, L_prev, 2.0, 1e-4)
    got = _block_compiled(datafit, pen, A, Z, b, L_prev, 2.0, 1e-4)
    np.testing.assert_array_equal(got[5], ref[5])
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)


def test_compiled_solver_run_equals_numpy_run():
    rng = np.random.default_rng(1)
    y = np.repeat([-1.0, 1.0], 30)
    X = rng.standard_normal((60, 8, 10)) + 0.4 * y[:, None, None] * np.outer(
        np.hanning(8), np.hanning(10)
    )
    U0, V0 = svd_init(X.mean(0), 2)
    args = (X, Logistic(y), U0[None], V0[None], np.zeros(1))
    pens = (ElasticNet(0.01, 0.1), ElasticNet(0.02, 0.1))
    ref = bcpd(*args, *pens, kernel="numpy")
    got = bcpd(*args, *pens, kernel="numba")
    assert got.n_iter == ref.n_iter and got.n_trials == ref.n_trials and np.any(got.U)
    np.testing.assert_allclose(got.objective, ref.objective, rtol=1e-12)
    np.testing.assert_allclose(got.U, ref.U, rtol=1e-9, atol=1e-12)


def test_multinomial_keeps_the_numpy_update_and_kernel_is_checked():
    y = np.zeros((6, 2))
    batch = BCPDBatch(
        Multinomial(y), np.zeros((1, 2, 3, 1)), np.zeros((1, 2, 4, 1)), np.zeros((1, 2)),
        ElasticNet(), ElasticNet(), SolverSettings(kernel="numba"),
    )  # fmt: skip
    assert batch._block is _block
    with pytest.raises(ValueError, match="'kernel' must be 'numpy' or 'numba'"):
        SolverSettings(kernel="cython")


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [("tol", -1.0, ValueError), ("tol", "1e-3", TypeError), ("max_iter", 2.5, TypeError),
     ("max_iter", 0, ValueError), ("eta", 1.0, ValueError), ("L_min", 0.0, ValueError)],
)  # fmt: skip
def test_solver_settings_of_the_wrong_kind_are_refused_naming_them(field, value, error):
    # bcpd is public: its settings are checked as the estimator checks its parameters
    with pytest.raises(error, match=f"'{field}' must "):
        SolverSettings(**{field: value})

"""The products with the data: one pass over X each, no copy of float32 epochs."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.model.products import x_times_u, x_times_v


def test_solver_products_make_no_copy_of_float32_data():
    import tracemalloc

    rng = np.random.default_rng(0)
    X32 = rng.standard_normal((200, 50, 60)).astype(np.float32)  # 2.4 MB
    U, V = rng.standard_normal((1, 50, 2)), rng.standard_normal((1, 60, 2))
    tracemalloc.start()
    try:
        A = x_times_v(X32, V)
        B = x_times_u(X32, U)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert A.shape == (1, 200, 100) and B.shape == (1, 200, 120)
    assert A.dtype == np.float64
    assert peak < X32.nbytes / 4, f"peak {peak} bytes: X was copied"
    np.testing.assert_allclose(A[0].reshape(200, 50, 2), X32 @ V[0], atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("m", "r"), [(1, 1), (2, 1), (1, 3), (5, 1), (3, 2), (7, 1), (4, 2), (10, 7)]
)
def test_products_equal_the_definition_at_every_width(m, r, dtype):
    rng = np.random.default_rng(m * 10 + r)
    X = rng.standard_normal((9, 7, 6)).astype(dtype)
    U, V = rng.standard_normal((m, 7, r)), rng.standard_normal((m, 6, r))
    A, B = x_times_v(X, V), x_times_u(X, U)
    X64 = X.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want_a = np.einsum("nst,mtr->mnsr", X64, V).reshape(m, 9, 7 * r)
    want_b = np.einsum("nst,msr->mntr", X64, U).reshape(m, 9, 6 * r)
    assert A.shape == want_a.shape and B.shape == want_b.shape
    np.testing.assert_allclose(A, want_a, rtol=tol, atol=tol)
    np.testing.assert_allclose(B, want_b, rtol=tol, atol=tol)

"""The products with the data: one pass over X each, no copy of float32 epochs."""

from __future__ import annotations

import numpy as np

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

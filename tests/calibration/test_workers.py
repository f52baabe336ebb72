"""The calibration's joblib plumbing: results in task order."""

from __future__ import annotations

import time

from sblr_rt.calibration.workers import run_tasks


def _slow_square(x):
    time.sleep(0.05 * (3 - x))  # the first tasks finish last
    return x * x


def test_results_come_back_in_task_order_with_progress():
    seen = []
    out = run_tasks([(_slow_square, (k,)) for k in range(4)], 2, lambda *a: seen.append(a), "grid")
    assert out == [0, 1, 4, 9]
    assert seen[0] == (0, 4, "grid") and seen[-1] == (4, 4, "grid") and len(seen) == 5

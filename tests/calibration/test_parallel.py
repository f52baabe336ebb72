"""The calibration's joblib plumbing: results in task order, workers that watch their parent."""

from __future__ import annotations

import time

import joblib
from sblr_rt.calibration import parallel
from sblr_rt.calibration.parallel import run_tasks


def _slow_square(x):
    time.sleep(0.05 * (3 - x))  # the first tasks finish last
    return x * x


def test_results_come_back_in_task_order_with_progress():
    seen = []
    out = run_tasks([(_slow_square, (k,)) for k in range(4)], 2, lambda *a: seen.append(a), "grid")
    assert out == [0, 1, 4, 9]
    assert seen[0] == (0, 4, "grid") and seen[-1] == (4, 4, "grid") and len(seen) == 5


def test_loky_workers_take_the_parent_watch_wherever_joblib_can():
    """joblib 1.5+ passes ``initializer`` (one of Parallel's ``**backend_kwargs``) to loky.

    The check once looked for a named parameter and said no on every joblib: workers then
    watched their parent from their first task only (``tests/cli/test_lifetime.py``).
    """
    major, minor = (int(part) for part in joblib.__version__.split(".")[:2])
    assert parallel._TAKES_INITIALIZER == ((major, minor) >= (1, 5))

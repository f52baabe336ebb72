"""The calibration's joblib plumbing: results in task order, workers started early."""

from __future__ import annotations

import threading
import time

import pytest
from joblib import parallel_config
from sblr_rt.calibration.workers import run_tasks, start_workers


def _slow_square(x):
    time.sleep(0.05 * (3 - x))  # the first tasks finish last
    return x * x


def test_results_come_back_in_task_order_with_progress():
    seen = []
    out = run_tasks([(_slow_square, (k,)) for k in range(4)], 2, lambda *a: seen.append(a), "grid")
    assert out == [0, 1, 4, 9]
    assert seen[0] == (0, 4, "grid") and seen[-1] == (4, 4, "grid") and len(seen) == 5


@pytest.mark.parametrize("backend", ["threading", None])
def test_workers_start_in_the_background_only_for_joblibs_own_pool(backend, monkeypatch):
    import sblr_rt.calibration.workers as workers

    started = []

    class Recorded(threading.Thread):
        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(workers.threading, "Thread", Recorded)
    if backend is None:
        start_workers(2)  # returns at once; the pool starts behind it
        assert [t.name for t in started] == ["sblr-calibration-workers"]
        started[0].join(60)
        assert not started[0].is_alive()
    else:
        with parallel_config(backend=backend):  # the caller's backend is the caller's
            start_workers(2)
        assert started == []
    start_workers(1)  # one job: nothing to start
    assert len(started) == (1 if backend is None else 0)

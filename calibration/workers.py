"""The calibration's parallelism: joblib only, so that any joblib backend runs it.

The search's tasks (:mod:`.selection`) go through :func:`run_tasks`; a calibration starts
the worker processes first (:func:`start_workers`), so that they import while the epochs
are read. To run on a cluster, wrap the call in a joblib backend (see :mod:`.selection`).
"""

from __future__ import annotations

import logging
import threading

from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import LokyBackend, get_active_backend

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["run_tasks", "start_workers"]


def run_tasks(tasks, n_jobs, progress, stage) -> list:
    """Run ``fn(*args)`` for every ``(fn, args)`` of ``tasks`` through joblib.

    Results come back in the order of ``tasks``, whatever order they finish in.

    Parameters
    ----------
    tasks : list of (callable, tuple)
        The tasks.
    n_jobs : int | None
        joblib's ``n_jobs``.
    progress : callable | None
        ``progress(done, total, stage)`` at the start and after each finished task.
    stage : str
        Passed to ``progress``.

    Returns
    -------
    results : list
        One result per task.
    """
    total = len(tasks)
    results = [None] * total
    if progress is not None:
        progress(0, total, stage)
    gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(_indexed)(i, fn, args) for i, (fn, args) in enumerate(tasks)
    )
    for done, (i, res) in enumerate(gen, start=1):
        results[i] = res
        if progress is not None:
            progress(done, total, stage)
    return results


def _indexed(i, fn, args):
    return i, fn(*args)


def _ready() -> bool:
    return True


def start_workers(n_jobs) -> None:
    """Start joblib's worker processes in the background, to be ready for the search.

    A fresh worker spends about a second importing scikit-learn and this package before
    its first task; a calibration calls this first, so that the workers start while the
    epochs are read and filtered (the search then reuses them: joblib keeps its workers
    between calls). Does nothing for one job.
    """
    n = effective_n_jobs(n_jobs)
    # Only joblib's own process pool: a backend the caller chose (Dask, Ray) is the
    # caller's to start, and its configuration does not reach another thread.
    if n <= 1 or not isinstance(get_active_backend()[0], LokyBackend):
        return

    def warm():
        try:
            Parallel(n_jobs=n_jobs)(delayed(_ready)() for _ in range(n))
        except Exception:  # a failed warm-up only costs the time it would save
            logger.debug("starting the calibration workers early failed", exc_info=True)

    threading.Thread(target=warm, name="sblr-calibration-workers", daemon=True).start()

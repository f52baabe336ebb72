"""The calibration's parallelism: joblib only, so that any joblib backend runs it.

The search's tasks (:mod:`.selection`) go through :func:`run_tasks`. To run on a cluster,
wrap the call in a joblib backend (see :mod:`.selection`).
"""

from __future__ import annotations

import inspect
import os

from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import LokyBackend, get_active_backend

from sblr_rt.lifetime import watch_parent

__all__ = ["one_off_n_jobs", "parallel", "run_tasks"]

#: Cores at or below which a one-off calibration runs in its own process (see
#: :func:`one_off_n_jobs`).
FEW_CORES = 2


def one_off_n_jobs(cpu_count: int | None = None) -> int:
    """Return the workers for a calibration that runs once in a fresh process.

    A fresh worker imports scikit-learn and this package before its first task; on few
    cores that start-up outweighs the parallel search for one person, while a process
    that calibrates again (the dashboard) keeps its warm workers (docs/benchmarks.md,
    "Calibration search"). The models are the same for any number of jobs.
    ``sblr-rt calibrate`` therefore runs one job on machines of :data:`FEW_CORES` cores
    or fewer, and all cores otherwise.

    Parameters
    ----------
    cpu_count : int | None
        Cores of the machine (None: :func:`os.cpu_count`).

    Returns
    -------
    n_jobs : int
        1, or -1 (all cores).

    Examples
    --------
    >>> one_off_n_jobs(2), one_off_n_jobs(8)
    (1, -1)
    """
    cores = os.cpu_count() if cpu_count is None else cpu_count
    return 1 if (cores or 1) <= FEW_CORES else -1


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
    gen = parallel(n_jobs, return_as="generator_unordered")(
        delayed(_indexed)(i, fn, args) for i, (fn, args) in enumerate(tasks)
    )
    for done, (i, res) in enumerate(gen, start=1):
        results[i] = res
        if progress is not None:
            progress(done, total, stage)
    return results


def _indexed(i, fn, args):
    return i, fn(*args)


def parallel(n_jobs, *, return_as: str) -> Parallel:
    """Return :class:`joblib.Parallel` for the calibration's tasks.

    With joblib's own process pool (loky), each worker watches its parent from its start
    (:func:`sblr_rt.lifetime.watch_parent` as the pool's initializer), so that a worker
    that has not run a task yet also ends when the calibrating process is killed. A
    backend the caller chose (threads, Dask, Ray) is used as configured.

    Parameters
    ----------
    n_jobs : int | None
        joblib's ``n_jobs``.
    return_as : str
        joblib's ``return_as``.

    Returns
    -------
    parallel : joblib.Parallel
    """
    if (
        _TAKES_INITIALIZER
        and effective_n_jobs(n_jobs) > 1
        and isinstance(get_active_backend()[0], LokyBackend)
    ):
        return Parallel(
            n_jobs=n_jobs, return_as=return_as, backend="loky", initializer=watch_parent
        )
    # joblib before 1.5 has no initializer: its workers watch their parent from their
    # first task (the tasks import sblr_rt, which starts the watch)
    return Parallel(n_jobs=n_jobs, return_as=return_as)


def _takes_initializer() -> bool:
    """Whether this joblib's Parallel hands a worker ``initializer`` to loky (1.5 and newer).

    joblib 1.5 added ``**backend_kwargs`` to :class:`joblib.Parallel` (``initializer`` is
    one of them, not a named parameter); 1.4 has neither.
    """
    params = inspect.signature(Parallel).parameters.values()
    return any(p.name == "initializer" or p.kind is p.VAR_KEYWORD for p in params)


#: Whether this joblib's Parallel takes a worker initializer (joblib 1.5 and newer).
_TAKES_INITIALIZER = _takes_initializer()

"""Processes the product starts end with their parent, and a SIGTERM stops like Ctrl-C.

Three kinds of child process come from sblr-rt: joblib's (loky) workers of a calibration,
the refit worker of an adapting session (``concurrent.futures``, spawn), and the source
process of ``sblr-rt demo``; multiprocessing and loky add a resource tracker each. When the
parent ends cleanly (Ctrl-C, or SIGTERM through :func:`sigterm_as_interrupt`), it stops its
workers itself. When it dies without a chance to (SIGKILL, the OOM killer, a crash), nobody
would: a busy worker keeps computing for minutes and holds the parent's stdout, so a
supervisor reading it hangs. So each child watches its parent (:func:`watch_parent`): a
daemon thread compares ``os.getppid()`` with the parent's pid every ``POLL`` seconds and,
once it differs (the child was re-parented: its parent is gone), sends its own main thread
SIGTERM. A worker that keeps SIGTERM's default action ends at once; a process that stops
on SIGTERM (:func:`sigterm_as_interrupt`: the demo's source process runs the command line)
stops as on Ctrl-C, and is killed (SIGKILL) if it has not ended ``GRACE`` seconds later.
The resource trackers end by themselves once every process holding their pipe is gone.

Importing :mod:`sblr_rt` in a multiprocessing child (a joblib worker running a calibration
task, a spawned process) starts the watch; joblib's workers of a calibration (joblib 1.5
and newer) and the refit worker start it in their initializer, before any task (a worker
that has run no task yet imports nothing of the package), the demo's source process from
``SBLR_RT_PARENT_PID`` (:data:`PARENT_ENV`).
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = [
    "EXIT_ORPHANED",
    "GRACE",
    "PARENT_ENV",
    "POLL",
    "Terminated",
    "end_orphan",
    "sigterm_as_interrupt",
    "watch_parent",
    "watch_parent_from_env",
]

#: Seconds between two looks at the parent.
POLL = 0.5
#: Seconds an orphan that handles SIGTERM has to end before the watch kills it (SIGKILL).
GRACE = 5.0
#: Exit status of a child whose parent died, as a shell reports it: 128 + SIGTERM, the
#: signal the watch ends it with (``returncode == -SIGTERM`` to :mod:`subprocess` when the
#: signal's default action ended it). One that did not end within :data:`GRACE` seconds
#: of SIGTERM ends with 128 + SIGKILL.
EXIT_ORPHANED = 128 + signal.SIGTERM
#: Environment variable naming the pid a command-line process watches (``sblr-rt demo``
#: starts its source process with it).
PARENT_ENV = "SBLR_RT_PARENT_PID"

_lock = threading.Lock()
_watched: int | None = None  # the parent pid this process watches


def watch_parent(pid: int | None = None, *, poll: float = POLL, grace: float = GRACE) -> bool:
    """End this process when its parent ends (a daemon thread; idempotent).

    Parameters
    ----------
    pid : int | None
        The parent's pid; None: the multiprocessing parent
        (:func:`multiprocessing.parent_process`).
    poll : float
        Seconds between two looks.
    grace : float
        Seconds a process that handles SIGTERM has to end before it is killed.

    Returns
    -------
    watching : bool
        Whether a watch runs (False in a process with no known parent).

    Notes
    -----
    The process ends by SIGTERM sent to its main thread (status :data:`EXIT_ORPHANED`).
    With SIGTERM's default action (joblib's and the refit workers) no clean-up runs, which
    is what a worker whose results nobody will read needs. A process with a SIGTERM handler
    (:func:`sigterm_as_interrupt`) runs it, and SIGKILL follows after ``grace`` seconds if
    it still runs (a handler that returns, a main thread stuck in compiled code); one that
    ignores SIGTERM is killed at once. A pid that is not this process's parent when the
    watch starts means the parent is already gone.
    """
    global _watched
    if pid is None:
        pid = _parent_pid()
    if pid is None or pid <= 1:
        return False
    with _lock:
        if _watched is not None:
            return True
        _watched = int(pid)
    threading.Thread(
        target=_watch,
        args=(int(pid), float(poll), float(grace)),
        name="sblr-rt parent watch",
        daemon=True,
    ).start()
    return True


def _parent_pid() -> int | None:
    import multiprocessing

    parent = multiprocessing.parent_process()
    return int(parent.pid) if parent is not None and parent.pid else None


def watch_parent_from_env() -> bool:
    """Watch the pid in ``$SBLR_RT_PARENT_PID`` (removed, so grandchildren do not read it).

    Returns
    -------
    watching : bool
        Whether a watch runs.
    """
    text = os.environ.pop(PARENT_ENV, "")
    return watch_parent(int(text)) if text.isdigit() else False


def _watch(pid: int, poll: float, grace: float) -> None:
    while os.getppid() == pid:
        time.sleep(poll)
    end_orphan(grace)


def end_orphan(grace: float = GRACE) -> None:
    """End this process, whose parent is gone: SIGTERM, then SIGKILL if it still runs.

    Called by the watch thread. SIGTERM goes to the main thread (so that a blocking call
    there is interrupted and a Python handler runs at once); with SIGTERM's default action
    the process ends there. Otherwise (a handler, or SIGTERM ignored) the process is given
    ``grace`` seconds (none when SIGTERM is ignored), then SIGKILL.

    Parameters
    ----------
    grace : float
        Seconds a process that handles SIGTERM has to end.
    """
    handler = signal.getsignal(signal.SIGTERM)
    if handler is not signal.SIG_IGN:
        try:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        except OSError:  # no main thread to interrupt any more: the process as a whole
            os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace)  # with the default action the process has ended by now
    os.kill(os.getpid(), signal.SIGKILL)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM, so that a command stops as on Ctrl-C."""


def _raise_terminated(signum, frame):
    raise Terminated(f"signal {signum}")


def sigterm_as_interrupt() -> object | None:
    """Make SIGTERM raise :class:`Terminated` (a ``KeyboardInterrupt``) in the main thread.

    Every clean-up that Ctrl-C runs (the loop's and the adapter's ``stop``, joblib's
    abort that ends its workers, a recorder's close) then also runs on SIGTERM, the signal
    supervisors and ``kill`` send.

    Returns
    -------
    previous : handler | None
        The previous handler (None when not called from the main thread, where Python
        cannot install one).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)

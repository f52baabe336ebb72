"""Processes the product starts end with their parent, and a SIGTERM stops like Ctrl-C.

Three kinds of child process come from sblr-rt: joblib's (loky) workers of a calibration,
the refit worker of an adapting session (``concurrent.futures``, spawn), and the source
process of ``sblr-rt demo``; multiprocessing and loky add a resource tracker each. When the
parent ends cleanly (Ctrl-C, or SIGTERM through :func:`sigterm_as_interrupt`), it stops its
workers itself. When it dies without a chance to (SIGKILL, the OOM killer, a crash), nobody
would: a busy worker keeps computing for minutes and holds the parent's stdout, so a
supervisor reading it hangs. So each child watches its parent (:func:`watch_parent`): a
daemon thread compares ``os.getppid()`` with the parent's pid every ``POLL`` seconds and
ends the process once it differs (the child was re-parented: its parent is gone). The
resource trackers end by themselves once every process holding their pipe is gone.

Importing :mod:`sblr_rt` in a multiprocessing child (a joblib worker running a calibration
task, a spawned process) starts the watch; the refit worker starts it in its initializer
(it imports the package before multiprocessing names its parent), the demo's source
process from ``SBLR_RT_PARENT_PID`` (:data:`PARENT_ENV`).
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = [
    "EXIT_ORPHANED",
    "PARENT_ENV",
    "POLL",
    "Terminated",
    "sigterm_as_interrupt",
    "watch_parent",
    "watch_parent_from_env",
]

#: Seconds between two looks at the parent.
POLL = 0.5
#: Exit status of a child whose parent died (128 + SIGHUP, as a shell's orphaned job).
EXIT_ORPHANED = 129
#: Environment variable naming the pid a command-line process watches (``sblr-rt demo``
#: starts its source process with it).
PARENT_ENV = "SBLR_RT_PARENT_PID"

_lock = threading.Lock()
_watched: int | None = None  # the parent pid this process watches


def watch_parent(pid: int | None = None, *, poll: float = POLL) -> bool:
    """End this process when its parent ends (a daemon thread; idempotent).

    Parameters
    ----------
    pid : int | None
        The parent's pid; None: the multiprocessing parent
        (:func:`multiprocessing.parent_process`).
    poll : float
        Seconds between two looks.

    Returns
    -------
    watching : bool
        Whether a watch runs (False in a process with no known parent).

    Notes
    -----
    The process ends with :func:`os._exit` (status :data:`EXIT_ORPHANED`): no clean-up runs,
    which is what a worker whose results nobody will read needs. A pid that is not this
    process's parent when the watch starts means the parent is already gone.
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
        target=_watch, args=(int(pid), float(poll)), name="sblr-rt parent watch", daemon=True
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


def _watch(pid: int, poll: float) -> None:
    while os.getppid() == pid:
        time.sleep(poll)
    os._exit(EXIT_ORPHANED)


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

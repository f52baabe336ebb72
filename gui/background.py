"""Run blocking calls (LSL resolution, connecting, calibration) off the GUI thread.

A :class:`BackgroundTask` runs a function in a worker thread and reports back in the GUI
thread: a QTimer polls the future, so no signal ever crosses threads and the GUI thread
never waits.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from PyQt5 import QtCore

logger = logging.getLogger("sblr_rt.gui")

_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sblr-gui")
        return _EXECUTOR


class BackgroundTask(QtCore.QObject):
    """Call ``fn(*args, **kwargs)`` in a worker thread; report in the GUI thread.

    Parameters
    ----------
    fn : callable
        The blocking call.
    *args, **kwargs
        Its arguments.
    on_done : callable | None
        Called in the GUI thread with the result.
    on_error : callable | None
        Called in the GUI thread with the exception (logged as well).
    poll_ms : int
        How often the GUI thread looks at the future.
    parent : QObject | None
        Qt parent (keeps the task alive).
    executor : Executor | None
        Where the call runs (a single-thread executor runs its calls one after another,
        in order); None: the shared pool of four threads.
    """

    def __init__(
        self,
        fn,
        *args,
        on_done=None,
        on_error=None,
        poll_ms: int = 30,
        parent=None,
        executor=None,
        **kwargs,
    ):
        super().__init__(parent)
        self.on_done = on_done
        self.on_error = on_error
        self.future: Future = (executor or _executor()).submit(fn, *args, **kwargs)
        self._finished = False
        self._timer = QtCore.QTimer(self)
        self._timer.timeout.connect(self._poll)
        self._timer.start(poll_ms)

    @property
    def done(self) -> bool:
        """Whether the call has finished (and been reported)."""
        return self._finished

    def _poll(self) -> None:
        if not self.future.done():
            return
        self._timer.stop()
        self._finished = True
        exc = self.future.exception()
        if exc is not None:
            if self.on_error is None:
                logger.error("background task failed: %s", exc, exc_info=exc)
                return
            # the handler tells the user; the traceback is for -v
            logger.warning("background task failed: %s", exc)
            logger.debug("the failed task's traceback", exc_info=exc)
            self.on_error(exc)
        elif self.on_done is not None:
            self.on_done(self.future.result())

"""The LSL clock: the one time base of every timestamp on this machine.

Every module that needs "now" in LSL time takes it from here (or is handed this function):
liblsl's clock is not :func:`time.monotonic` on every platform.
"""

from __future__ import annotations

from sblr_rt.stream._liblsl import pylsl

__all__ = ["local_clock"]


def local_clock() -> float:
    """Return the LSL clock (:func:`pylsl.local_clock`), in seconds.

    Returns
    -------
    now : float
        The time on the clock every LSL timestamp of this machine refers to.
    """
    return pylsl.local_clock()

"""Keep Python's cyclic garbage collector from stalling a live process.

The cyclic collector's full (generation 2) pass scans every container object the process
holds (after importing scipy, scikit-learn and MNE and loading a model, a great many),
stalling every thread at once: it sets the online loop's worst decision
(docs/benchmarks.md, "Online loop"). The objects that exist when a session starts
(modules, the model, the GUI) live until it ends, so scanning them again finds nothing.

:func:`freeze_heap` collects once, then moves every surviving object to the collector's
permanent generation (:func:`gc.freeze`), so that later passes scan only what was created
since. Reference counting still frees frozen objects that fall out of use; only reference
cycles among frozen objects would outlive the process's need for them. So each call first
returns the frozen objects to the collector and collects: a dashboard that stops one loop
and starts another gets the stopped loop's cycles (and its buffers) back at the next call.

The process is the application's: :mod:`sblr_rt.cli` (``sblr-rt run``) and the dashboard
call this when their loop has started. A script that runs a loop may do the same.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_heap"]


def freeze_heap() -> int:
    """Collect garbage once, then exempt every surviving object from later full passes.

    Call it once the session's long-lived objects exist (after the loop started). Each call
    first unfreezes and collects everything, so that cycles among objects frozen by an
    earlier call are collected too; only then does it freeze what survives.

    Returns
    -------
    n_frozen : int
        Objects in the collector's permanent generation.

    Examples
    --------
    >>> from sblr_rt.online import freeze_heap
    >>> freeze_heap() > 0
    True
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()

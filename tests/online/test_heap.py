"""freeze_heap: startup objects leave the collector's scans; garbage is still freed.

The suite's autouse fixture (tests/conftest.py) unfreezes after each test.
"""

from __future__ import annotations

import gc
import weakref

from sblr_rt.online import freeze_heap


class _Node:
    pass


def test_freeze_collects_existing_cycles_then_exempts_the_survivors():
    garbage = _Node()
    garbage.me = garbage  # an unreachable cycle once the name goes
    dead = weakref.ref(garbage)
    del garbage
    kept = _Node()
    n = freeze_heap()
    assert dead() is None  # collected before freezing, not frozen forever
    # frozen objects freed since (by another thread of the suite) only lower the count
    assert 0 < gc.get_freeze_count() <= n
    assert not any(obj is kept for obj in gc.get_objects())  # out of every generation


def test_frozen_objects_are_still_freed_by_reference_counting():
    obj = _Node()
    ref = weakref.ref(obj)
    freeze_heap()
    del obj
    assert ref() is None


def test_objects_made_after_freezing_are_still_collected():
    freeze_heap()
    later = _Node()
    later.me = later
    dead = weakref.ref(later)
    del later
    gc.collect()
    assert dead() is None


def test_a_later_call_collects_cycles_frozen_by_an_earlier_one():
    """A stopped loop's objects, frozen while it ran, are collected at the next call."""
    stopped = _Node()
    stopped.me = stopped
    dead = weakref.ref(stopped)
    freeze_heap()  # frozen while in use
    del stopped  # the cycle keeps it alive; no pass sees a frozen object
    gc.collect()
    assert dead() is not None
    freeze_heap()
    assert dead() is None

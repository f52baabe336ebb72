"""The calibration settings the tests share: each small search written once.

A test that calibrates to get a model, or to check what calibration records, takes one of
these and adds what it is about (a feature path, a window, a class map). The one builder
of small fitted models without calibration is :mod:`tests.models`.
"""

from __future__ import annotations

__all__ = ["NO_SEARCH", "SMALL_GRID"]

#: No penalty search: the fixed feature path at rank 1, 3-fold CV, one job (the
#: cheapest full calibration: epochs, scaling, CV score, final fit, metadata).
NO_SEARCH = {"search": "none", "ranks": (1,), "cv": 3, "n_jobs": 1}

#: A small search: ranks 1 and 2, two l1 fractions, two l2 values (the fast plan's grid on
#: 2 x 2 x 2 points per rank), one job.
SMALL_GRID = {
    "ranks": (1, 2),
    "l1_fractions": (0.0, 0.05),
    "l2_values": (0.0, 0.1),
    "n_jobs": 1,
}

"""Bounds on numbers: one table for the command line, configuration files, the API and model files.

A number reaches sblr-rt from a command-line option, a TOML configuration, a keyword of
the Python API or a model file's header. Each kind of number has one range here, and every
entry point checks it with :func:`check_number` (or :func:`check_n_jobs`) before any work,
so that the same value gives the same error wherever it comes from: ``--tmax 1e5``,
``tmax = 1e5`` in a TOML file and ``calibrate(..., tmax=1e5)`` are all refused with "must be
a finite number >= -60 and <= 60 seconds (an epoch spans at most a minute around its cue)",
where the value would otherwise have asked for a terabyte.

Examples
--------
>>> check_number("tmax", 3.5, "epoch", low_open=False)
3.5
>>> check_number("tmax", 1e5, "epoch", low_open=False)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: 'tmax' must be a finite number >= -60 and <= 60 seconds (an epoch ...), got 100000.0
"""

from __future__ import annotations

import math
import numbers
import os

__all__ = [
    "LIMITS",
    "MAX_MODEL_VERSION",
    "N_JOBS_PER_CPU",
    "check_n_jobs",
    "check_number",
    "max_n_jobs",
]

#: Ranges of the kinds of numbers: (low, high, unit, why the bound).
LIMITS = {
    "seconds": (0.0, 1e7, "seconds", "about 115 days"),
    "epoch": (-60.0, 60.0, "seconds", "an epoch spans at most a minute around its cue"),
    "sfreq": (0.0, 100_000.0, "Hz", "no EEG amplifier samples faster"),
    "channels": (1, 4096, "channels", "the largest EEG systems have 1024"),
    "chunk_ms": (0.0, 10_000.0, "ms", "a chunk longer than 10 s starves every consumer"),
    "speed": (0.0, 1000.0, "x", "replays faster than 1000x outrun any consumer"),
    "count": (1, 10**7, "", "ten million"),
    "trials": (0.0, 1e6, "trials", "a million trials"),
    "iterations": (1, 2000, "iterations", "4 times the default: a fit's time stays bounded"),
}

#: Largest model version: the numeric decision outlet sends it as float32, exact up to 2**24
#: (a version beyond made every numeric sample non-finite).
MAX_MODEL_VERSION = 2**24

#: Parallel workers per CPU at the most (``n_jobs``): more only queue for the same cores,
#: and each holds its own copy of the epochs (100,000 workers exhausted a machine's memory).
N_JOBS_PER_CPU = 4


def check_number(name: str, value, kind: str, *, low_open: bool = True):
    """Return ``value`` if it is a finite number within ``LIMITS[kind]``; raise otherwise.

    Parameters
    ----------
    name : str
        The parameter as the caller spells it (``'--tmax'`` on the command line, ``'tmax'``
        in a configuration), quoted in the message.
    value : int | float
        The number.
    kind : str
        A key of :data:`LIMITS`.
    low_open : bool
        Refuse the lower bound itself (``> low`` rather than ``>= low``).

    Returns
    -------
    value : int | float
        ``value``, unchanged.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a string, a bool).
    ValueError
        If it is not finite or out of range: ``'--sfreq' must be a finite number > 0 and
        <= 100000 Hz (no EEG amplifier samples faster), got 1000000000.0``.
    """
    if kind not in LIMITS:
        raise ValueError(f"'kind' must be one of {sorted(LIMITS)}, got {kind!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"'{name}' must be a number, got {type(value).__name__} {value!r:.80}")
    lo, hi, unit, why = LIMITS[kind]
    below = value <= lo if low_open else value < lo
    if math.isfinite(value) and not below and value <= hi:
        return value
    sign = ">" if low_open else ">="
    if math.isfinite(value) and below:
        seconds = " seconds" if unit == "seconds" else ""
        raise ValueError(f"'{name}' must be {sign} {lo:g}{seconds}, got {value!r}")
    unit = f" {unit}" if unit else ""
    raise ValueError(
        f"'{name}' must be a finite number {sign} {lo:g} and <= {hi:g}{unit} ({why}), "
        f"got {value!r}"
    )


def max_n_jobs(cpu_count: int | None = None) -> int:
    """Return the most parallel workers allowed: :data:`N_JOBS_PER_CPU` per CPU.

    Parameters
    ----------
    cpu_count : int | None
        CPUs of the machine (None: :func:`os.cpu_count`, 1 if unknown).

    Returns
    -------
    n : int
        ``N_JOBS_PER_CPU * cpu_count``.

    Examples
    --------
    >>> max_n_jobs(2)
    8
    """
    cpus = os.cpu_count() if cpu_count is None else cpu_count
    return N_JOBS_PER_CPU * max(int(cpus or 1), 1)


def check_n_jobs(name: str, value, *, cpu_count: int | None = None) -> int:
    """Return ``value`` if it is a valid number of parallel workers; raise otherwise.

    Valid: an integer from 1 to :func:`max_n_jobs` (:data:`N_JOBS_PER_CPU` per CPU), or
    from ``-cpu_count`` to -1 (joblib's "all CPUs but ``|n_jobs| - 1``": -1 is all).

    Parameters
    ----------
    name : str
        The parameter as the caller spells it (``'--n-jobs'``, ``'n_jobs'``).
    value : int
        The number of workers.
    cpu_count : int | None
        CPUs of the machine (None: :func:`os.cpu_count`).

    Returns
    -------
    value : int
        ``value`` as an ``int``.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is out of range: ``'n_jobs' must be an integer from 1 to 8 (4 per CPU, 2
        CPUs) or from -2 to -1 (-1: all CPUs), got 100000``.

    Examples
    --------
    >>> check_n_jobs("n_jobs", -1, cpu_count=2), check_n_jobs("n_jobs", 8, cpu_count=2)
    (-1, 8)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"'{name}' must be an integer, got {type(value).__name__} {value!r:.80}")
    cpus = max(int((os.cpu_count() if cpu_count is None else cpu_count) or 1), 1)
    high = max_n_jobs(cpus)
    if 1 <= value <= high or -cpus <= value <= -1:
        return int(value)
    raise ValueError(
        f"'{name}' must be an integer from 1 to {high} ({N_JOBS_PER_CPU} per CPU, {cpus} "
        f"CPUs) or from {-cpus} to -1 (-1: all CPUs), got {value!r}"
    )

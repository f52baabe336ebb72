"""Numbers from the command line, bounded by what a session and the machine can hold.

Each option that takes a number parses it with one of these ``argparse`` types: a value
that is not finite, or outside the option's range, is refused before any work starts, with
a message that names the limit (``--tmax 1e9`` would otherwise ask for a terabyte,
``--status-every nan`` would never print, ``--chunk-ms 1e9`` would push nothing). The ranges
are :data:`sblr_rt.validation.limits.LIMITS`, the table that configuration files, the
Python API and model files are checked against too.
"""

from __future__ import annotations

import argparse

from sblr_rt.validation.limits import LIMITS, check_n_jobs, check_number

__all__ = ["LIMITS", "bounded", "check_bounds", "n_jobs"]


def bounded(kind: str, *, low_open: bool = True, integer: bool = False):
    """Return an ``argparse`` type for a number within ``LIMITS[kind]``.

    The type parses the number; :func:`check_bounds` (called by the command line before
    the command runs) refuses it when it is not finite or out of range, in one line.

    Parameters
    ----------
    kind : str
        A key of :data:`LIMITS`.
    low_open : bool
        Refuse the lower bound itself (``> low`` rather than ``>= low``).
    integer : bool
        Parse an integer.

    Returns
    -------
    parse : callable
        ``parse(text) -> float | int``.

    Examples
    --------
    >>> bounded("chunk_ms")("20")
    20.0
    """
    if kind not in LIMITS:
        raise ValueError(f"'kind' must be one of {sorted(LIMITS)}, got {kind!r}")

    def parse(text: str):
        return int(text) if integer else float(text)

    parse.__name__ = "integer" if integer else "number"  # named in argparse's messages
    parse.bounds = (kind, low_open)
    return parse


def check_bounds(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse every bounded option of ``parser`` whose value is out of its range.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser (its options typed with :func:`bounded`).
    args : argparse.Namespace
        Its parsed arguments.

    Raises
    ------
    ValueError
        ``'--sfreq' must be a finite number > 0 and <= 100000 Hz (no EEG amplifier samples
        faster), got 1000000000.0``.
    """
    for action in parser._actions:
        bounds = getattr(action.type, "bounds", None)
        value = getattr(args, action.dest, None)
        if bounds is None or value is None:
            continue
        for v in value if isinstance(value, list | tuple) else (value,):
            _check(action.option_strings[0] if action.option_strings else action.dest,
                   v, *bounds)  # fmt: skip


def n_jobs(text: str) -> int:
    """Parse ``--n-jobs``, checked by :func:`check_bounds` (:func:`~.limits.check_n_jobs`).

    Examples
    --------
    >>> n_jobs("-1")
    -1
    """
    return int(text)


n_jobs.__name__ = "integer"  # named in argparse's messages
n_jobs.bounds = ("n_jobs", False)


def _check(option: str, value, kind: str, low_open: bool) -> None:
    if kind == "n_jobs":
        check_n_jobs(option, value)
    else:
        check_number(option, value, kind, low_open=low_open)

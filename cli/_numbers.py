"""Numbers from the command line, bounded by what a session and the machine can hold.

Each option that takes a number parses it with one of these ``argparse`` types: a value
that is not finite, or outside the option's range, is refused before any work starts, with
a message that names the limit (``--tmax 1e9`` would otherwise ask for a terabyte,
``--status-every nan`` would never print, ``--chunk-ms 1e9`` would push nothing).
"""

from __future__ import annotations

import argparse
import math

from sblr_rt.io.limits import MAX_SFREQ

__all__ = ["LIMITS", "bounded", "check_bounds"]

#: Ranges of the kinds of numbers options take: (low, high, unit, why the bound).
LIMITS = {
    "seconds": (0.0, 1e7, "seconds", "about 115 days"),
    "epoch": (-60.0, 60.0, "seconds", "an epoch spans at most a minute around its cue"),
    "sfreq": (0.0, MAX_SFREQ, "Hz", "no EEG amplifier samples faster"),
    "channels": (1, 4096, "channels", "the largest EEG systems have 1024"),
    "chunk_ms": (0.0, 10_000.0, "ms", "a chunk longer than 10 s starves every consumer"),
    "speed": (0.0, 1000.0, "x", "replays faster than 1000x outrun any consumer"),
    "count": (1, 10**7, "", "ten million"),
    "trials": (0.0, 1e6, "trials", "a million trials"),
}


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
        ``'--sfreq' must be <= 100000 Hz (no EEG amplifier samples faster), got 1e+09``.
    """
    for action in parser._actions:
        bounds = getattr(action.type, "bounds", None)
        value = getattr(args, action.dest, None)
        if bounds is None or value is None:
            continue
        for v in value if isinstance(value, list | tuple) else (value,):
            _check(action.option_strings[0] if action.option_strings else action.dest,
                   v, *bounds)  # fmt: skip


def _check(option: str, value, kind: str, low_open: bool) -> None:
    lo, hi, unit, why = LIMITS[kind]
    below = value <= lo if low_open else value < lo
    if math.isfinite(value) and not below and value <= hi:
        return
    sign = ">" if low_open else ">="
    if math.isfinite(value) and below:
        seconds = " seconds" if unit == "seconds" else ""
        raise ValueError(f"'{option}' must be {sign} {lo:g}{seconds}, got {value!r}")
    unit = f" {unit}" if unit else ""
    raise ValueError(
        f"'{option}' must be a finite number {sign} {lo:g} and <= {hi:g}{unit} ({why}), "
        f"got {value!r}"
    )

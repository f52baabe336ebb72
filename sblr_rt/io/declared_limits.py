"""What a recording or a stream may declare: the bounds checked before anything is allocated.

A header is read before its data: a file or a stream that declares a rate no amplifier
gives, or samples that would not fit in memory, is refused with one line naming the limit,
before a byte of its data is read or a buffer allocated. The file readers
(:mod:`sblr_rt.io.readers`), the recorder's sidecars and the LSL sources
(:mod:`sblr_rt.stream`) check against these same numbers, and so does the command line
(``--sfreq``).

Examples
--------
>>> check_sfreq(160.0, what="'S001R04.edf'")
160.0
>>> check_sfreq(1.6e8, what="'x.edf'")
Traceback (most recent call last):
...
ValueError: 'x.edf' declares a sampling rate of 1.6e+08 Hz: expected a rate in (0, 100000] ...
"""

from __future__ import annotations

import math

from sblr_rt.validation.limits import LIMITS

__all__ = [
    "MAX_COMPRESSION_RATIO",
    "MAX_DATA_BYTES",
    "MAX_SFREQ",
    "check_allocation",
    "check_sfreq",
    "format_bytes",
]

#: Highest sampling rate in Hz a recording or a stream may declare: no EEG amplifier
#: samples faster (the bound of ``sfreq`` in :data:`sblr_rt.validation.limits.LIMITS`).
MAX_SFREQ = LIMITS["sfreq"][1]

#: Most bytes the samples of one recording (as float64) or one stream's buffers may take.
MAX_DATA_BYTES = 2 * 1024**3

#: Most a compressed block of a file may expand (decompressed / compressed bytes) once it
#: is larger than :data:`COMPRESSION_FLOOR`: EEG compresses about 2-4 times; a block that
#: expands 1000 times holds no recording (a "zip bomb").
MAX_COMPRESSION_RATIO = 50.0

#: Size in bytes below which a compressed block is not judged by its ratio (small arrays
#: of zeros compress very well and cost nothing).
COMPRESSION_FLOOR = 64 * 1024**2


def check_sfreq(sfreq, *, what: str) -> float:
    """Return ``sfreq`` as a float if it is a rate an EEG amplifier gives, else raise.

    Parameters
    ----------
    sfreq : float
        The declared sampling rate in Hz.
    what : str
        How to name the file or stream that declares it in the message.

    Returns
    -------
    sfreq : float
        The rate, finite and in ``(0, MAX_SFREQ]``.

    Raises
    ------
    ValueError
        If the rate is not a finite number in ``(0, MAX_SFREQ]``.
    """
    try:
        value = float(sfreq)
    except (TypeError, ValueError, OverflowError):
        value = None
    if value is None:
        raise ValueError(
            f"{what} declares a sampling rate of {sfreq!r}: expected a number of Hz in "
            f"(0, {MAX_SFREQ:g}], got {sfreq!r}"
        )
    if not (math.isfinite(value) and 0 < value <= MAX_SFREQ):
        raise ValueError(
            f"{what} declares a sampling rate of {value:g} Hz: expected a rate in "
            f"(0, {MAX_SFREQ:g}] Hz (no EEG amplifier samples faster), got {value:g}"
        )
    return value


def check_allocation(n_bytes, *, what: str, limit: int = MAX_DATA_BYTES) -> None:
    """Raise before an allocation of ``n_bytes`` that would exceed ``limit``.

    Parameters
    ----------
    n_bytes : int | float
        The bytes the allocation would take (estimated from a header).
    what : str
        What would be allocated, for the message (``"'x.mat' variable 'cnt'"``).
    limit : int
        The most bytes allowed (default :data:`MAX_DATA_BYTES`).

    Raises
    ------
    ValueError
        If ``n_bytes`` is more than ``limit`` (or not a finite number).
    """
    if not (math.isfinite(float(n_bytes)) and n_bytes <= limit):
        raise ValueError(
            f"{what} would take {format_bytes(n_bytes)} in memory: expected at most "
            f"{format_bytes(limit)}, got {format_bytes(n_bytes)}; refused before allocating"
        )


def format_bytes(n_bytes) -> str:
    """Return a size in bytes as text (``"1.0 GiB"``, ``"995.0 kiB"``)."""
    value = float(n_bytes)
    if not math.isfinite(value):
        return f"{value} bytes"
    for unit in ("bytes", "kiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - the loop returns

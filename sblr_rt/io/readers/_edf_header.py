"""Whether an EDF/BDF file holds every data record its header announces.

MNE reads a cut file as far as it goes (and says so only at a verbosity we silence), so a
recording cut at half its bytes would pass for a whole one of half the length. The header
is checked here, from its bytes (EDF specification, section 2.1):

- bytes 184-192: number of bytes in the header, 236-244: number of data records (-1 when
  unknown), 244-252: duration of a data record in seconds, 252-256: number of signals ``ns``;
- then ``ns`` signal headers, field by field: the samples per data record of each signal
  start at byte ``256 + 216 * ns`` (8 bytes each).

A sample is 2 bytes in EDF, 3 in BDF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sblr_rt.io.declared_limits import check_sfreq

__all__ = ["EdfRecords", "check_edf_rate", "edf_records"]

#: Byte offset of the samples-per-record fields, per signal, after the 256-byte main header:
#: label 16, transducer 80, physical dimension 8, physical min/max 8+8, digital min/max
#: 8+8, prefiltering 80.
_SAMPLES_FIELD = 216


@dataclass(frozen=True)
class EdfRecords:
    """What the header announces and what the file holds.

    Attributes
    ----------
    n_declared : int
        Data records announced by the header.
    n_present : int
        Whole data records present in the file.
    record_seconds : float
        Duration of one data record.
    record_bytes : int
        Bytes of one data record.
    """

    n_declared: int
    n_present: int
    record_seconds: float
    record_bytes: int

    @property
    def truncated(self) -> bool:
        """Whether fewer records are present than announced."""
        return self.n_present < self.n_declared


def _header(path: Path) -> tuple[int, int, float, list[int]] | None:
    """Return (header bytes, data records, record seconds, samples per record per signal).

    None when the header does not parse (the reader's own checks then apply).
    """
    with open(path, "rb") as f:
        main = f.read(256)
        try:
            header_bytes = int(main[184:192].decode("ascii").strip())
            n_declared = int(main[236:244].decode("ascii").strip())
            record_seconds = float(main[244:252].decode("ascii").strip())
            ns = int(main[252:256].decode("ascii").strip())
        except (UnicodeDecodeError, ValueError):
            return None
        if len(main) < 256 or not 0 < ns <= 100_000:
            return None
        f.seek(256 + _SAMPLES_FIELD * ns)
        fields = f.read(8 * ns)
    try:
        samples = [int(fields[8 * i : 8 * i + 8].decode("ascii").strip()) for i in range(ns)]
    except (UnicodeDecodeError, ValueError):
        return None
    return header_bytes, n_declared, record_seconds, samples


def check_edf_rate(path: Path) -> float | None:
    """Check the sampling rates an EDF/BDF header declares, before any data is read.

    Each signal's rate is its samples per data record divided by the record's duration
    (a record of 1e-6 s holding 160 samples declares 1.6e8 Hz).

    Parameters
    ----------
    path : Path
        An ``.edf`` or ``.bdf`` file.

    Returns
    -------
    sfreq : float | None
        The highest rate of its signals, within ``(0, MAX_SFREQ]``
        (:data:`sblr_rt.io.declared_limits.MAX_SFREQ`); None when the header does not parse.

    Raises
    ------
    ValueError
        If the record duration is not a positive number, or a signal's rate is out of
        ``(0, MAX_SFREQ]``; the message names the file, the duration and the samples.
    """
    header = _header(path)
    if header is None:
        return None
    _, _, record_seconds, samples = header
    top = max(samples)
    sfreq = top / record_seconds if record_seconds > 0 else math.nan
    what = (
        f"'{path}' (data records of {record_seconds:g} s holding up to {top} samples per signal)"
    )
    if not record_seconds > 0 or not math.isfinite(record_seconds):
        raise ValueError(
            f"{what} declares no usable record duration: expected a positive number of "
            f"seconds, got {record_seconds:g}"
        )
    if min(samples) <= 0:
        raise ValueError(
            f"{what} declares a signal without samples: expected a positive number of "
            f"samples per data record for every signal, got {min(samples)}"
        )
    return check_sfreq(sfreq, what=what)


def edf_records(path: Path) -> EdfRecords | None:
    """Compare the data records an EDF/BDF header announces with the file's size.

    Parameters
    ----------
    path : Path
        An ``.edf`` or ``.bdf`` file.

    Returns
    -------
    records : EdfRecords | None
        None when the header does not say (unknown record count, unreadable header): the
        reader's own checks then apply.
    """
    bytes_per_sample = 3 if path.suffix.lower() == ".bdf" else 2
    size = path.stat().st_size
    header = _header(path)
    if header is None or header[1] < 0:
        return None
    header_bytes, n_declared, record_seconds, samples = header
    record_bytes = bytes_per_sample * sum(samples)
    if record_bytes <= 0:
        return None
    n_present = max(size - header_bytes, 0) // record_bytes
    return EdfRecords(n_declared, n_present, record_seconds, record_bytes)

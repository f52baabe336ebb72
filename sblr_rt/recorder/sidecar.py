"""The sidecar folder a recording is written to as it arrives, and how it is read back.

A sidecar ``OUT.fif.rec/`` holds:

- ``header.json``: stream name, source_id, channel labels, units, rate, sample dtype, LSL
  and wall-clock start times;
- ``eeg.bin``: the samples, raw rows of ``n_channels`` values in the stream's dtype;
- ``eeg_ts.bin``: their LSL timestamps, float64;
- ``markers.jsonl``: one ``{"t": timestamp, "value": "..."}`` per line.

:class:`SidecarWriter` keeps what arrives in memory and writes it at each :meth:`flush`,
markers first, then timestamps, then samples: whatever a kill leaves on disk never holds
EEG rows without the markers received before them. :func:`read_sidecar` reads a complete
sidecar, one cut short by a kill, or one half deleted (missing files read as empty,
missing timestamps rebuilt from the rate).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np

from sblr_rt.io.declared_limits import check_sfreq
from sblr_rt.io.paths import MAX_HEADER_BYTES, check_inside

logger = logging.getLogger("sblr_rt.recorder.sidecar")

SIDECAR_SUFFIX = ".rec"
#: what a finished recording's sidecar is renamed to before it is deleted
DELETING_SUFFIX = ".deleting"
FILES = ("header.json", "eeg.bin", "eeg_ts.bin", "markers.jsonl")
_SCALE_TO_VOLTS = {
    "v": 1.0,
    "volt": 1.0,
    "volts": 1.0,
    "mv": 1e-3,
    "millivolt": 1e-3,
    "millivolts": 1e-3,
    "uv": 1e-6,
    "µv": 1e-6,
    "μv": 1e-6,
    "microvolt": 1e-6,
    "microvolts": 1e-6,
    "nv": 1e-9,
    "nanovolts": 1e-9,
}


def sidecar_path(out) -> Path:
    """Return the sidecar folder used while recording to ``out``.

    Parameters
    ----------
    out : str | Path
        The FIF file being recorded.

    Returns
    -------
    path : Path
        ``out`` + ``".rec"``.
    """
    out = Path(out)
    return out.with_name(out.name + SIDECAR_SUFFIX)


def volts_per_unit(unit: str) -> float:
    """Return the factor from ``unit`` to volts (microvolts when unknown, as XDF/LSL).

    Parameters
    ----------
    unit : str
        A channel unit as LSL declares it (``"microvolts"``, ``"uV"``, ``"V"``...).

    Returns
    -------
    scale : float
        Volts per ``unit``.
    """
    return _SCALE_TO_VOLTS.get((unit or "").strip().lower(), 1e-6)


def write_json_atomic(path: Path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


class SidecarWriter:
    """Write a sidecar folder: rows and markers kept in memory until :meth:`flush`.

    Parameters
    ----------
    sidecar : Path
        The folder to create (it must not exist).
    header : dict
        ``header.json``; needs ``ch_names`` and ``dtype``.
    """

    def __init__(self, sidecar: Path, header: dict) -> None:
        self.sidecar = Path(sidecar)
        self.dtype = np.dtype(header["dtype"])
        self.n_channels = len(header["ch_names"])
        self.sidecar.mkdir(parents=True)
        write_json_atomic(self.sidecar / "header.json", header)
        self._files = {name: open(self.sidecar / name, "ab") for name in FILES[1:]}
        self._rows: list[bytes] = []
        self._stamps: list[bytes] = []
        self._lines: list[bytes] = []

    def add_rows(self, chunk, timestamps) -> None:
        """Queue samples ``(n_samples, n_channels)`` and their timestamps ``(n_samples,)``."""
        self._rows.append(np.ascontiguousarray(chunk, dtype=self.dtype).tobytes())
        self._stamps.append(np.asarray(timestamps, dtype=np.float64).tobytes())

    def add_marker(self, timestamp: float, value) -> None:
        """Queue one marker (a tuple value is joined with spaces)."""
        if isinstance(value, tuple):
            value = value[0] if len(value) == 1 else " ".join(map(str, value))
        self._lines.append(
            (json.dumps({"t": float(timestamp), "value": str(value)}) + "\n").encode()
        )

    def flush(self) -> None:
        """Write what was queued, markers first, and ``fsync`` it."""
        for name, pending in (
            ("markers.jsonl", self._lines),
            ("eeg_ts.bin", self._stamps),
            ("eeg.bin", self._rows),
        ):
            f = self._files[name]
            f.write(b"".join(pending))
            f.flush()
            pending.clear()
        for f in self._files.values():
            os.fsync(f.fileno())

    def close(self) -> None:
        """Close the files (without flushing what is still queued)."""
        for f in self._files.values():
            try:
                f.close()
            except OSError:  # pragma: no cover
                pass
        self._files = {}


def _read_bytes(path: Path) -> np.ndarray:
    try:
        return np.fromfile(path, dtype=np.uint8)
    except FileNotFoundError:
        return np.zeros(0, np.uint8)


def _read_markers(path: Path) -> list[tuple[float, str]]:
    markers = []
    if not path.is_file():
        return markers
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
            markers.append((float(entry["t"]), str(entry["value"])))
        except (ValueError, KeyError, TypeError):
            logger.warning("%s: skipped a damaged marker line %r", path, line[:80])
    return markers


def read_sidecar(sidecar) -> dict:
    """Load a sidecar folder: complete, cut short by a kill, or half deleted.

    Parameters
    ----------
    sidecar : str | Path
        The ``OUT.fif.rec`` folder.

    Returns
    -------
    contents : dict
        ``header`` (dict), ``data`` (n_samples, n_channels) in the stream's dtype,
        ``timestamps`` (n_samples,), ``markers`` list of (timestamp, value), ``missing``
        (names of the sidecar files that were not there). A partly written last row or
        line is dropped; without ``eeg_ts.bin`` the timestamps are rebuilt from the
        nominal rate (a warning says so).

    Raises
    ------
    ValueError
        If there is no ``header.json``, a file of the sidecar is a link out of it, the
        header is larger than :data:`~sblr_rt.io.paths.MAX_HEADER_BYTES` or declares a
        rate out of ``(0, MAX_SFREQ]`` (:mod:`sblr_rt.io.declared_limits`).
    """
    sidecar = Path(sidecar)
    header_path = sidecar / "header.json"
    if not header_path.is_file():
        raise ValueError(f"'{sidecar}' is not a recording sidecar: no header.json in it")
    for name in FILES:  # a file linked out of the sidecar is not read
        if (sidecar / name).is_symlink():
            check_inside(sidecar / name, sidecar, what=f"the sidecar '{sidecar}' ({name})")
    size = header_path.stat().st_size
    if size > MAX_HEADER_BYTES:
        raise ValueError(
            f"'{header_path}' holds {size} bytes: expected a header of at most "
            f"{MAX_HEADER_BYTES} bytes (the recorder writes about 2 kB), got {size}"
        )
    header = json.loads(header_path.read_text())
    header["sfreq"] = check_sfreq(header.get("sfreq"), what=f"the sidecar header '{header_path}'")
    missing = [name for name in FILES if not (sidecar / name).is_file()]
    n_ch = len(header["ch_names"])
    dtype = np.dtype(header["dtype"])
    raw = _read_bytes(sidecar / "eeg.bin")
    n = raw.size // (n_ch * dtype.itemsize)
    if "eeg_ts.bin" in missing:
        timestamps = float(header.get("lsl_start", 0.0)) + np.arange(n) / float(header["sfreq"])
        if n:
            logger.warning("%s: no eeg_ts.bin; timestamps rebuilt from the nominal rate", sidecar)
    else:
        ts = _read_bytes(sidecar / "eeg_ts.bin")
        n = min(n, ts.size // 8)
        timestamps = ts[: n * 8].view(np.float64)
    data = raw[: n * n_ch * dtype.itemsize].view(dtype).reshape(n, n_ch)
    markers = _read_markers(sidecar / "markers.jsonl")
    return {
        "header": header,
        "data": data,
        "timestamps": timestamps[:n],
        "markers": markers,
        "missing": missing,
    }


def retire_sidecar(sidecar: Path) -> None:
    """Delete a converted sidecar: renamed first, so a kill never leaves half of it in place."""
    doomed = sidecar.with_name(sidecar.name + DELETING_SUFFIX)
    if doomed.exists():
        shutil.rmtree(doomed)
    os.replace(sidecar, doomed)
    shutil.rmtree(doomed)


def _nothing_to_recover(sidecar: Path) -> bool:
    """Return True when neither sample file of ``sidecar`` holds a byte."""
    data = [sidecar / name for name in ("eeg.bin", "eeg_ts.bin")]
    return not any(p.is_file() and p.stat().st_size for p in data)


def clear_leftovers(sidecar: Path) -> str | None:
    """Make way for a new recording to ``sidecar`` if what is there holds nothing to recover.

    A sidecar without a single sample (killed before its first flush, or while being
    created) is removed. One missing some of its files was killed while being deleted
    (already converted): it is moved aside, as it still holds bytes. A complete sidecar
    with samples is left alone: the caller refuses to record over it.

    Parameters
    ----------
    sidecar : Path
        The sidecar the new recording will use.

    Returns
    -------
    note : str | None
        What was done, for the user (None: nothing was there).
    """
    doomed = sidecar.with_name(sidecar.name + DELETING_SUFFIX)
    notes = []
    if doomed.exists():
        shutil.rmtree(doomed)
        notes.append(f"removed '{doomed}', a converted recording's sidecar left half deleted")
    if sidecar.is_dir() and _nothing_to_recover(sidecar):
        notes.append(f"removed '{sidecar}', a sidecar of a killed recording with no sample")
        shutil.rmtree(sidecar)
    elif sidecar.is_dir() and any(not (sidecar / name).is_file() for name in FILES):
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        aside = sidecar.with_name(f"{sidecar.name}.incomplete-{stamp}")
        os.replace(sidecar, aside)
        notes.append(
            f"moved the incomplete sidecar '{sidecar}' (a recording killed while it was "
            f"deleted) to '{aside}'; `sblr-rt record --recover {aside}` reads what it holds"
        )
    if not notes:
        return None
    note = "; ".join(notes)
    logger.warning("%s", note)
    return note

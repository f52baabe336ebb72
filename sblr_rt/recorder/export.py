"""Sidecar contents -> FIF file, written atomically (a temporary folder, then a rename).

The data go in volts, each marker becomes an annotation on the sample nearest to its
timestamp, a ``BAD_gap`` annotation marks each place where samples were lost, and the
LSL timestamp of the first sample, the effective rate and the units go into
``info["description"]`` as JSON.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

from sblr_rt.io.outputs import check_output
from sblr_rt.recorder.sidecar import volts_per_unit

logger = logging.getLogger("sblr_rt.recorder.export")


def check_out(out) -> Path:
    """Return ``out`` as a Path after checking it names a FIF file in an existing folder.

    Parameters
    ----------
    out : str | Path
        The output file.

    Returns
    -------
    out : Path
        The same path.
    """
    out = Path(out)
    name = out.name.lower()
    if not (name.endswith(".fif") or name.endswith(".fif.gz")):
        raise ValueError(f"'out' must be a .fif file name, got '{out}'")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"folder '{out.parent}' of 'out' does not exist")
    # a directory named *.fif, a folder that cannot be written: refused before recording
    return check_output(out, what="'out'")


def _description(header, ts, units) -> str:
    return json.dumps(
        {
            "recorded_by": "sblr-rt record",
            "stream": header["name"],
            "source_id": header["source_id"],
            "lsl_first_timestamp": float(ts[0]),
            "lsl_last_timestamp": float(ts[-1]),
            "effective_sfreq": (
                float((len(ts) - 1) / (ts[-1] - ts[0])) if ts[-1] > ts[0] else None
            ),
            "units": units[0] if len(set(units)) == 1 else units,
        }
    )


def _annotations(ts, markers, sfreq):
    onsets, descriptions, durations = [], [], []
    # gaps: a step larger than 1.5 nominal periods means lost samples
    steps = np.diff(ts)
    if len(steps) > 10:
        typical = float(np.median(steps))
        for i in np.flatnonzero(steps > 1.5 * typical):
            onsets.append((i + 1) / sfreq)
            descriptions.append("BAD_gap")
            durations.append(1.0 / sfreq)
    dropped = 0
    for t, value in markers:
        if t < ts[0] - 0.5 / sfreq or t > ts[-1] + 0.5 / sfreq:
            dropped += 1
            continue
        j = int(np.searchsorted(ts, t))
        k = min((k for k in (j - 1, j) if 0 <= k < len(ts)), key=lambda k: abs(ts[k] - t))
        onsets.append(k / sfreq)
        descriptions.append(value)
        durations.append(0.0)
    if dropped:
        logger.warning("%d markers outside the recorded samples were dropped", dropped)
    return onsets, durations, descriptions


def write_fif(contents: dict, out: Path, *, overwrite: bool = False) -> Path:
    """Write sidecar contents (:func:`~sblr_rt.recorder.sidecar.read_sidecar`) to FIF.

    The file is written in a temporary folder in ``out``'s folder and moved to ``out``
    only when complete: a crash leaves either the old file or the new one.

    Parameters
    ----------
    contents : dict
        ``header``, ``data`` (n_samples, n_channels), ``timestamps`` (n_samples,),
        ``markers``.
    out : Path
        The FIF file.
    overwrite : bool
        Replace an existing file.

    Returns
    -------
    out : Path
        The FIF file written.
    """
    import mne

    out = check_out(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"'{out}' exists; pass overwrite=True to replace it")
    header, data, ts = contents["header"], contents["data"], contents["timestamps"]
    if len(ts) == 0:
        raise ValueError("the sidecar holds no EEG sample; nothing to write, got 0 samples")
    sfreq = float(header["sfreq"])
    units = header.get("units") or [""] * len(header["ch_names"])
    scale = np.array([volts_per_unit(u) for u in units])
    info = mne.create_info(header["ch_names"], sfreq, "eeg")
    info["description"] = _description(header, ts, units)
    raw = mne.io.RawArray((data.astype(np.float64) * scale).T, info, verbose="error")
    try:
        start = datetime.datetime.fromisoformat(header["utc_start"])
        raw.set_meas_date(start + datetime.timedelta(seconds=float(ts[0]) - header["lsl_start"]))
    except (KeyError, ValueError, TypeError):  # damaged header: no measurement date
        pass
    onsets, durations, descriptions = _annotations(ts, contents["markers"], sfreq)
    if onsets:
        raw.set_annotations(
            mne.Annotations(onsets, durations, descriptions, orig_time=raw.info["meas_date"])
        )
    fmt = "double" if np.dtype(header["dtype"]).itemsize >= 8 else "single"
    _save_atomically(raw, out, fmt=fmt)
    logger.info("wrote %s: %d samples, %d annotations", out, len(ts), len(onsets))
    return out


def _save_atomically(raw, out: Path, *, fmt: str) -> None:
    """Save ``raw`` in a temporary folder next to ``out``, then move it into place.

    The files keep their final names inside the temporary folder, so the parts of a
    recording larger than 2 GB (``out-1.fif``...) still name each other; the main file is
    moved last: until then, any previous ``out`` stays whole.
    """
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*does not conform to MNE naming.*")
            raw.save(staging / out.name, fmt=fmt, overwrite=True, verbose="error")
        parts = sorted(p for p in staging.iterdir() if p.name != out.name)
        for path in [*parts, staging / out.name]:
            with open(path, "rb") as f:
                os.fsync(f.fileno())
            os.replace(path, out.parent / path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

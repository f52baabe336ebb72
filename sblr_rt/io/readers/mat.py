"""BCI-competition recordings in MATLAB files (v4-v7).

- continuous, as competition III data sets IVa/IVb: ``cnt`` (n_samples, n_channels),
  ``mrk.pos`` (1-based sample index of each cue), ``mrk.y`` (label, NaN when unknown),
  optional ``mrk.className`` (or ``nfo.classes``, with -1/+1 labels as in competition IV
  data set 1), ``nfo.clab``, ``nfo.fs``; a label becomes its class name when known.
  Integer ``cnt`` is stored in 0.1 uV steps and is converted to uV as the competition
  documents.
- epoched, as competition 2003 data set IV: ``x_train`` (n_times, n_channels, n_trials),
  ``y_train`` (n_trials,), ``clab``. Trials are concatenated; one marker at each trial's
  first sample carries its label; ``epoch_length`` is n_times. The rate is taken from
  ``fs``/``nfo.fs`` when stored, else 100 Hz (the rate of that data set).

Before :func:`scipy.io.loadmat` decompresses anything, the file is scanned
(:func:`check_mat_size`): each compressed variable is inflated in pieces of 1 MiB that are
counted and dropped, and the file is refused, in constant memory, as soon as its
variables exceed :data:`~sblr_rt.io.declared_limits.MAX_DATA_BYTES` or a compressed variable of
more than 64 MiB expands more than :data:`~sblr_rt.io.declared_limits.MAX_COMPRESSION_RATIO` times
(a "zip bomb": 1 MB declaring 1 GB). The rate must be one an amplifier gives.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from sblr_rt.io import declared_limits as limits
from sblr_rt.io.readers._common import logger, marker_text
from sblr_rt.io.recording import Recording

__all__ = ["check_mat_size", "read_mat"]

#: MAT v5 data types of a top-level element: a matrix, or a zlib-compressed element.
_MI_MATRIX, _MI_COMPRESSED = 14, 15
#: Bytes inflated per step of the scan.
_PIECE = 1 << 20

#: Rate of the BCI Competition 2003 data set IV, used when an epoched .mat stores none.
_BCICOMP2003_SFREQ = 100.0


def _mat_get(obj, name: str):
    """Return ``obj.name`` for a MATLAB struct (loaded squeezed, as objects) or None."""
    if obj is None:
        return None
    return getattr(obj, name, None)


def _mat_strings(value) -> list[str]:
    arr = np.atleast_1d(np.asarray(value, dtype=object))
    return [str(np.asarray(v).reshape(-1)[0]) if np.size(v) else "" for v in arr.ravel()]


def check_mat_size(path: Path) -> int:
    """Count the bytes a MATLAB file's variables take once decompressed, in bounded memory.

    Parameters
    ----------
    path : Path
        A ``.mat`` file (v4: its size; v5/v7: every top-level variable, compressed ones
        inflated piece by piece and dropped; v7.3 is HDF5 and refused by the reader).

    Returns
    -------
    n_bytes : int
        The bytes of its variables as stored, decompressed.

    Raises
    ------
    ValueError
        If the variables exceed :data:`~sblr_rt.io.declared_limits.MAX_DATA_BYTES`, or a compressed
        variable larger than :data:`~sblr_rt.io.declared_limits.COMPRESSION_FLOOR` expands more
        than :data:`~sblr_rt.io.declared_limits.MAX_COMPRESSION_RATIO` times; raised as soon as the
        scan sees it, before anything is allocated.
    """
    limit = limits.MAX_DATA_BYTES
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(128)
        endian = {b"IM": "<", b"MI": ">"}.get(head[126:128]) if len(head) == 128 else None
        if endian is None:
            # MATLAB v4 (no compression: the file's size bounds it) or not a MAT file
            limits.check_allocation(size, what=f"'{path}' (MATLAB v4 variables)", limit=limit)
            return size
        if head[124:126] not in (b"\x00\x01", b"\x01\x00"):
            return 0  # v7.3 (HDF5): refused by the reader
        total = 0
        while True:
            tag = f.read(8)
            if len(tag) < 8:
                return total
            mdtype, n_bytes = struct.unpack(endian + "II", tag)
            if mdtype >> 16:  # a small element: its data sit in the tag
                continue
            if mdtype == _MI_COMPRESSED:
                total += _inflated_size(f, n_bytes, path=path, before=total, limit=limit)
            else:
                total += n_bytes
                f.seek(n_bytes + (-n_bytes) % 8, 1)
            limits.check_allocation(total, what=f"'{path}' (its variables)", limit=limit)


def _inflated_size(f, n_bytes: int, *, path: Path, before: int, limit: int) -> int:
    """Inflate the next ``n_bytes`` of ``f`` piece by piece; return the bytes they give."""
    most = max(limits.COMPRESSION_FLOOR, limits.MAX_COMPRESSION_RATIO * n_bytes)
    inflate = zlib.decompressobj()
    remaining, out = n_bytes, 0
    while remaining > 0 and not inflate.eof:
        data = f.read(min(remaining, _PIECE))
        if not data:
            break
        remaining -= len(data)
        while data and not inflate.eof:
            try:
                out += len(inflate.decompress(data, _PIECE))
            except zlib.error:
                return out  # corrupt: loadmat says so
            data = inflate.unconsumed_tail
            if out > most:
                raise ValueError(
                    f"'{path}' holds a compressed variable of {limits.format_bytes(n_bytes)} "
                    f"that expands to more than {limits.format_bytes(out)}: expected at most "
                    f"{limits.MAX_COMPRESSION_RATIO:g} times its size (EEG compresses 2-4 "
                    f"times), got over {out / max(n_bytes, 1):.0f} times; refused before "
                    "decompressing it (a compression bomb?)"
                )
            limits.check_allocation(
                before + out, what=f"'{path}' (its variables, decompressed)", limit=limit
            )
    f.seek(remaining, 1)
    return out


def read_mat(path: Path) -> Recording:
    """Read a BCI-competition ``.mat`` file (see the module docstring).

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    recording : Recording
        Continuous (``cnt``) or epoched (``x_train``) samples in uV.

    Raises
    ------
    ValueError
        If the file is not a BCI-competition layout, is MATLAB v7.3, does not read, holds
        more than :data:`~sblr_rt.io.declared_limits.MAX_DATA_BYTES` or a compression bomb
        (:func:`check_mat_size`, before anything is decompressed), or declares a rate out
        of ``(0, MAX_SFREQ]``.
    """
    import scipy.io

    check_mat_size(path)
    try:
        mat = scipy.io.loadmat(path, squeeze_me=True, struct_as_record=False)
    except MemoryError as exc:
        raise ValueError(
            f"'{path}' does not fit in memory once decompressed: expected at most "
            f"{limits.format_bytes(limits.MAX_DATA_BYTES)} of variables that this machine "
            f"can hold, got a MemoryError ({exc})"
        ) from exc
    except NotImplementedError as exc:  # MATLAB v7.3 is HDF5
        raise ValueError(
            f"'{path}' is a MATLAB v7.3 (HDF5) file, which is not supported: save it with "
            f"-v7; got {exc}"
        ) from exc
    except Exception as exc:
        raise ValueError(
            f"'{path}' is not a readable MATLAB file (corrupt, truncated or another "
            f"format): {type(exc).__name__}: {exc}"
        ) from exc
    keys = sorted(k for k in mat if not k.startswith("__"))
    if "cnt" in mat:
        return _read_mat_continuous(path, mat)
    if "x_train" in mat:
        return _read_mat_epoched(path, mat)
    raise ValueError(
        f"'{path}' is not a BCI-competition recording: expected variables 'cnt', 'mrk', "
        f"'nfo' (continuous) or 'x_train', 'y_train', 'clab' (epoched); got {keys}"
    )


def _mat_sfreq(path: Path, mat: dict, *, default: float | None) -> float:
    for value in (mat.get("fs"), _mat_get(mat.get("nfo"), "fs"), mat.get("sfreq")):
        if value is not None and np.size(value) == 1:
            return limits.check_sfreq(np.asarray(value).reshape(-1)[0].item(), what=f"'{path}'")
    if default is None:
        raise ValueError(f"'{path}' stores no sampling rate ('nfo.fs' or 'fs'); got none")
    logger.info("%s stores no sampling rate; using %g Hz", path, default)
    return default


def _read_mat_continuous(path: Path, mat: dict) -> Recording:
    cnt = np.asarray(mat["cnt"])
    nfo, mrk = mat.get("nfo"), mat.get("mrk")
    if cnt.ndim != 2:
        raise ValueError(f"'{path}': 'cnt' must be (n_samples, n_channels), got {cnt.shape}")
    unit = "uV"
    limits.check_allocation(8.0 * cnt.size, what=f"'{path}' variable 'cnt' as float64")
    if np.issubdtype(cnt.dtype, np.integer):
        data = 0.1 * cnt.T.astype(np.float64)  # stored in 0.1 uV steps (competition III)
    else:
        data = cnt.T.astype(np.float64)
    clab = _mat_get(nfo, "clab")
    if clab is None:
        clab = mat.get("clab")
    labels = _mat_strings(clab) if clab is not None else []
    if len(labels) != data.shape[0]:
        raise ValueError(
            f"'{path}': expected {data.shape[0]} channel labels in 'nfo.clab', got {len(labels)}"
        )
    sfreq = _mat_sfreq(path, mat, default=None)
    times, values = np.zeros(0), []
    pos = _mat_get(mrk, "pos")
    if pos is not None and np.size(pos):
        pos = np.atleast_1d(np.asarray(pos, dtype=np.float64)).ravel()
        y = _mat_get(mrk, "y")
        y = np.full(pos.shape, np.nan) if y is None else np.asarray(y, dtype=np.float64)
        if y.ndim == 2:  # one-hot (n_classes, n_markers) layout of later BBCI files
            y = np.where(np.isnan(y).any(0), np.nan, np.argmax(y, axis=0) + 1.0)
        y = np.atleast_1d(y).ravel()
        if y.size != pos.size:
            raise ValueError(
                f"'{path}': 'mrk.y' must have one label per 'mrk.pos' ({pos.size}), got {y.size}"
            )
        names = _mat_get(mrk, "className")
        if names is None:
            names = _mat_get(nfo, "classes")  # BCI competition IV data set 1
        names = _mat_strings(names) if names is not None else None
        # labels are 1-based class indices, or -1/+1 for two classes (competition IV 1)
        signed = names is not None and len(names) == 2 and set(y[~np.isnan(y)]) <= {-1, 1}
        for label in y:
            if np.isnan(label):
                values.append("unlabeled")
            elif signed:
                values.append(names[0] if label < 0 else names[1])
            elif names and float(label).is_integer() and 1 <= label <= len(names):
                values.append(names[int(label) - 1])
            else:
                values.append(marker_text(label))
        times = (pos - 1) / sfreq  # MATLAB positions are 1-based
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=labels,
        marker_times=times,
        marker_values=values,
        source=str(path),
        unit=unit,
    )


def _read_mat_epoched(path: Path, mat: dict) -> Recording:
    size = np.size(mat["x_train"])
    limits.check_allocation(8.0 * size, what=f"'{path}' variable 'x_train' as float64")
    x = np.asarray(mat["x_train"], dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(
            f"'{path}': 'x_train' must be (n_times, n_channels, n_trials), got {x.shape}"
        )
    n_times, n_channels, n_trials = x.shape
    y = mat.get("y_train")
    if y is None:
        raise ValueError(f"'{path}': epoched file without 'y_train' labels")
    y = np.atleast_1d(np.asarray(y)).ravel()
    if y.size != n_trials:
        raise ValueError(
            f"'{path}': 'y_train' must have one label per trial ({n_trials}), got {y.size}"
        )
    clab = mat.get("clab")
    if clab is None:
        clab = _mat_get(mat.get("nfo"), "clab")
    labels = _mat_strings(clab) if clab is not None else []
    if len(labels) != n_channels:
        raise ValueError(
            f"'{path}': expected {n_channels} channel labels in 'clab', got {len(labels)}"
        )
    sfreq = _mat_sfreq(path, mat, default=_BCICOMP2003_SFREQ)
    # (n_times, n_channels, n_trials) -> (n_channels, n_trials * n_times), trial-major
    data = x.transpose(1, 2, 0).reshape(n_channels, n_trials * n_times)
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=labels,
        marker_times=np.arange(n_trials) * n_times / sfreq,
        marker_values=[marker_text(v) for v in y],
        epoch_length=n_times,
        source=str(path),
        unit="uV",
    )

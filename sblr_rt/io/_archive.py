"""Reading an ``.npz`` model archive safely: every size is checked before any data is read.

A model file comes from disk and may be truncated, corrupt or hostile. Nothing here trusts
it: each member name appears once (and each key once per JSON object), the zip's member
list must equal what the JSON header lists, each member's declared
(uncompressed) size and its ``.npy`` header (shape, dtype) must agree with the header, and
the sum of what one load allocates is bounded (:data:`MAX_LOAD_BYTES`) before a single
array byte is read. Every refusal is a :class:`ModelFileError` (a ``ValueError``) whose
message names the problem and the file.
"""

from __future__ import annotations

import json
import math
import struct
import zipfile
import zlib
from pathlib import Path
from tokenize import TokenError

import numpy as np

__all__ = [
    "ALLOWED_DTYPES",
    "MAX_HEADER_BYTES",
    "MAX_LOAD_BYTES",
    "MAX_MEMBERS",
    "ModelFileError",
    "read_archive",
]

#: The most one load may allocate for arrays (1 GiB).
MAX_LOAD_BYTES = 1 << 30
#: The largest JSON header accepted (16 MiB).
MAX_HEADER_BYTES = 16 << 20
#: The most members a model archive may hold.
MAX_MEMBERS = 256
#: Array dtypes a model file may hold (``numpy.dtype.str``).
ALLOWED_DTYPES = ("<f8", "<f4", "<i8")
# An .npy member is its own header (at most 64 KiB in versions 1 and 2 as numpy writes
# them, far less in practice) followed by the raw array bytes.
_NPY_HEADER_MAX = 1 << 16


class ModelFileError(ValueError):
    """A file is not a valid sblr-rt model file (corrupt, truncated, hostile or newer)."""


def _npy_header(fp, where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Read an ``.npy`` member's header (shape, fortran order, dtype), not its data."""
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(fp, max_header_size=_NPY_HEADER_MAX)
        if version == (2, 0):
            return np.lib.format.read_array_header_2_0(fp, max_header_size=_NPY_HEADER_MAX)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile, SyntaxError, TokenError) as exc:
        # numpy parses the header's dict literal: a flipped bit can leave it unclosed
        raise ModelFileError(
            f"{where} is not a readable .npy array (not an sblr-rt model file, or a corrupt "
            f"one): {exc}"
        ) from exc
    raise ModelFileError(f"{where} has an unsupported .npy version, got {version}")


def _read_data(fp, shape, fortran: bool, dtype: np.dtype, where: str) -> np.ndarray:
    """Read exactly the array's bytes into a fresh array (its size was checked before)."""
    flat = np.empty(math.prod(shape), dtype=dtype)
    view = memoryview(flat).cast("B")
    done = 0
    while done < view.nbytes:
        n = fp.readinto(view[done:])
        if not n:
            raise ModelFileError(f"{where} is truncated: expected {view.nbytes} bytes, got {done}")
        done += n
    return flat.reshape(shape, order="F" if fortran else "C")


def _refuse_duplicates(names: list[str], path: Path) -> None:
    """Refuse an archive holding two members of one name (zipfile would read the last)."""
    seen = set()
    for name in names:
        if name in seen:
            raise ModelFileError(
                f"{path} holds two members named {name!r}: a model file names each member "
                "once (corrupt or tampered)"
            )
        seen.add(name)


def _unique_keys(pairs: list) -> dict:
    """Build a JSON object, refusing a key given twice (``json`` would keep the last)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ModelFileError(f"the header names the key {key[:80]!r} twice in one object")
        out[key] = value
    return out


def _reject_constant(text: str):
    raise ModelFileError(f"the header holds a non-finite number {text}: strict JSON only")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ModelFileError(f"the header holds a number out of range, got {text[:40]}")
    return value


def _read_header(zf: zipfile.ZipFile, path: Path) -> dict:
    info = zf.getinfo("header.npy")
    if info.file_size > MAX_HEADER_BYTES + _NPY_HEADER_MAX:
        raise ModelFileError(
            f"{path} has a header of {info.file_size} bytes; at most {MAX_HEADER_BYTES} "
            "are accepted"
        )
    with zf.open(info) as fp:
        shape, fortran, dtype = _npy_header(fp, f"{path} member 'header'")
        if dtype != np.uint8 or len(shape) != 1:
            raise ModelFileError(
                f"{path} is not an sblr-rt model file (member 'header' must be a 1-D uint8 "
                f"array, got shape {shape} {dtype})"
            )
        if shape[0] > MAX_HEADER_BYTES:
            raise ModelFileError(f"{path} has a header of {shape[0]} bytes, too large")
        raw = _read_data(fp, shape, fortran, dtype, f"{path} member 'header'")
    try:
        header = json.loads(
            raw.tobytes().decode("utf-8"),
            object_pairs_hook=_unique_keys,
            parse_constant=_reject_constant,
            parse_float=_parse_float,
        )
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{path} has a corrupt header: {type(exc).__name__}") from exc
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except ValueError as exc:  # integers beyond Python's digit limit
        raise ModelFileError(f"{path} has a corrupt header: {exc}") from exc
    if not isinstance(header, dict):
        raise ModelFileError(
            f"{path} is not an sblr-rt model file (header is a {type(header).__name__}, "
            "expected a JSON object)"
        )
    return header


def _listed_specs(listed, path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype, int]]:
    """Check the header's ``arrays`` entry; return name -> (shape, dtype, nbytes)."""
    if not isinstance(listed, dict):
        raise ModelFileError(f"{path} has a header whose 'arrays' is not an object")
    specs, total = {}, 0
    for name, spec in listed.items():
        shape = spec.get("shape") if isinstance(spec, dict) else None
        dtype = spec.get("dtype") if isinstance(spec, dict) else None
        if (
            not isinstance(shape, list)
            or len(shape) > 8
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
            or dtype not in ALLOWED_DTYPES
        ):
            raise ModelFileError(
                f"{path} lists array {name!r} with an invalid spec: expected a shape of "
                f"non-negative ints and a dtype in {ALLOWED_DTYPES}, got {spec!r:.200}"
            )
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        total += nbytes
        if total > MAX_LOAD_BYTES:
            raise ModelFileError(
                f"{path} declares more than {MAX_LOAD_BYTES} bytes of arrays (at {name!r}); "
                "refusing to allocate that much for one model"
            )
        specs[name] = (tuple(shape), np.dtype(dtype), nbytes)
    return specs


def _check_members(zf: zipfile.ZipFile, specs: dict, path: Path) -> None:
    members = {info.filename: info for info in zf.infolist()}
    expected = {f"{name}.npy" for name in specs} | {"header.npy"}
    if set(members) != expected:
        unlisted = sorted(set(members) - expected)
        missing = sorted(expected - set(members))
        raise ModelFileError(
            f"{path} has mismatched arrays: header lists {sorted(specs)}, file holds "
            f"members the header does not list {unlisted} and lacks {missing}"
        )
    for name, (shape, _, nbytes) in specs.items():
        size = members[f"{name}.npy"].file_size
        if not nbytes < size <= nbytes + _NPY_HEADER_MAX:
            raise ModelFileError(
                f"{path} has a mismatched array {name!r}: header says shape {shape} "
                f"({nbytes} bytes), the archive member holds {size} bytes"
            )


def read_archive(path: Path, file=None) -> tuple[dict, dict[str, np.ndarray]]:
    """Return the JSON header and the arrays of a model archive, every size checked first.

    Parameters
    ----------
    path : Path
        The ``.npz`` file (named in messages).
    file : binary file | None
        The file, already open (read instead of opening ``path``).

    Returns
    -------
    header : dict
        The parsed JSON header (its ``arrays`` entry checked, nothing else).
    arrays : dict of str to ndarray
        Every member but the header, each of the shape and dtype the header lists.

    Raises
    ------
    ModelFileError
        For anything but a well-formed archive within the size limits.
    """
    try:
        with zipfile.ZipFile(path if file is None else file) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ModelFileError(
                    f"{path} holds {len(infos)} members; a model file holds at most {MAX_MEMBERS}"
                )
            _refuse_duplicates([i.filename for i in infos], path)
            if "header.npy" not in {i.filename for i in infos}:
                raise ModelFileError(f"{path} is not an sblr-rt model file (no 'header' member)")
            header = _read_header(zf, path)
            specs = _listed_specs(header.get("arrays", {}), path)
            _check_members(zf, specs, path)
            arrays = {}
            for name, (shape, dtype, _) in specs.items():
                where = f"{path} member {name!r}"
                with zf.open(f"{name}.npy") as fp:
                    got_shape, fortran, got_dtype = _npy_header(fp, where)
                    if got_shape != shape or got_dtype != dtype:
                        raise ModelFileError(
                            f"{path} has a mismatched array {name!r}: header says shape "
                            f"{shape} {dtype.str}, got {got_shape} {got_dtype.str}"
                        )
                    arrays[name] = _read_data(fp, shape, fortran, dtype, where)
    except (
        zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, KeyError, zlib.error,
        struct.error,
    ) as exc:  # fmt: skip
        raise ModelFileError(f"{path} is truncated or corrupt: {exc}") from exc
    except (NotImplementedError, RuntimeError) as exc:  # unsupported compression, encryption
        raise ModelFileError(f"{path} is not a readable sblr-rt model file: {exc}") from exc
    return header, arrays

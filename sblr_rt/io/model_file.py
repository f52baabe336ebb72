"""The model file: one ``.npz`` archive (no pickle) with a JSON header.

Layout (format version 1): a NumPy ``.npz`` archive, read with ``allow_pickle=False``,
holding

- ``header``: the UTF-8 bytes of a JSON object (as a ``uint8`` array) with ``format``
  (``"sblr-rt-model"``), ``format_version``, ``software_version``, ``created``,
  ``classes``, ``preprocessor`` (its constructor parameters: channel names and order,
  sampling rate, window, feature path, filters, time grid, scaling), ``window`` (derived
  sample counts and the model's time grid in seconds, informational), ``estimator``
  (hyper-parameters), ``metadata`` (hyper-parameters tried and chosen with their CV
  scores, epoch and rejection counts...) and ``arrays``: the name, shape and dtype of
  every other member, so that mismatched arrays are detected;
- ``pre/<name>``: the preprocessor's fitted arrays (scaling, filter coefficients);
- ``est/<name>``: the estimator's fitted arrays (factors, intercept, patterns,
  objective trace).

Saving writes a temporary file in the destination folder and renames it, so a crash
never leaves a half-written model under the final name. Loading refuses, with one
exception type (:class:`ModelFileError`, a ``ValueError``) and a message naming the
problem, a file that is not a zip archive or not a model file, a truncated or corrupt
file, a newer format version, a malformed header, members the header does not list,
arrays whose sizes exceed what one load may allocate (checked before any data is read,
see :mod:`sblr_rt.io._archive`), arrays whose shapes disagree with the header or with each
other, and non-finite numbers in any array.

Examples
--------
>>> from sblr_rt.io.model_file import load_model, save_model  # doctest: +SKIP
>>> save_model(model, "subject1.sblr.npz")  # doctest: +SKIP
>>> model = load_model("subject1.sblr.npz")  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import math
import os
import re
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from sblr_rt.io._archive import MAX_LOAD_BYTES, ModelFileError, read_archive
from sblr_rt.io._header_fields import check_header_fields
from sblr_rt.io.jsonable import dumps
from sblr_rt.validation.limits import check_number

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ModelFileError",
    "load_model",
    "read_header",
    "remove_stale_temporaries",
    "save_model",
]

#: Value of the header's ``format`` field.
FORMAT_NAME = "sblr-rt-model"
#: The format version this code writes, and the newest it reads.
FORMAT_VERSION = 1

_EST_PARAMS = (
    "rank",
    "mu1",
    "mu2",
    "nu1",
    "nu2",
    "multi_class",
    "tol",
    "max_iter",
    "eta",
    "L_min",
    "init",
    "class_weight",
    "solver",  # absent from older files: those load with the default ("fast")
)


def _estimator_arrays(est) -> dict[str, np.ndarray]:
    arrays = {
        "spatial": np.asarray(est.spatial_, dtype=np.float64),
        "temporal": np.asarray(est.temporal_, dtype=np.float64),
        "intercept": np.asarray(est.intercept_, dtype=np.float64),
        "n_iter": np.atleast_1d(np.asarray(est.n_iter_, dtype=np.int64)),
    }
    if getattr(est, "spatial_patterns_", None) is not None:
        arrays["spatial_patterns"] = np.asarray(est.spatial_patterns_, dtype=np.float64)
    if getattr(est, "l1_penalty_max_", None) is not None:
        arrays["l1_penalty_max"] = np.asarray(est.l1_penalty_max_, dtype=np.float64)
    objective = getattr(est, "objective_", None)
    if objective is not None:
        if isinstance(objective, list):
            for k, obj in enumerate(objective):
                arrays[f"objective_{k}"] = np.asarray(obj, dtype=np.float64)
        else:
            arrays["objective_0"] = np.asarray(objective, dtype=np.float64)
    return arrays


def _single_layout(model) -> tuple:
    """Return a single model's parts: arrays unprefixed, header at the top, its grid."""
    grid = {
        "time_grid": model.preprocessor.times.tolist(),
        "row_names": model.preprocessor.row_names,
    }
    return _model_arrays(model, ""), _model_header(model), [], None, grid


def _ensemble_layout(model) -> tuple:
    """Return an ensemble's parts: each member its own header and arrays (``m{k}/``)."""
    arrays, members = {}, []
    for k, member in enumerate(model.members):
        arrays.update(_model_arrays(member, f"m{k}/"))
        members.append({**_model_header(member), "metadata": dict(member.metadata)})
    single = {"preprocessor": None, "estimator": None, "pool": None}
    return arrays, single, members, [float(w) for w in model.member_weights], {}


#: How each form of model lays out its parts in the file, by :attr:`BCIModel.form`:
#: (arrays, the single model's header fields, members, member weights, window grid).
_LAYOUTS = {"single": _single_layout, "ensemble": _ensemble_layout}


def save_model(model, path) -> Path:
    """Write a :class:`~sblr_rt.bci_model.BCIModel` to one file, atomically.

    Parameters
    ----------
    model : BCIModel
        The fitted model.
    path : str | Path
        Destination (conventionally ``*.sblr.npz``; the name is used as given).

    Returns
    -------
    path : Path
        The written file.
    """
    from sblr_rt import __version__
    from sblr_rt.bci_model import BCIModel

    if not isinstance(model, BCIModel):
        raise TypeError(f"'model' must be a BCIModel, got {type(model).__name__}")
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"the folder of 'path' does not exist: {path.parent}")
    # Derived, for readers that do not run sblr-rt (ignored when loading).
    window = {
        "tmin": model.tmin,
        "tmax": model.tmax,
        "sfreq": model.sfreq,
        "n_pad": model.n_pad,
        "n_window": model.n_window,
        "n_times_raw": model.n_times_raw,
    }
    arrays, single, members, member_weights, grid = _LAYOUTS[model.form](model)
    window |= grid
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "software_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "classes": list(model.classes),
        "preprocessor": single["preprocessor"],
        "window": window,
        "estimator": single["estimator"],
        "run_centring": None if model.run_centring is None else model.run_centring.to_dict(),
        "members": members,
        "member_weights": member_weights,
        "pool": single["pool"],
        "metadata": dict(model.metadata),
        "arrays": {k: {"shape": list(v.shape), "dtype": v.dtype.str} for k, v in arrays.items()},
    }
    blob = dumps(header).encode("utf-8")
    _check_loadable(json.loads(blob), arrays, path)
    arrays["header"] = np.frombuffer(blob, dtype=np.uint8)
    _write_atomically(path, arrays)
    model.metadata.setdefault("format_version", FORMAT_VERSION)
    model.metadata.setdefault("software_version", __version__)
    model.metadata.setdefault("created", header["created"])
    return path


def _check_loadable(header: dict, arrays: dict[str, np.ndarray], path: Path) -> None:
    """Refuse to write what :func:`load_model` would refuse (header fields, non-finite numbers).

    A fit whose objective overflowed, or a description of the wrong type, is refused
    before the file exists, not when it is loaded.
    """
    try:
        check_header_fields(header)
    except ModelFileError as exc:
        raise ModelFileError(f"the model cannot be saved to {path}: {exc}") from None
    for name, a in arrays.items():
        if a.dtype.kind == "f" and not _all_finite(a):
            raise ModelFileError(
                f"the model cannot be saved to {path}: array {name!r} must hold finite "
                "numbers (a model file holds no NaN or infinity), got non-finite ones"
            )


def _all_finite(a: np.ndarray, block: int = 1 << 22) -> bool:
    """Return whether every number is finite, a block at a time (a pool is large)."""
    flat = a.reshape(-1)
    return all(np.isfinite(flat[i : i + block]).all() for i in range(0, flat.size, block))


#: Temporary files of a save are ``.<name>.<pid>-<random>.tmp``: the writer's process id.
_TMP_SUFFIX = ".tmp"
_TMP_NAME = re.compile(r"\.(.+)\.(\d+)-[A-Za-z0-9_]+\.tmp")


def _write_atomically(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the archive to a temporary file beside ``path``, then rename it to ``path``.

    The file gets the mode an ordinary new file gets (``0o666`` less the umask), not the
    ``0o600`` of :func:`tempfile.mkstemp`, so that another account (the one that runs
    ``run``) can read it where the folder's owner allows. Free space is checked first;
    temporary files of saves whose process has died are removed first.
    """
    remove_stale_temporaries(path.parent)
    need = sum(a.nbytes for a in arrays.values()) + (1 << 16)
    free = shutil.disk_usage(path.parent).free
    if free < need:
        raise OSError(
            errno.ENOSPC,
            f"{path.parent} has {free / 2**20:.1f} MiB free; the model file needs about "
            f"{need / 2**20:.1f} MiB: {path} was not written",
        )
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}-", suffix=_TMP_SUFFIX, dir=path.parent
    )
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, f"{exc.strerror or exc}: {path} was not written") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """Return the process's umask (read without changing it where the system tells it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_stale_temporaries(folder) -> list[Path]:
    """Remove the temporary files of model saves in ``folder`` whose process has ended.

    A save killed while writing (SIGKILL, a power cut) leaves its temporary file; the
    next save in the same folder, or the next start of a command that writes there,
    removes it. Files of a process still running, or of another account's, are kept.

    Parameters
    ----------
    folder : str | Path
        The folder of a model file.

    Returns
    -------
    removed : list of Path
    """
    removed = []
    try:
        candidates = list(Path(folder).glob(f".*{_TMP_SUFFIX}"))
    except OSError:
        return removed
    for tmp in candidates:
        match = _TMP_NAME.fullmatch(tmp.name)
        if match is None or _alive(int(match.group(2))):
            continue
        try:
            tmp.unlink()
        except OSError:
            continue
        removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another account's process, or not ours to judge
    return True


def _model_arrays(model, prefix: str) -> dict[str, np.ndarray]:
    """Return one single model's arrays, named ``<prefix>pre/``, ``est/`` and ``pool/``."""
    arrays = {
        f"{prefix}pre/{k}": np.asarray(v) for k, v in model.preprocessor.get_arrays().items()
    }
    arrays.update({f"{prefix}est/{k}": v for k, v in _estimator_arrays(model.estimator).items()})
    if model.pool is not None:
        arrays.update({f"{prefix}pool/{k}": v for k, v in model.pool.arrays().items()})
    return arrays


def _pool_header(model) -> dict | None:
    """Return the header part of a prior's pool (its arrays are ``pool/...``)."""
    if model.pool is None:
        return None
    return {"trial_weight": model.pool.trial_weight}


def _rebuild_pool(part, arrays: dict[str, np.ndarray], prefix: str):
    """Rebuild a prior's pool from its header part and its ``<prefix>pool/`` arrays."""
    from sblr_rt.model.prior_pool import PriorPool

    if part is None:
        return None
    if not isinstance(part, dict):
        raise ModelFileError(f"'pool' must be a mapping or null, got {type(part).__name__}")
    names = [f"{prefix}pool/{k}" for k in ("Z", "y", "groups")]
    missing = [n for n in names if n not in arrays]
    if missing:
        raise ModelFileError(f"the header lists a pool but the file lacks arrays {missing}")
    Z, y, groups = (arrays[n] for n in names)
    return PriorPool(Z=Z, y=y, groups=groups, trial_weight=part.get("trial_weight"))


def _model_header(model) -> dict:
    """Return the header part of one single model (an ensemble's member: ``m<k>/...``)."""
    est = model.estimator
    return {
        "preprocessor": model.preprocessor.get_config(),
        "estimator": {
            "class": type(est).__name__,
            "params": {k: getattr(est, k) for k in _EST_PARAMS if hasattr(est, k)},
        },
        "run_centring": None if model.run_centring is None else model.run_centring.to_dict(),
        "pool": _pool_header(model),
    }


def _open_regular(path: Path):
    """Open ``path`` for reading if it is a regular file within :data:`MAX_LOAD_BYTES`.

    A symbolic link to a device (``/dev/zero`` reads forever), a FIFO (opening it waits
    for a writer) or a directory is refused before it is read; the check is made again on
    the open file, so that nothing swapped in between is read either.
    """
    try:
        status = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"model file not found: {path}") from None
    except OSError as exc:
        raise ModelFileError(f"{path} cannot be read: {exc}") from exc
    _check_regular(path, status)
    try:  # non-blocking: a FIFO swapped in after the check does not hang the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ModelFileError(f"{path} cannot be read: {exc}") from exc
    file = os.fdopen(fd, "rb")
    try:
        _check_regular(path, os.fstat(fd))
    except BaseException:
        file.close()
        raise
    return file


def _check_regular(path: Path, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        kind = (
            "directory" if stat.S_ISDIR(status.st_mode)
            else "FIFO" if stat.S_ISFIFO(status.st_mode)
            else "device" if stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode)
            else "socket" if stat.S_ISSOCK(status.st_mode)
            else "special file"
        )  # fmt: skip
        raise ModelFileError(f"{path} is a {kind}, not a regular file: not a model file")
    if status.st_size > MAX_LOAD_BYTES:
        raise ModelFileError(
            f"{path} has {status.st_size} bytes; a model file has at most {MAX_LOAD_BYTES}"
        )


def _open(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    with _open_regular(path) as file:
        if not zipfile.is_zipfile(file):
            raise ModelFileError(
                f"{path} is not an sblr-rt model file (not an .npz archive; truncated or "
                "another format)"
            )
        header, arrays = read_archive(path, file)
    if header.get("format") != FORMAT_NAME:
        raise ModelFileError(
            f"{path} is not an sblr-rt model file (header 'format' is "
            f"{str(header.get('format'))[:80]!r})"
        )
    version = header.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{path} has no valid 'format_version', got {version!r:.80}")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path} was written in model format version {version} (by sblr-rt "
            f"{str(header.get('software_version', '?'))[:40]}); this sblr-rt reads versions "
            f"up to {FORMAT_VERSION}: upgrade sblr-rt"
        )
    try:
        check_header_fields(header)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    for name, a in arrays.items():
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise ModelFileError(
                f"{path} has non-finite numbers (NaN or infinite) in array {name!r}: the "
                "model is corrupt"
            )
    return header, arrays


def read_header(path) -> dict:
    """Return a model file's JSON header after checking the whole file.

    Parameters
    ----------
    path : str | Path
        A file written by :func:`save_model`; its arrays are read and checked too.

    Returns
    -------
    header : dict
        The parsed header (format, classes, preprocessor, estimator, metadata, arrays).

    Raises
    ------
    ModelFileError
        When the file is not a valid model file (see the module docstring).
    """
    return _open(Path(path))[0]


def _field(mapping, key: str, kind, what: str):
    value = mapping.get(key) if isinstance(mapping, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ModelFileError(f"header {what}{key!r} must be a {kind.__name__}, got {value!r:.80}")
    return value


def _check_classes(classes) -> list:
    if (
        not isinstance(classes, list)
        or not 2 <= len(classes) <= 10_000
        or not all(isinstance(c, str | int | float) and not isinstance(c, bool) for c in classes)
    ):
        raise ModelFileError(
            f"header 'classes' must be a list of 2 or more labels, got {classes!r:.80}"
        )
    return classes


def _check_preprocessor_size(config: dict) -> None:
    """Refuse a configuration whose operators would exceed :data:`MAX_LOAD_BYTES`."""
    nums = {}
    for key, kind in (("sfreq", "sfreq"), ("tmin", "epoch"), ("tmax", "epoch")):
        nums[key] = _field(config, key, float | int, "'preprocessor' ")
        try:  # the range the command line and the configuration hold them to
            check_number(f"preprocessor.{key}", nums[key], kind, low_open=kind == "sfreq")
        except ValueError as exc:
            raise ModelFileError(f"header field {exc}") from None
    n_window = (nums["tmax"] - nums["tmin"]) * nums["sfreq"]
    n_times = config.get("n_times")
    n_times = min(n_window, 100) if not isinstance(n_times, int) else n_times
    bands = config.get("bands")
    n_filters = len(bands) if isinstance(bands, list) else 1
    # The waveform path's resampling matrix (and its temporaries) is n_window x n_times.
    if not math.isfinite(n_window) or 8 * 4 * max(n_window, 1) * max(n_times, 1) > MAX_LOAD_BYTES:
        raise ModelFileError(
            f"header 'preprocessor' asks for a window of {n_window:.3g} samples and "
            f"{n_times} time points, beyond the {MAX_LOAD_BYTES}-byte limit of one load"
        )
    if n_filters > 64:
        raise ModelFileError(f"header 'preprocessor' lists {n_filters} bands; at most 64")


def _rebuild(header: dict, arrays: dict[str, np.ndarray]):
    """Rebuild the BCIModel; any inconsistency raises a ValueError or TypeError."""
    from sblr_rt.bci_model import EnsembleModel

    metadata = dict(header.get("metadata") or {})
    for key in ("format_version", "software_version", "created"):
        metadata[key] = header.get(key)
    members = header.get("members") or []  # absent from files written before ensembles
    if not isinstance(members, list):
        raise ModelFileError(f"'members' must be a list, got {type(members).__name__}")
    if members:
        if len(members) < 2:
            raise ModelFileError(f"'members' must list two or more models, got {len(members)}")
        models = []
        for k, part in enumerate(members):
            if not isinstance(part, dict):
                raise ModelFileError(f"'members[{k}]' must be a mapping")
            own = part.get("metadata") or {}  # absent from files before members kept theirs
            if not isinstance(own, dict):
                raise ModelFileError(f"'members[{k}].metadata' must be a mapping")
            check_header_fields({"metadata": own, "classes": header.get("classes")})
            models.append(_rebuild_single({**part, "classes": header.get("classes")}, arrays,
                                          f"m{k}/", dict(own)))  # fmt: skip
        weights = header.get("member_weights")  # absent from files before weighted members
        if weights is not None and (
            not isinstance(weights, list)
            or not all(isinstance(w, int | float) and not isinstance(w, bool) for w in weights)
        ):
            raise ModelFileError(
                f"'member_weights' must be a list of numbers, got {str(weights)[:80]}"
            )
        return EnsembleModel(models, weights, metadata)
    if header.get("preprocessor") is None:
        raise ModelFileError("the header has neither 'members' nor a 'preprocessor'")
    return _rebuild_single(header, arrays, "", metadata)


def _rebuild_single(header: dict, arrays: dict[str, np.ndarray], prefix: str, metadata: dict):
    """Rebuild one single model from its header part and its ``<prefix>`` arrays."""
    from sblr_rt.bci_model import SingleModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.model.run_centring import RunCentring
    from sblr_rt.preprocessing import Preprocessor

    config = _field(header, "preprocessor", dict, "")
    _check_preprocessor_size(config)
    n = len(prefix)
    pre_arrays = {k[n + 4 :]: v for k, v in arrays.items() if k.startswith(f"{prefix}pre/")}
    est_arrays = {k[n + 4 :]: v for k, v in arrays.items() if k.startswith(f"{prefix}est/")}
    for name in ("row_scale", "col_scale"):
        if name in pre_arrays and not np.all(pre_arrays[name] > 0):
            raise ModelFileError(f"preprocessing array {name!r} must be positive")
    pre = Preprocessor.from_config(config, pre_arrays)
    classes = _check_classes(header.get("classes"))
    est_info = _field(header, "estimator", dict, "")
    if est_info.get("class") != SparseBilinearLogisticRegression.__name__:
        raise ModelFileError(f"unknown estimator class {str(est_info.get('class'))[:80]!r}")
    params = _field(est_info, "params", dict, "'estimator' ")
    _check_estimator_arrays(est_arrays, n_classes=len(classes), pre=pre, rank=params.get("rank"))
    est = SparseBilinearLogisticRegression.from_factors(
        est_arrays["spatial"],
        est_arrays["temporal"],
        est_arrays["intercept"],
        np.arange(len(classes)),
        est_arrays.get("spatial_patterns"),
        fit_info=_fit_info(est_arrays),
        **params,
    )
    est._validate_params()  # scikit-learn's check of every constructor parameter
    centring = header.get("run_centring")  # absent from files written before it existed
    if centring is not None:
        try:
            centring = RunCentring.from_dict(centring)
        except ValueError as exc:
            raise ModelFileError(str(exc)) from None
    pool = _rebuild_pool(header.get("pool"), arrays, prefix)
    if pool is not None and (pool.Z.shape[1:] != (pre.n_rows, pre.n_columns) or
                             pool.y.max() >= len(classes)):  # fmt: skip
        raise ModelFileError(
            f"the pool's epochs must be ({pre.n_rows}, {pre.n_columns}) with labels below "
            f"{len(classes)}, got {pool.Z.shape[1:]} and {int(pool.y.max())}"
        )
    return SingleModel(
        preprocessor=pre,
        estimator=est,
        classes=classes,
        metadata=metadata,
        run_centring=centring,
        pool=pool,
    )


def load_model(path):
    """Load a model file written by :func:`save_model`.

    Parameters
    ----------
    path : str | Path
        Model file.

    Returns
    -------
    model : BCIModel
        Ready to classify raw epochs.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ModelFileError
        When it is not a valid model file (see the module docstring); a ``ValueError``.
    """
    path = Path(path)
    header, arrays = _open(path)
    try:
        return _rebuild(header, arrays)
    except ModelFileError as exc:
        raise ModelFileError(f"{path} has a mismatched model: {exc}") from None
    # A hostile header can make the constructors fail in any of these ways; the caller
    # sees one exception type whatever field was wrong.
    except (
        ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError,
        RecursionError, NotImplementedError, ZeroDivisionError, MemoryError,
    ) as exc:  # fmt: skip
        raise ModelFileError(
            f"{path} has an incomplete or mismatched model: {type(exc).__name__}: {exc}"
        ) from exc


def _check_estimator_arrays(arrays: dict[str, np.ndarray], *, n_classes: int, pre, rank) -> None:
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        raise ModelFileError(f"estimator parameter 'rank' must be a positive int, got {rank!r}")
    two = n_classes == 2
    shapes = {
        "spatial": (pre.n_rows, rank) if two else (n_classes, pre.n_rows, rank),
        "temporal": (pre.n_columns, rank) if two else (n_classes, pre.n_columns, rank),
        "intercept": (1 if two else n_classes,),
    }
    if "spatial_patterns" in arrays:
        shapes["spatial_patterns"] = shapes["spatial"]
    for name, shape in shapes.items():
        got = arrays[name].shape if name in arrays else None
        if got != shape:
            raise ModelFileError(
                f"estimator array {name!r} must have shape {shape} for {n_classes} classes "
                f"and the saved preprocessing, got {got}"
            )


def _fit_info(arrays: dict[str, np.ndarray]) -> dict:
    """Return what the saved fit recorded: iterations, objective, l1 thresholds."""
    n_iter = arrays.get("n_iter", np.zeros(1, dtype=np.int64))
    info = {"n_iter": int(n_iter[0]) if n_iter.size == 1 else n_iter}
    if "l1_penalty_max" in arrays:
        info["l1_penalty_max"] = arrays["l1_penalty_max"]
    # objective_0, objective_1, ..., objective_10: by number, not by name
    names = [k for k in arrays if k.startswith("objective_") and k[10:].isdigit()]
    objectives = [arrays[k] for k in sorted(names, key=lambda k: int(k[10:]))]
    if objectives:
        info["objective"] = objectives[0] if len(objectives) == 1 else objectives
    return info

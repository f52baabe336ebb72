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
never leaves a half-written model under the final name. Loading refuses, with a
message naming the problem, a file that is not a zip archive or not a model file, a
truncated file, a newer format version, and arrays whose shapes disagree with the
header or with each other.

Examples
--------
>>> from sblr_rt.io.model_file import load_model, save_model  # doctest: +SKIP
>>> save_model(model, "subject1.sblr.npz")  # doctest: +SKIP
>>> model = load_model("subject1.sblr.npz")  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from sblr_rt.io.jsonable import dumps

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load_model", "read_header", "save_model"]

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
    est = model.estimator
    arrays = {f"pre/{k}": np.asarray(v) for k, v in model.preprocessor.get_arrays().items()}
    arrays.update({f"est/{k}": v for k, v in _estimator_arrays(est).items()})
    metadata = dict(model.metadata)
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "software_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "classes": list(model.classes),
        "preprocessor": model.preprocessor.get_config(),
        # Derived, for readers that do not run sblr-rt (ignored when loading).
        "window": {
            "tmin": model.tmin,
            "tmax": model.tmax,
            "sfreq": model.sfreq,
            "n_pad": model.n_pad,
            "n_window": model.n_window,
            "n_times_raw": model.n_times_raw,
            "time_grid": model.preprocessor.times.tolist(),
            "row_names": model.preprocessor.row_names,
        },
        "estimator": {
            "class": type(est).__name__,
            "params": {k: getattr(est, k) for k in _EST_PARAMS if hasattr(est, k)},
        },
        "metadata": metadata,
        "arrays": {k: {"shape": list(v.shape), "dtype": v.dtype.str} for k, v in arrays.items()},
    }
    blob = dumps(header).encode("utf-8")
    arrays["header"] = np.frombuffer(blob, dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    model.metadata.setdefault("format_version", FORMAT_VERSION)
    model.metadata.setdefault("software_version", __version__)
    model.metadata.setdefault("created", header["created"])
    return path


def _open(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"{path} is not an sblr-rt model file (not an .npz archive; truncated or another "
            "format)"
        )
    try:
        with np.load(path, allow_pickle=False) as npz:
            if "header" not in npz.files:
                raise ValueError(f"{path} is not an sblr-rt model file (no 'header' member)")
            arrays = {name: npz[name] for name in npz.files}
    except ValueError as exc:
        if "sblr-rt model file" in str(exc):
            raise
        raise ValueError(f"{path} is not a readable sblr-rt model file: {exc}") from exc
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise ValueError(f"{path} is truncated or corrupt: {exc}") from exc
    bad = [k for k, v in arrays.items() if not isinstance(v, np.ndarray)]
    raw_header = arrays.pop("header")
    if bad or raw_header.dtype != np.uint8 or raw_header.ndim != 1:
        raise ValueError(
            f"{path} is not an sblr-rt model file (members {bad or ['header']} are not "
            "arrays of the expected type)"
        )
    try:
        header = json.loads(raw_header.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} has a corrupt header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ValueError(
            f"{path} is not an sblr-rt model file (header 'format' is "
            f"{header.get('format') if isinstance(header, dict) else header!r})"
        )
    version = header.get("format_version")
    if not isinstance(version, int):
        raise ValueError(f"{path} has no valid 'format_version', got {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{path} was written in model format version {version} (by sblr-rt "
            f"{header.get('software_version', '?')}); this sblr-rt reads versions up to "
            f"{FORMAT_VERSION}: upgrade sblr-rt"
        )
    listed = header.get("arrays", {})
    if set(listed) != set(arrays):
        raise ValueError(
            f"{path} has mismatched arrays: header lists {sorted(listed)}, file holds "
            f"{sorted(arrays)}"
        )
    for name, spec in listed.items():
        a = arrays[name]
        if list(a.shape) != list(spec["shape"]) or a.dtype.str != spec["dtype"]:
            raise ValueError(
                f"{path} has a mismatched array {name!r}: header says shape "
                f"{tuple(spec['shape'])} {spec['dtype']}, got {a.shape} {a.dtype.str}"
            )
    return header, arrays


def read_header(path) -> dict:
    """Return a model file's JSON header after checking the file.

    Parameters
    ----------
    path : str | Path
        Model file.

    Returns
    -------
    header : dict
        The parsed header.
    """
    return _open(Path(path))[0]


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
    """
    from sblr_rt.bci_model import BCIModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor

    path = Path(path)
    header, arrays = _open(path)
    try:
        pre_arrays = {k[4:]: v for k, v in arrays.items() if k.startswith("pre/")}
        est_arrays = {k[4:]: v for k, v in arrays.items() if k.startswith("est/")}
        pre = Preprocessor.from_config(header["preprocessor"], pre_arrays)
        classes = list(header["classes"])
        est_info = header["estimator"]
        if est_info.get("class") != SparseBilinearLogisticRegression.__name__:
            raise ValueError(f"unknown estimator class {est_info.get('class')!r}")
        est = SparseBilinearLogisticRegression(**est_info["params"])
        _restore_estimator(est, est_arrays, n_classes=len(classes), pre=pre)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} has an incomplete or mismatched model: {exc!r}") from exc
    except ValueError as exc:
        raise ValueError(f"{path} has a mismatched model: {exc}") from exc
    metadata = dict(header.get("metadata", {}))
    for key in ("format_version", "software_version", "created"):
        metadata[key] = header.get(key)
    return BCIModel(preprocessor=pre, estimator=est, classes=classes, metadata=metadata)


def _restore_estimator(est, arrays: dict[str, np.ndarray], *, n_classes: int, pre) -> None:
    U, V, b = arrays["spatial"], arrays["temporal"], arrays["intercept"]
    rank = est.rank
    if n_classes == 2:
        shapes = {"spatial": (pre.n_rows, rank), "temporal": (pre.n_times, rank)}
        n_b = 1
    else:
        shapes = {
            "spatial": (n_classes, pre.n_rows, rank),
            "temporal": (n_classes, pre.n_times, rank),
        }
        n_b = n_classes
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise ValueError(
                f"estimator array {name!r} must have shape {shape} for {n_classes} classes "
                f"and the saved preprocessing, got {arrays[name].shape}"
            )
    if b.shape != (n_b,):
        raise ValueError(f"estimator array 'intercept' must have shape ({n_b},), got {b.shape}")
    est.classes_ = np.arange(n_classes)
    est.spatial_ = U
    est.temporal_ = V
    est.intercept_ = b
    est.n_features_in_ = pre.n_rows
    est.n_times_in_ = pre.n_times
    n_iter = arrays["n_iter"]
    est.n_iter_ = int(n_iter[0]) if n_classes == 2 or n_iter.size == 1 else n_iter
    if "spatial_patterns" in arrays:
        est.spatial_patterns_ = arrays["spatial_patterns"]
    if "l1_penalty_max" in arrays:
        est.l1_penalty_max_ = arrays["l1_penalty_max"]
    objectives = [arrays[k] for k in sorted(arrays) if k.startswith("objective_")]
    if objectives:
        est.objective_ = objectives[0] if len(objectives) == 1 else objectives
    U3 = U[None] if U.ndim == 2 else U
    V3 = V[None] if V.ndim == 2 else V
    # The estimator predicts from W = U V^T per output column (see its _set_fitted).
    est._coef = np.einsum("csr,ctr->cst", U3, V3)

"""A Preprocessor to and from the model file: header fields and arrays."""

from __future__ import annotations

import numpy as np

__all__ = ["preprocessor_arrays", "preprocessor_config", "restore_fitted", "saved_config"]


def preprocessor_config(pre) -> dict:
    """Return the constructor parameters of ``pre`` as a JSON-serialisable dict."""
    return {
        "ch_names": list(pre.ch_names),
        "sfreq": pre.sfreq,
        "tmin": pre.tmin,
        "tmax": pre.tmax,
        "picks": list(pre.picks),
        "features": pre.features,
        "l_freq": pre.l_freq,
        "h_freq": pre.h_freq,
        "bands": [list(b) for b in pre.bands],
        "n_times": pre.n_times,
        "baseline": None if pre.baseline is None else list(pre.baseline),
        "scaling": pre.scaling,
        "filter_length": pre.filter_length,
        "spatial": pre.spatial,
        "reference": pre.reference,
    }


def preprocessor_arrays(pre) -> dict[str, np.ndarray]:
    """Return the fitted arrays, the filter coefficients and the spatial operator."""
    arrays = {"row_offset": pre.row_offset_, "row_scale": pre.row_scale_}
    arrays["col_scale"] = pre.col_scale_
    for k, b in enumerate(pre.filters):
        arrays[f"filter_{k}"] = b
    if pre.spatial_matrix is not None:
        arrays["spatial_matrix"] = pre.spatial_matrix
    return arrays


def saved_config(config: dict, arrays: dict | None) -> dict:
    """Return constructor parameters from a saved header (and its arrays)."""
    config = dict(config)
    # Files written before the spatial stage and the log-power reference existed computed
    # neither: keep their numbers.
    config.setdefault("spatial", None)
    config.setdefault("reference", None)
    if arrays is not None and config["spatial"] is not None:
        if "spatial_matrix" not in arrays:
            raise ValueError(
                f"preprocessing array 'spatial_matrix' is missing for spatial="
                f"{config['spatial']!r}"
            )
        config["spatial_matrix"] = np.asarray(arrays["spatial_matrix"])
    return config


def restore_fitted(pre, arrays: dict) -> None:
    """Set a preprocessor's saved filters and scaling from the model file's arrays.

    The stored filter coefficients replace the re-designed ones, so that a loaded model
    computes exactly what was saved; every array's shape is checked first.
    """
    n_rows, n_times = pre.n_rows, pre.n_times
    expect = {"row_offset": (n_rows,), "row_scale": (n_rows,), "col_scale": (n_times,)}
    for k, b in enumerate(pre.filters):
        expect[f"filter_{k}"] = b.shape
    for name, shape in expect.items():
        if name not in arrays or arrays[name].shape != shape:
            got = None if name not in arrays else arrays[name].shape
            raise ValueError(f"preprocessing array {name!r} must have shape {shape}, got {got}")
    pre.filters = [np.asarray(arrays[f"filter_{k}"]) for k in range(len(pre.filters))]
    pre._path.filters = pre.filters
    pre.row_offset_ = np.asarray(arrays["row_offset"], dtype=np.float64)
    pre.row_scale_ = np.asarray(arrays["row_scale"], dtype=np.float64)
    pre.col_scale_ = np.asarray(arrays["col_scale"], dtype=np.float64)

"""JSON for every file and stream the project writes: one conversion, strict output.

Numpy scalars and arrays become plain Python, tuples become lists, and non-finite floats
become ``null``: a bare ``NaN`` or ``Infinity`` is not JSON, and strict readers reject it.

Examples
--------
>>> import numpy as np
>>> dumps({"p": np.float32(0.5), "x": np.array([1, 2]), "bad": float("nan")})
'{"p": 0.5, "x": [1, 2], "bad": null}'
"""

from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["dumps", "mapping_or_empty", "to_jsonable"]


def to_jsonable(obj):
    """Return ``obj`` with numpy values as plain Python and non-finite floats as None.

    Parameters
    ----------
    obj : object
        Nested dicts, lists, tuples, numpy arrays and scalars, str, int, float, bool, None.

    Returns
    -------
    plain : object
        The same structure, made of types :func:`json.dumps` writes as strict JSON.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def mapping_or_empty(value) -> dict:
    """Return ``value`` if it is a dict (a model file's metadata section), else ``{}``.

    Parameters
    ----------
    value : object
        A section read from a model file's header; absent or malformed in old files.

    Returns
    -------
    section : dict

    Examples
    --------
    >>> mapping_or_empty(None), mapping_or_empty({"rank": 2})
    ({}, {'rank': 2})
    """
    return value if isinstance(value, dict) else {}


def dumps(obj, **kwargs) -> str:
    """Serialise ``obj`` as strict JSON (see :func:`to_jsonable`).

    Parameters
    ----------
    obj : object
        What to write.
    **kwargs
        Passed to :func:`json.dumps` (e.g. ``indent``).

    Returns
    -------
    text : str
        Strict JSON: never ``NaN`` or ``Infinity``.
    """
    return json.dumps(to_jsonable(obj), allow_nan=False, **kwargs)

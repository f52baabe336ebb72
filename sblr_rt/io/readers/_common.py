"""What the readers share: the logger and the text of a marker value."""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger("sblr_rt.io")


def marker_text(value) -> str:
    """Return a marker value as text (integral floats without ``.0``, bytes decoded)."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)

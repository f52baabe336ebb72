"""What the Live tab's trace plot shows: which channels, how many points, at what scale.

Pure numpy, no Qt: :func:`default_channels` picks the channels shown at first,
:func:`minmax_decimate` reduces traces to what a display can show while keeping peaks,
:func:`format_amplitude` writes the channel spacing in the trace plot's title.
"""

from __future__ import annotations

import math
import re

import numpy as np

#: Channels shown by default when the stream has more than ``DEFAULT_MAX_SHOWN``.
DEFAULT_MAX_SHOWN = 32
_MOTOR = re.compile(r"^(F?C[CP]?|CC?P|CFC|FFC|FCC|CCP|CPP)[0-9z]+h?$", re.IGNORECASE)


def default_channels(ch_names, max_shown: int = DEFAULT_MAX_SHOWN) -> list[str]:
    """Pick the channels shown at first: all if few, else the sensorimotor ones.

    Parameters
    ----------
    ch_names : list of str
        The stream's channel names.
    max_shown : int
        Show all channels up to this many.

    Returns
    -------
    names : list of str
        At most ``max_shown`` names, in stream order.
    """
    names = list(ch_names)
    if len(names) <= max_shown:
        return names
    motor = [c for c in names if _MOTOR.match(c)]
    if len(motor) < 4:
        motor = names
    step = max(1, math.ceil(len(motor) / max_shown))
    return motor[::step][:max_shown]


def minmax_decimate(data: np.ndarray, times: np.ndarray, n_columns: int):
    """Reduce traces to a min/max pair per display column, keeping peaks visible.

    Parameters
    ----------
    data : ndarray, shape (n_channels, n_times)
        Traces.
    times : ndarray, shape (n_times,)
        Their times.
    n_columns : int
        Number of columns (pixels) to keep; nothing is done when ``n_times`` is at most
        twice this.

    Returns
    -------
    data : ndarray, shape (n_channels, n_out)
        Decimated traces.
    times : ndarray, shape (n_out,)
        Their times.
    """
    n_times = data.shape[1]
    if n_times <= 2 * n_columns or n_columns < 1:
        return data, times
    per = n_times // n_columns
    usable = per * n_columns
    start = n_times - usable
    blocks = data[:, start:].reshape(data.shape[0], n_columns, per)
    out = np.empty((data.shape[0], n_columns, 2), dtype=data.dtype)
    out[..., 0] = blocks.min(axis=2)
    out[..., 1] = blocks.max(axis=2)
    t = times[start:].reshape(n_columns, per)
    t_out = np.stack([t[:, 0], t[:, -1]], axis=1).ravel()
    return out.reshape(data.shape[0], 2 * n_columns), t_out


def format_amplitude(value: float, unit: str) -> str:
    """Write an amplitude with its unit (volts as µV; a unitless stream is assumed volts).

    Parameters
    ----------
    value : float
        The amplitude, in the stream's unit.
    unit : str
        The stream's unit ("" when it declares none).

    Returns
    -------
    text : str
        For example ``"25 µV"``.
    """
    if unit in ("V", "volts", "") and value < 1e-2 and unit:
        return f"{value * 1e6:.3g} µV"
    if not unit and value < 1e-2:
        return f"{value * 1e6:.3g} µV (if volts)"
    return f"{value:.3g} {unit}".strip()

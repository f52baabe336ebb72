"""How the EEG source pulls from its inlet: the pylsl call, and the replay speed it reads.

:func:`pull_into` wraps the version-dependent ``pylsl.StreamInlet.pull_chunk`` call;
:func:`declared_speed` reads the playback speed a replay declares in its header.
"""

from __future__ import annotations

import inspect
import math

from sblr_rt.stream._liblsl import pylsl

__all__ = ["declared_speed", "pull_into"]

# pylsl >= 1.18 can wait for the first sample and then drain (``min_samples``) and return
# numpy arrays (``as_numpy``); older versions fall back to polling.
_PULL_PARAMETERS = set(inspect.signature(pylsl.StreamInlet.pull_chunk).parameters)
_HAS_MIN_SAMPLES = "min_samples" in _PULL_PARAMETERS
_HAS_AS_NUMPY = "as_numpy" in _PULL_PARAMETERS


def pull_into(inlet, scratch, max_samples, timeout, stop_event):
    """Pull one chunk from ``inlet`` into ``scratch``; return its timestamps.

    Parameters
    ----------
    inlet : pylsl.StreamInlet
        The open inlet.
    scratch : ndarray, shape (max_samples, n_channels)
        Destination, in the stream's own dtype.
    max_samples : int
        Most samples to pull.
    timeout : float
        Seconds to wait for the first sample (pylsl >= 1.18).
    stop_event : threading.Event
        Waited on briefly between polls with an older pylsl.

    Returns
    -------
    timestamps : sequence of float, shape (n_samples,)
        One per sample written to ``scratch[:n_samples]``; empty when none arrived.
    """
    if _HAS_MIN_SAMPLES:
        kwargs = {"as_numpy": True} if _HAS_AS_NUMPY else {}
        _, timestamps = inlet.pull_chunk(
            timeout=timeout,
            max_samples=max_samples,
            dest_obj=scratch,
            min_samples=1,
            **kwargs,
        )
    else:  # pragma: no cover - pylsl < 1.18
        _, timestamps = inlet.pull_chunk(timeout=0.0, max_samples=max_samples, dest_obj=scratch)
        if not len(timestamps):
            stop_event.wait(0.001)
    return timestamps


def declared_speed(full_info) -> float:
    """Return the playback speed a replay declares in ``desc/acquisition/speed`` (or 1)."""
    text = full_info.desc().child("acquisition").child_value("speed")
    try:
        speed = float(text)
    except ValueError:
        return 1.0
    return speed if math.isfinite(speed) and speed > 0 else 1.0

"""The spatial stage: a fixed channels x channels operator applied to every sample.

Three stages, chosen like any other preprocessing step and saved in the model file as a
matrix ``S`` (``n_picks x n_picks``), so the online loop needs neither MNE nor positions:

``None``
    The identity: channels as recorded.
``"car"``
    Common average reference, ``S = I - 1 1^T / n``.
``"csd"``
    Surface Laplacian: the current source density of the spherical-spline method
    (Perrin et al. 1989) as :func:`mne.preprocessing.compute_current_source_density`
    computes it from the montage's positions (:func:`sblr_rt.montage.make_montage`).
    The operator is linear, so it is read off MNE by transforming the identity, and it
    is divided by the median absolute value of its diagonal to be unit-free (the
    preprocessing's scaling is fitted after it anyway). It sharpens focal sources such as
    the sensorimotor rhythms over C3 and C4 and removes what all channels share, including
    the reference.

``S`` is applied before the band-pass: filtering acts on each channel alone, so the two
commute, and on the waveform path the whole chain stays linear and folds into the
factors.

Examples
--------
>>> spatial_operator("car", ["C3", "Cz", "C4"]).round(3)
array([[ 0.667, -0.333, -0.333],
       [-0.333,  0.667, -0.333],
       [-0.333, -0.333,  0.667]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "MIN_CSD_CHANNELS",
    "SPATIAL_LABELS",
    "SPATIAL_STAGES",
    "apply_spatial",
    "spatial_label",
    "spatial_operator",
]

#: The spatial stages.
SPATIAL_STAGES = (None, "car", "csd")
#: Readable names of the spatial stages, for summaries, reports and the dashboard.
SPATIAL_LABELS = {None: "none", "car": "common average", "csd": "surface Laplacian (CSD)"}
#: The spherical spline needs a head sphere fitted to at least this many positions.
MIN_CSD_CHANNELS = 4


def apply_spatial(matrix: np.ndarray | None, windows: np.ndarray) -> np.ndarray:
    """Apply a spatial operator to the channels of every band block of picked windows.

    Parameters
    ----------
    matrix : ndarray, shape (n_picks, n_picks) | None
        The operator (None: the identity).
    windows : ndarray, shape (n_epochs, n_blocks * n_picks, n_samples)
        Picked channels, band-major when there are several filters.

    Returns
    -------
    out : ndarray, same shape
        ``matrix`` applied to each block's channels.
    """
    if matrix is None:
        return windows
    n_ep, n_rows, n_t = windows.shape
    n = matrix.shape[0]
    blocks = windows.reshape(n_ep, n_rows // n, n, n_t)
    return np.matmul(matrix, blocks).reshape(n_ep, n_rows, n_t)


def spatial_label(kind: str | None) -> str:
    """Return the readable name of a spatial stage (``None``, ``"car"``, ``"csd"``)."""
    return SPATIAL_LABELS.get(kind, str(kind))


def spatial_operator(kind: str | None, ch_names: Sequence[str]) -> np.ndarray:
    """Return the matrix ``S`` of a spatial stage: ``out = S @ samples``.

    Parameters
    ----------
    kind : {None, "car", "csd"}
        The stage.
    ch_names : sequence of str
        The channels it acts on, in order. ``"csd"`` needs a montage position for every
        one (10-05 names, Berlin or PhysioNet labels: :mod:`sblr_rt.montage`).

    Returns
    -------
    S : ndarray, shape (n_channels, n_channels)
        The operator.
    """
    if kind not in SPATIAL_STAGES:
        raise ValueError(f"'spatial' must be one of {SPATIAL_STAGES}, got {kind!r}")
    names = [str(c) for c in ch_names]
    n = len(names)
    if n < 1:
        raise ValueError("'ch_names' must name at least one channel, got none")
    if kind is None:
        return np.eye(n)
    if n < 3:
        raise ValueError(f"the {kind!r} spatial stage needs at least 3 channels, got {n}")
    if kind == "car":
        return np.eye(n) - np.full((n, n), 1.0 / n)
    if n < MIN_CSD_CHANNELS:
        raise ValueError(
            f"the 'csd' spatial stage needs at least {MIN_CSD_CHANNELS} channels, got {n}"
        )
    return _csd_operator(names)


def _csd_operator(names: list[str]) -> np.ndarray:
    import mne

    from sblr_rt.montage import channel_positions, make_montage

    missing = [c for c in names if c not in channel_positions(names)]
    if missing:
        raise ValueError(
            "the 'csd' spatial stage needs a scalp position for every channel; no position "
            f"is known for {len(missing)}: {missing[:12]} (use spatial='car' or None, or "
            "pick EEG channels with standard 10-05 labels)"
        )
    n = len(names)
    info = mne.create_info(names, sfreq=1000.0, ch_types="eeg")
    raw = mne.io.RawArray(np.eye(n), info, verbose="error")
    raw.set_montage(make_montage(names), verbose="error")
    S = mne.preprocessing.compute_current_source_density(raw, verbose="error").get_data()
    scale = np.median(np.abs(np.diag(S)))
    if not (np.all(np.isfinite(S)) and scale > 0):
        raise ValueError(f"the 'csd' operator of {names[:6]}... is degenerate")
    return S / scale

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
    "eog_regression",
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
    """Return the readable name of a spatial stage (``None``, ``"car"``, ``"csd"``).

    A stage after an EOG regression (:func:`eog_regression`) is labelled
    ``"<stage>+eog"`` (``"eog"`` alone without a stage).
    """
    if kind is not None and str(kind).endswith("eog"):
        stage = str(kind)[: -len("eog")].rstrip("+") or None
        first = "EOG regressed out"
        return first if stage in (None, "none") else f"{first}, then {spatial_label(stage)}"
    return SPATIAL_LABELS.get(kind, str(kind))


def eog_regression(data, ch_names: Sequence[str], eog: Sequence[str]) -> np.ndarray:
    """Return the operator that regresses EOG channels out of the others.

    Every channel loses its least-squares fit on the EOG channels (MNE's
    :class:`mne.preprocessing.EOGRegression`, as one channels x channels matrix), and the
    EOG channels themselves become zero, so that no model reads them. Fp1 and Fp2 serve
    as a proxy where no EOG was recorded.

    Parameters
    ----------
    data : sequence of array, shape (n_channels, n_samples)
        Continuous calibration data in ``ch_names`` order (one array per run; each
        channel's mean is removed per run).
    ch_names : sequence of str
        The channels, in order (the model's picks).
    eog : sequence of str
        The EOG channels (or proxies), among ``ch_names``.

    Returns
    -------
    R : ndarray, shape (n_channels, n_channels)
        ``cleaned = R @ samples``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eye = rng.standard_normal(1000)
    >>> brain = rng.standard_normal(1000)
    >>> data = np.stack([eye, brain + 0.8 * eye])  # Fp1, then C3 contaminated by it
    >>> R = eog_regression([data], ["Fp1", "C3"], ["Fp1"])
    >>> cleaned = R @ data
    >>> bool(np.allclose(cleaned[0], 0)), round(float(np.corrcoef(cleaned[1], brain)[0, 1]), 2)
    (True, 1.0)
    """
    names = list(ch_names)
    missing = [c for c in eog if c not in names]
    if not eog or missing:
        raise ValueError(
            f"'eog' must name channels of the model, got {list(eog)} (missing {missing}; "
            f"channels: {names})"
        )
    idx = [names.index(c) for c in eog]
    blocks = [np.asarray(d, dtype=np.float64) for d in data]
    if any(b.ndim != 2 or b.shape[0] != len(names) for b in blocks):
        raise ValueError(f"'data' must be arrays of shape ({len(names)}, n_samples)")
    X = np.concatenate([b - b.mean(axis=1, keepdims=True) for b in blocks], axis=1)
    E = X[idx]
    gram = E @ E.T
    if np.linalg.matrix_rank(gram) < len(idx):
        raise ValueError(f"the EOG channels {list(eog)} are flat or collinear in the data")
    B = np.linalg.solve(gram, E @ X.T).T  # (n_channels, n_eog): each channel on the EOG
    R = np.eye(len(names))
    R[:, idx] -= B
    R[idx] = 0.0  # the EOG channels themselves: not read by the model
    return R


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
        raise ValueError(
            f"'spatial' must be one of {SPATIAL_STAGES} (a stage after an EOG regression "
            f"comes with its matrix), got {kind!r}"
        )
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

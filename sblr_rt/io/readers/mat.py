"""BCI-competition recordings in MATLAB files (v4-v7).

- continuous, as competition III data sets IVa/IVb: ``cnt`` (n_samples, n_channels),
  ``mrk.pos`` (1-based sample index of each cue), ``mrk.y`` (label, NaN when unknown),
  optional ``mrk.className`` (or ``nfo.classes``, with -1/+1 labels as in competition IV
  data set 1), ``nfo.clab``, ``nfo.fs``; a label becomes its class name when known.
  Integer ``cnt`` is stored in 0.1 uV steps and is converted to uV as the competition
  documents.
- epoched, as competition 2003 data set IV: ``x_train`` (n_times, n_channels, n_trials),
  ``y_train`` (n_trials,), ``clab``. Trials are concatenated; one marker at each trial's
  first sample carries its label; ``epoch_length`` is n_times. The rate is taken from
  ``fs``/``nfo.fs`` when stored, else 100 Hz (the rate of that data set).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sblr_rt.io.readers._common import logger, marker_text
from sblr_rt.io.recording import Recording

__all__ = ["read_mat"]

#: Rate of the BCI Competition 2003 data set IV, used when an epoched .mat stores none.
_BCICOMP2003_SFREQ = 100.0


def _mat_get(obj, name: str):
    """Return ``obj.name`` for a MATLAB struct (loaded squeezed, as objects) or None."""
    if obj is None:
        return None
    return getattr(obj, name, None)


def _mat_strings(value) -> list[str]:
    arr = np.atleast_1d(np.asarray(value, dtype=object))
    return [str(np.asarray(v).reshape(-1)[0]) if np.size(v) else "" for v in arr.ravel()]


def read_mat(path: Path) -> Recording:
    """Read a BCI-competition ``.mat`` file (see the module docstring)."""
    import scipy.io

    try:
        mat = scipy.io.loadmat(path, squeeze_me=True, struct_as_record=False)
    except NotImplementedError as exc:  # MATLAB v7.3 is HDF5
        raise ValueError(
            f"'{path}' is a MATLAB v7.3 (HDF5) file, which is not supported: save it with "
            f"-v7; got {exc}"
        ) from exc
    except Exception as exc:
        raise ValueError(
            f"'{path}' is not a readable MATLAB file (corrupt, truncated or another "
            f"format): {type(exc).__name__}: {exc}"
        ) from exc
    keys = sorted(k for k in mat if not k.startswith("__"))
    if "cnt" in mat:
        return _read_mat_continuous(path, mat)
    if "x_train" in mat:
        return _read_mat_epoched(path, mat)
    raise ValueError(
        f"'{path}' is not a BCI-competition recording: expected variables 'cnt', 'mrk', "
        f"'nfo' (continuous) or 'x_train', 'y_train', 'clab' (epoched); got {keys}"
    )


def _mat_sfreq(path: Path, mat: dict, *, default: float | None) -> float:
    for value in (mat.get("fs"), _mat_get(mat.get("nfo"), "fs"), mat.get("sfreq")):
        if value is not None and np.size(value) == 1:
            return float(np.asarray(value).reshape(-1)[0])
    if default is None:
        raise ValueError(f"'{path}' stores no sampling rate ('nfo.fs' or 'fs'); got none")
    logger.info("%s stores no sampling rate; using %g Hz", path, default)
    return default


def _read_mat_continuous(path: Path, mat: dict) -> Recording:
    cnt = np.asarray(mat["cnt"])
    nfo, mrk = mat.get("nfo"), mat.get("mrk")
    if cnt.ndim != 2:
        raise ValueError(f"'{path}': 'cnt' must be (n_samples, n_channels), got {cnt.shape}")
    unit = "uV"
    if np.issubdtype(cnt.dtype, np.integer):
        data = 0.1 * cnt.T.astype(np.float64)  # stored in 0.1 uV steps (competition III)
    else:
        data = cnt.T.astype(np.float64)
    clab = _mat_get(nfo, "clab")
    if clab is None:
        clab = mat.get("clab")
    labels = _mat_strings(clab) if clab is not None else []
    if len(labels) != data.shape[0]:
        raise ValueError(
            f"'{path}': expected {data.shape[0]} channel labels in 'nfo.clab', got {len(labels)}"
        )
    sfreq = _mat_sfreq(path, mat, default=None)
    times, values = np.zeros(0), []
    pos = _mat_get(mrk, "pos")
    if pos is not None and np.size(pos):
        pos = np.atleast_1d(np.asarray(pos, dtype=np.float64)).ravel()
        y = _mat_get(mrk, "y")
        y = np.full(pos.shape, np.nan) if y is None else np.asarray(y, dtype=np.float64)
        if y.ndim == 2:  # one-hot (n_classes, n_markers) layout of later BBCI files
            y = np.where(np.isnan(y).any(0), np.nan, np.argmax(y, axis=0) + 1.0)
        y = np.atleast_1d(y).ravel()
        if y.size != pos.size:
            raise ValueError(
                f"'{path}': 'mrk.y' must have one label per 'mrk.pos' ({pos.size}), got {y.size}"
            )
        names = _mat_get(mrk, "className")
        if names is None:
            names = _mat_get(nfo, "classes")  # BCI competition IV data set 1
        names = _mat_strings(names) if names is not None else None
        # labels are 1-based class indices, or -1/+1 for two classes (competition IV 1)
        signed = names is not None and len(names) == 2 and set(y[~np.isnan(y)]) <= {-1, 1}
        for label in y:
            if np.isnan(label):
                values.append("unlabeled")
            elif signed:
                values.append(names[0] if label < 0 else names[1])
            elif names and float(label).is_integer() and 1 <= label <= len(names):
                values.append(names[int(label) - 1])
            else:
                values.append(marker_text(label))
        times = (pos - 1) / sfreq  # MATLAB positions are 1-based
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=labels,
        marker_times=times,
        marker_values=values,
        source=str(path),
        unit=unit,
    )


def _read_mat_epoched(path: Path, mat: dict) -> Recording:
    x = np.asarray(mat["x_train"], dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(
            f"'{path}': 'x_train' must be (n_times, n_channels, n_trials), got {x.shape}"
        )
    n_times, n_channels, n_trials = x.shape
    y = mat.get("y_train")
    if y is None:
        raise ValueError(f"'{path}': epoched file without 'y_train' labels")
    y = np.atleast_1d(np.asarray(y)).ravel()
    if y.size != n_trials:
        raise ValueError(
            f"'{path}': 'y_train' must have one label per trial ({n_trials}), got {y.size}"
        )
    clab = mat.get("clab")
    if clab is None:
        clab = _mat_get(mat.get("nfo"), "clab")
    labels = _mat_strings(clab) if clab is not None else []
    if len(labels) != n_channels:
        raise ValueError(
            f"'{path}': expected {n_channels} channel labels in 'clab', got {len(labels)}"
        )
    sfreq = _mat_sfreq(path, mat, default=_BCICOMP2003_SFREQ)
    # (n_times, n_channels, n_trials) -> (n_channels, n_trials * n_times), trial-major
    data = x.transpose(1, 2, 0).reshape(n_channels, n_trials * n_times)
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=labels,
        marker_times=np.arange(n_trials) * n_times / sfreq,
        marker_values=[marker_text(v) for v in y],
        epoch_length=n_times,
        source=str(path),
        unit="uV",
    )

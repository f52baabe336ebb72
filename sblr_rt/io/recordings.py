"""Read EEG recordings from disk into one simple container, :class:`Recording`.

Supported formats, chosen by file extension:

- ``.fif`` (also ``.fif.gz``), ``.edf``, ``.bdf``, ``.gdf`` through MNE-Python. Data are in
  volts. Annotations become markers (except ``BAD``/``EDGE`` ones), at the sample their
  onset falls on; without annotations, trigger-channel events do (values: event codes).
  Trigger (``stim``) channels are left out of the data. PhysioNet EDF channel names such
  as ``Fc5.`` are standardised to 10-10 labels (``FC5``) with
  :func:`mne.datasets.eegbci.standardize`.
- ``.xdf`` (LabRecorder) through :func:`pyxdf.load_xdf`: the EEG stream (type ``EEG``,
  else the regularly sampled numeric stream with most channels) and every marker stream
  (string or irregular streams), merged in time. Units as stored (``desc`` metadata).
- ``.mat``, BCI competition layouts (MATLAB v4-v7 files):

  * continuous, as competition III data sets IVa/IVb: ``cnt`` (n_samples, n_channels),
    ``mrk.pos`` (1-based sample index of each cue), ``mrk.y`` (label, NaN when unknown),
    optional ``mrk.className`` (or ``nfo.classes``, with -1/+1 labels as in competition IV
    data set 1), ``nfo.clab``, ``nfo.fs``; a label becomes its class name when known.
    Integer ``cnt`` is stored in 0.1 uV steps and is converted to uV as the competition
    documents.
  * epoched, as competition 2003 data set IV: ``x_train`` (n_times, n_channels,
    n_trials), ``y_train`` (n_trials,), ``clab``. Trials are concatenated; one marker at
    each trial's first sample carries its label; ``epoch_length`` is n_times. The rate is
    taken from ``fs``/``nfo.fs`` when stored, else 100 Hz (the rate of that data set).

A recording without markers is still read (it replays as a stream); code that needs cues
calls :meth:`Recording.require_markers`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

logger = logging.getLogger("sblr_rt.io")

#: Extensions read through MNE-Python, with the reader's name in :mod:`mne.io`.
_MNE_READERS = {
    ".fif": "read_raw_fif",
    ".fif.gz": "read_raw_fif",
    ".edf": "read_raw_edf",
    ".bdf": "read_raw_bdf",
    ".gdf": "read_raw_gdf",
}
SUPPORTED_EXTENSIONS = (*_MNE_READERS, ".xdf", ".xdfz", ".mat")

#: Rate of the BCI Competition 2003 data set IV, used when an epoched .mat stores none.
_BCICOMP2003_SFREQ = 100.0


@dataclass
class Recording:
    """A continuous multi-channel recording with its markers.

    Parameters
    ----------
    data : ndarray, shape (n_channels, n_samples)
        Samples, float64.
    sfreq : float
        Sampling rate in Hz.
    ch_names : list of str, length n_channels
        Channel labels.
    marker_times : ndarray, shape (n_markers,)
        Marker times in seconds from the first sample (sorted).
    marker_values : list of str, length n_markers
        Marker values.
    epoch_length : int | None
        Samples per trial for epoched files (trials concatenated, one marker at each
        trial's first sample), None for continuous recordings.
    source : str
        The file it was read from (several joined by ``" + "`` after concatenation).
    unit : str
        Unit of ``data``: ``"V"`` for MNE formats, as stored otherwise (``"uV"``, or the
        XDF stream's declared unit, or ``"unknown"``).
    """

    data: np.ndarray
    sfreq: float
    ch_names: list[str]
    marker_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    marker_values: list[str] = field(default_factory=list)
    epoch_length: int | None = None
    source: str = ""
    unit: str = "V"

    def __post_init__(self) -> None:
        self.data = np.asarray(self.data, dtype=np.float64)
        if self.data.ndim != 2:
            raise ValueError(
                f"'data' must have shape (n_channels, n_samples), got {self.data.shape}"
            )
        self.sfreq = float(self.sfreq)
        if not (np.isfinite(self.sfreq) and self.sfreq > 0):
            raise ValueError(f"'sfreq' must be a positive number in Hz, got {self.sfreq}")
        self.ch_names = [str(ch) for ch in self.ch_names]
        if len(self.ch_names) != self.data.shape[0]:
            raise ValueError(
                f"'ch_names' must have one label per row of 'data' ({self.data.shape[0]}), "
                f"got {len(self.ch_names)}"
            )
        times = np.asarray(self.marker_times, dtype=np.float64).reshape(-1)
        values = [str(v) for v in self.marker_values]
        if times.size != len(values):
            raise ValueError(
                f"'marker_times' and 'marker_values' must have the same length, got "
                f"{times.size} and {len(values)}"
            )
        order = np.argsort(times, kind="stable")
        self.marker_times = times[order]
        self.marker_values = [values[i] for i in order]
        self.source = str(self.source)

    @property
    def n_channels(self) -> int:
        """Number of channels."""
        return self.data.shape[0]

    @property
    def n_samples(self) -> int:
        """Number of samples."""
        return self.data.shape[1]

    @property
    def duration(self) -> float:
        """Duration in seconds (n_samples / sfreq)."""
        return self.n_samples / self.sfreq

    @property
    def marker_samples(self) -> np.ndarray:
        """Marker positions as sample indices, shape (n_markers,), int64."""
        return np.round(self.marker_times * self.sfreq).astype(np.int64)

    @property
    def has_markers(self) -> bool:
        """Whether the recording has at least one marker."""
        return len(self.marker_values) > 0

    def require_markers(self) -> None:
        """Raise if the recording has no markers (calibration needs cues).

        Raises
        ------
        ValueError
            When there is no marker.
        """
        if not self.has_markers:
            raise ValueError(
                f"recording '{self.source}' has no markers (no annotations, events or "
                "marker stream): it can be replayed but not used for calibration; got 0 "
                "markers"
            )

    def __repr__(self) -> str:
        kind = f", epochs of {self.epoch_length}" if self.epoch_length else ""
        return (
            f"<Recording {Path(self.source).name or '?'}: {self.n_channels} ch x "
            f"{self.n_samples} samples @ {self.sfreq:g} Hz ({self.duration:.1f} s, "
            f"{self.unit}), {len(self.marker_values)} markers{kind}>"
        )


def read_recording(path) -> Recording:
    """Read a recording (FIF, EDF, BDF, GDF, XDF or BCI-competition ``.mat``).

    Parameters
    ----------
    path : str | Path
        The file.

    Returns
    -------
    recording : Recording
        Its data, channel labels, rate and markers.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For an unknown extension, a file that is not a recording of its format, or a
        corrupt/truncated file.

    Examples
    --------
    >>> rec = read_recording("recordings/physionet-eegmmidb-S001/S001R05.edf")  # doctest: +SKIP
    >>> rec.ch_names[:3], rec.sfreq, sorted(set(rec.marker_values))  # doctest: +SKIP
    (['FC5', 'FC3', 'FC1'], 160.0, ['T0', 'T1', 'T2'])
    """
    if not isinstance(path, str | Path):
        raise TypeError(f"'path' must be a str or Path, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"recording '{path}' does not exist or is not a file")
    name = path.name.lower()
    ext = ".fif.gz" if name.endswith(".fif.gz") else path.suffix.lower()
    if ext in _MNE_READERS:
        rec = _read_mne(path, _MNE_READERS[ext])
    elif ext in (".xdf", ".xdfz"):
        rec = _read_xdf(path)
    elif ext == ".mat":
        rec = _read_mat(path)
    else:
        raise ValueError(
            f"'path' must be a recording with one of the extensions "
            f"{', '.join(SUPPORTED_EXTENSIONS)}, got '{path.name}'"
        )
    if not rec.has_markers:
        logger.warning("%s has no markers: replay works, calibration will refuse it", path)
    logger.info("read %r", rec)
    return rec


def concatenate_recordings(recordings) -> Recording:
    """Join recordings end to end (same channels, rate and unit).

    Parameters
    ----------
    recordings : sequence of Recording
        At least one.

    Returns
    -------
    recording : Recording
        Samples appended in order; marker times shifted by the duration of what precedes.
        ``epoch_length`` is kept when all inputs share it, else None.
    """
    recordings = list(recordings)
    if not recordings:
        raise ValueError("'recordings' must hold at least one Recording, got none")
    for rec in recordings:
        if not isinstance(rec, Recording):
            raise TypeError(f"'recordings' must hold Recording objects, got {type(rec).__name__}")
    first = recordings[0]
    for rec in recordings[1:]:
        for attr in ("ch_names", "sfreq", "unit"):
            if getattr(rec, attr) != getattr(first, attr):
                raise ValueError(
                    f"recordings to concatenate must share '{attr}': '{first.source}' has "
                    f"{getattr(first, attr)!r}, got {getattr(rec, attr)!r} in '{rec.source}'"
                )
    offsets = np.cumsum([0] + [rec.n_samples for rec in recordings[:-1]])
    epoch_lengths = {rec.epoch_length for rec in recordings}
    return Recording(
        data=np.concatenate([rec.data for rec in recordings], axis=1),
        sfreq=first.sfreq,
        ch_names=list(first.ch_names),
        marker_times=np.concatenate(
            [
                rec.marker_times + off / first.sfreq
                for rec, off in zip(recordings, offsets, strict=True)
            ]
        ),
        marker_values=[v for rec in recordings for v in rec.marker_values],
        epoch_length=epoch_lengths.pop() if len(epoch_lengths) == 1 else None,
        source=" + ".join(rec.source for rec in recordings),
        unit=first.unit,
    )


# --------------------------------------------------------------------------------------
# MNE formats


def _read_mne(path: Path, reader: str) -> Recording:
    import mne

    try:
        raw = getattr(mne.io, reader)(path, preload=True, verbose="error")
    except Exception as exc:  # MNE raises many kinds for a broken file
        raise ValueError(
            f"'{path}' is not a readable {path.suffix.lstrip('.').upper()} recording "
            f"(corrupt, truncated or another format): {type(exc).__name__}: {exc}"
        ) from exc
    if any(ch.endswith(".") for ch in raw.ch_names):  # PhysioNet eegmmidb labels
        mne.datasets.eegbci.standardize(raw)
    return recording_from_raw(raw, source=path)


def recording_from_raw(raw, *, source="") -> Recording:
    """Convert an MNE Raw object into a :class:`Recording` (volts, annotations as markers).

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Loaded raw data.
    source : str | Path
        Where it came from.

    Returns
    -------
    recording : Recording
        Data (n_channels, n_samples) in volts without trigger (``stim``) channels; markers
        from the annotations, except ``BAD``/``EDGE`` ones, or, when there is no other
        annotation, from the events of the trigger channels (value: the event code).
    """
    import mne

    sfreq = raw.info["sfreq"]
    ann = raw.annotations
    keep = [
        i for i, desc in enumerate(ann.description) if not desc.upper().startswith(("BAD", "EDGE"))
    ]
    # Raw.annotations onsets include first_samp / sfreq; count them from the first sample
    samples = np.round((ann.onset[keep] - raw.first_time) * sfreq).astype(np.int64)
    values = [ann.description[i] for i in keep]
    stim = [raw.ch_names[i] for i in mne.pick_types(raw.info, meg=False, stim=True)]
    if stim:
        if not keep:  # trigger channel events become the markers
            try:
                events = mne.find_events(
                    raw, stim_channel=stim, shortest_event=1, consecutive=True, verbose="error"
                )
            except ValueError as exc:
                logger.warning("no events read from trigger channels %s: %s", stim, exc)
                events = np.zeros((0, 3), dtype=np.int64)
            samples = events[:, 0] - raw.first_samp
            values = [str(code) for code in events[:, 2]]
        raw = raw.copy().drop_channels(stim)
    inside = (samples >= 0) & (samples < raw.n_times)
    if not inside.all():
        logger.warning("%d markers outside the data were dropped", int((~inside).sum()))
    return Recording(
        data=raw.get_data(),
        sfreq=raw.info["sfreq"],
        ch_names=list(raw.ch_names),
        marker_times=samples[inside] / sfreq,
        marker_values=[v for v, ok in zip(values, inside, strict=True) if ok],
        source=str(source),
        unit="V",
    )


# --------------------------------------------------------------------------------------
# XDF


def _first(value, default=None):
    """Return the text of a pyxdf header entry (lists of one element)."""
    while isinstance(value, list):
        if not value:
            return default
        value = value[0]
    return default if value is None else value


def _xdf_channel_field(info: dict, key: str) -> list[str]:
    try:
        channels = info["desc"][0]["channels"][0]["channel"]
    except (KeyError, IndexError, TypeError):
        return []
    return [str(_first(ch.get(key), "")) for ch in channels]


def _read_xdf(path: Path) -> Recording:
    import pyxdf

    try:
        streams, _ = pyxdf.load_xdf(str(path), verbose=False)
    except Exception as exc:
        raise ValueError(
            f"'{path}' is not a readable XDF recording (corrupt, truncated or another "
            f"format): {type(exc).__name__}: {exc}"
        ) from exc

    def describe(s):
        info = s["info"]
        return (
            f"{_first(info.get('name'))!r} (type {_first(info.get('type'))!r}, "
            f"{_first(info.get('channel_count'))} ch, {_first(info.get('nominal_srate'))} Hz)"
        )

    numeric, markers = [], []
    for s in streams:
        info = s["info"]
        fmt = _first(info.get("channel_format"), "")
        srate = float(_first(info.get("nominal_srate"), 0) or 0)
        if fmt == "string" or srate == 0:
            markers.append(s)
        elif len(s["time_stamps"]):
            numeric.append(s)
    eeg = [s for s in numeric if str(_first(s["info"].get("type"), "")).lower() == "eeg"]
    candidates = eeg or numeric
    if not candidates:
        found = ", ".join(describe(s) for s in streams) or "no stream"
        raise ValueError(
            f"'{path}' holds no regularly sampled numeric stream with samples to use as "
            f"EEG; got {found}"
        )
    main = max(candidates, key=lambda s: int(_first(s["info"].get("channel_count"), 0)))
    if len(candidates) > 1:
        logger.warning("%s: several EEG candidates, using %s", path, describe(main))
    info = main["info"]
    data = np.asarray(main["time_series"], dtype=np.float64).T
    stamps = np.asarray(main["time_stamps"], dtype=np.float64)
    sfreq = float(_first(info.get("nominal_srate")))
    labels = _xdf_channel_field(info, "label")
    if len(labels) != data.shape[0] or not all(labels):
        labels = [f"ch{i + 1}" for i in range(data.shape[0])]
    units = {u for u in _xdf_channel_field(info, "unit") if u}
    unit = units.pop() if len(units) == 1 else "unknown"
    t0 = stamps[0]
    times, values = [], []
    for s in markers:
        for ts, sample in zip(s["time_stamps"], s["time_series"], strict=True):
            times.append(ts - t0)
            values.append(_marker_text(sample[0] if len(sample) else ""))
    times = np.asarray(times, dtype=np.float64)
    # align each marker to the sample with the nearest timestamp
    idx = np.clip(np.searchsorted(stamps, times + t0), 1, max(len(stamps) - 1, 1))
    if len(stamps) > 1 and times.size:
        idx = idx - ((times + t0 - stamps[idx - 1]) < (stamps[idx] - times - t0))
    inside = (times >= -0.5 / sfreq) & (times <= (stamps[-1] - t0) + 0.5 / sfreq)
    if times.size and not inside.all():
        logger.warning("%s: %d markers outside the EEG were dropped", path, (~inside).sum())
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=labels,
        marker_times=(idx[inside] / sfreq) if times.size else times,
        marker_values=[v for v, ok in zip(values, inside, strict=True) if ok],
        source=str(path),
        unit=unit,
    )


def _marker_text(value) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


# --------------------------------------------------------------------------------------
# BCI competition .mat


def _mat_get(obj, name: str):
    """Return ``obj.name`` for a MATLAB struct (loaded squeezed, as objects) or None."""
    if obj is None:
        return None
    return getattr(obj, name, None)


def _mat_strings(value) -> list[str]:
    arr = np.atleast_1d(np.asarray(value, dtype=object))
    return [str(np.asarray(v).reshape(-1)[0]) if np.size(v) else "" for v in arr.ravel()]


def _read_mat(path: Path) -> Recording:
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
                values.append(_marker_text(label))
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
        marker_values=[_marker_text(v) for v in y],
        epoch_length=n_times,
        source=str(path),
        unit="uV",
    )

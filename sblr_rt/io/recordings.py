"""Read EEG recordings from disk into one simple container, :class:`Recording`.

:func:`read_recording` chooses the reader (:mod:`sblr_rt.io.readers`) by extension.

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
from pathlib import Path

from sblr_rt.io.readers import MNE_READERS, read_mat, read_mne, read_xdf, recording_from_raw
from sblr_rt.io.recording import Recording, concatenate_recordings

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "Recording",
    "concatenate_recordings",
    "read_recording",
    "recording_from_raw",
]

logger = logging.getLogger("sblr_rt.io")

_READERS = {".xdf": read_xdf, ".xdfz": read_xdf, ".mat": read_mat}
SUPPORTED_EXTENSIONS = (*MNE_READERS, *_READERS)


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
    if ext in MNE_READERS:
        rec = read_mne(path, MNE_READERS[ext])
    elif ext in _READERS:
        rec = _READERS[ext](path)
    else:
        raise ValueError(
            f"'path' must be a recording with one of the extensions "
            f"{', '.join(SUPPORTED_EXTENSIONS)}, got '{path.name}'"
        )
    if not rec.has_markers:
        logger.warning("%s has no markers: replay works, calibration will refuse it", path)
    logger.info("read %r", rec)
    return rec

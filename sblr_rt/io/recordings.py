"""Read EEG recordings from disk into one simple container, :class:`Recording`.

:func:`read_recording` chooses the reader by file extension:

- ``.fif`` (also ``.fif.gz``), ``.edf``, ``.bdf``, ``.gdf`` through MNE-Python, in volts
  (:mod:`sblr_rt.io.readers.mne_formats`);
- ``.xdf``/``.xdfz`` (LabRecorder) through pyxdf (:mod:`sblr_rt.io.readers.xdf`);
- ``.mat``, BCI-competition layouts, continuous or epoched (:mod:`sblr_rt.io.readers.mat`).

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

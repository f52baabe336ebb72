"""Read EEG recordings from disk into one simple container, :class:`Recording`.

:func:`read_recording` chooses the reader:

- a file inside a BIDS tree (``sub-01/eeg/sub-01_task-motor_run-1_eeg.edf``) through
  MNE-BIDS, so that ``events.tsv`` gives the markers and ``channels.tsv`` the channel
  types and bad channels (:mod:`sblr_rt.io.readers.bids`; :func:`find_bids` names
  recordings by their entities instead);
- ``.xdf``/``.xdfz`` (LabRecorder) through pyxdf (:mod:`sblr_rt.io.readers.xdf`);
- ``.mat``, BCI-competition layouts, continuous or epoched (:mod:`sblr_rt.io.readers.mat`);
- every other format MNE-Python reads (:func:`mne.io.read_raw`: FIF, EDF, BDF, GDF,
  BrainVision ``.vhdr``, EEGLAB ``.set``, ...), in volts
  (:mod:`sblr_rt.io.readers.mne_formats`).

Readers of MNE formats and BIDS keep the EEG channels not marked bad
(:attr:`Recording.excluded` says what was left out and why). A recording without markers
is still read (it replays as a stream); code that needs cues calls
:meth:`Recording.require_markers`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sblr_rt.io.readers import (
    MNE_READERS,
    bids_path_of,
    find_bids,
    mne_extension,
    mne_extensions,
    read_bids,
    read_mat,
    read_mne,
    read_xdf,
    recording_from_raw,
)
from sblr_rt.io.recording import Recording, concatenate_recordings

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "Recording",
    "concatenate_recordings",
    "find_bids",
    "read_recording",
    "recording_from_raw",
    "supported_extensions",
]

logger = logging.getLogger("sblr_rt.io")

_READERS = {".xdf": read_xdf, ".xdfz": read_xdf, ".mat": read_mat}

#: The formats this project tests on every commit (:func:`supported_extensions` lists all).
SUPPORTED_EXTENSIONS = (*MNE_READERS, ".vhdr", ".set", *_READERS)


def supported_extensions() -> tuple[str, ...]:
    """Return every extension :func:`read_recording` reads (MNE's, then XDF and ``.mat``)."""
    return tuple(dict.fromkeys((*mne_extensions(), *_READERS)))


def read_recording(path) -> Recording:
    """Read a recording: any format MNE reads, XDF, BCI-competition ``.mat``, BIDS.

    Parameters
    ----------
    path : str | Path
        The file (a folder for the formats stored as one: CTF ``.ds``, EGI ``.mff``). A
        file inside a BIDS tree is read with its sidecars (events, channels).

    Returns
    -------
    recording : Recording
        Its data, channel labels, rate and markers.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For an unknown extension, a file that is not a recording of its format, a
        corrupt/truncated file, or one without any good EEG channel.

    Examples
    --------
    >>> rec = read_recording("recordings/physionet-eegmmidb-S001/S001R05.edf")  # doctest: +SKIP
    >>> rec.ch_names[:3], rec.sfreq, sorted(set(rec.marker_values))  # doctest: +SKIP
    (['FC5', 'FC3', 'FC1'], 160.0, ['T0', 'T1', 'T2'])
    """
    if not isinstance(path, str | Path):
        raise TypeError(f"'path' must be a str or Path, got {type(path).__name__}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"recording '{path}' does not exist or is not a file")
    name = path.name.lower()
    ext = mne_extension(path) or path.suffix.lower()
    if path.is_dir():
        if (path / "dataset_description.json").is_file():
            raise ValueError(
                f"'path' must be one recording, got the BIDS root '{path}': name a file in "
                "it, or the recordings by entities (sblr-rt calibrate --bids-root ROOT "
                "--subject 01 --task TASK; sblr_rt.io.readers.find_bids)"
            )
        if ext not in (".ds", ".mff"):  # the formats MNE reads from a folder
            raise FileNotFoundError(f"recording '{path}' does not exist or is not a file")
    bids_path = None if name.endswith(tuple(_READERS)) else bids_path_of(path)
    if bids_path is not None:
        rec = read_bids(bids_path)
    elif path.suffix.lower() in _READERS:
        rec = _READERS[path.suffix.lower()](path)
    elif mne_extension(path) is not None:
        rec = read_mne(path)
    else:
        raise ValueError(
            f"'path' must be a recording with one of the extensions "
            f"{', '.join(supported_extensions())} (or a file in a BIDS tree), got "
            f"'{path.name}'"
        )
    if not rec.has_markers:
        logger.warning("%s has no markers: replay works, calibration will refuse it", path)
    logger.info("read %r", rec)
    return rec

"""Recordings in every format MNE-Python reads (:func:`mne.io.read_raw`).

FIF, EDF, BDF, GDF, BrainVision (``.vhdr``), EEGLAB (``.set``), Neuroscan ``.cnt``, EGI
``.mff``, CTF ``.ds`` and the rest of :func:`mne_extensions`. Data are in volts.
Annotations become markers (except ``BAD``/``EDGE`` ones), at the sample their onset falls
on; without annotations, trigger-channel events do (values: event codes).

Only EEG channels not marked bad are kept (:func:`recording_from_raw`): EOG, EMG, misc,
trigger and other non-EEG channels, and the channels in ``raw.info["bads"]``, are left out
of the data, listed in :attr:`Recording.excluded` with the reason, and named in a
WARNING. A file without any such EEG channel is refused. PhysioNet/BCI2000 EDF labels
such as ``Fc5.`` are standardised to 10-10 labels (``FC5``) by the one rule of
:mod:`sblr_rt.io.labels` (the online start-up matches a stream's labels by the same rule).

An EDF/BDF file with fewer data records than its header announces (cut short) is read as
far as it goes, with a WARNING and an entry in :attr:`Recording.warnings` ("truncated: N of
M data records present").

Before any sample is read, the header is checked (:func:`check_header`, :func:`check_raw`):
every file it names lies inside the recording's folder (:mod:`sblr_rt.io.paths`), its rate
is one an amplifier gives and its samples fit in memory (:mod:`sblr_rt.io.declared_limits`).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np

from sblr_rt.io.declared_limits import check_allocation, check_sfreq
from sblr_rt.io.labels import standard_labels
from sblr_rt.io.paths import brainvision_files, check_inside
from sblr_rt.io.readers._common import logger
from sblr_rt.io.readers._edf_header import check_edf_rate, edf_records
from sblr_rt.io.recording import Recording

__all__ = [
    "MNE_READERS",
    "check_header",
    "check_raw",
    "mne_extension",
    "mne_extensions",
    "read_mne",
    "recording_from_raw",
]

#: Extensions with a dedicated reader in :mod:`mne.io` (any other of
#: :func:`mne_extensions` goes through :func:`mne.io.read_raw`).
MNE_READERS = {
    ".fif": "read_raw_fif",
    ".fif.gz": "read_raw_fif",
    ".edf": "read_raw_edf",
    ".bdf": "read_raw_bdf",
    ".gdf": "read_raw_gdf",
}

#: Used when MNE does not say which extensions :func:`mne.io.read_raw` reads (its list is
#: private); the formats of MNE 1.13.
_FALLBACK_EXTENSIONS = (
    *MNE_READERS,
    ".vhdr",
    ".ahdr",
    ".set",
    ".cnt",
    ".mff",
    ".nxe",
    ".eeg",
    ".hdr",
    ".cdt",
    ".ds",
    ".sqd",
    ".con",
)


def mne_extensions() -> tuple[str, ...]:
    """Return the extensions :func:`mne.io.read_raw` reads (lower case, with the dot)."""
    try:
        from mne.io._read_raw import _get_supported  # private: fall back if it moves

        found = tuple(_get_supported())
    except Exception:  # pragma: no cover - depends on the installed MNE
        found = ()
    return tuple(dict.fromkeys((*MNE_READERS, *(e.lower() for e in found))))


def mne_extension(path: Path) -> str | None:
    """Return the MNE extension of ``path`` (the longest that fits), or None."""
    name = Path(path).name.lower()
    # A format with its own reader needs no list from MNE (getting it imports every
    # reader of mne.io: 0.2 s of a calibration that reads one FIF file).
    own = [ext for ext in MNE_READERS if name.endswith(ext)]
    if own:
        return max(own, key=len)
    known = mne_extensions()
    known = known if len(known) > len(MNE_READERS) else _FALLBACK_EXTENSIONS
    fits = [ext for ext in known if name.endswith(ext)]
    return max(fits, key=len) if fits else None


def read_mne(path: Path, reader: str | None = None) -> Recording:
    """Read ``path`` through MNE-Python.

    Parameters
    ----------
    path : Path
        A file (or folder: CTF ``.ds``, EGI ``.mff``) MNE reads.
    reader : str | None
        Name of the reader in :mod:`mne.io` (see :data:`MNE_READERS`); None: the one
        :func:`mne.io.read_raw` chooses by extension.

    Returns
    -------
    recording : Recording
        See :func:`recording_from_raw`.

    Raises
    ------
    ValueError
        If the file is not a readable recording; if it names a file outside its folder
        (BrainVision ``DataFile``/``MarkerFile``, EEGLAB ``.fdt``); if it declares a rate
        out of ``(0, MAX_SFREQ]`` or samples beyond ``MAX_DATA_BYTES``
        (:mod:`sblr_rt.io.declared_limits`). All of these are checked from the header, before the
        samples are read.
    """
    import mne

    path = Path(path)
    if reader is None:
        reader = MNE_READERS.get(mne_extension(path) or "", "read_raw")
    check_header(path, folder=path.parent)

    records = edf_records(path) if path.suffix.lower() in (".edf", ".bdf") else None
    cut = ""
    if records is not None and records.truncated:
        cut = (
            f"truncated: {records.n_present} of {records.n_declared} data records present "
            f"({records.n_present * records.record_seconds:g} of "
            f"{records.n_declared * records.record_seconds:g} s)"
        )
    kind = path.suffix.lstrip(".").upper()
    try:
        raw = getattr(mne.io, reader)(path, preload=False, verbose="error")
    except Exception as exc:  # MNE raises many kinds for a broken file
        raise ValueError(
            f"'{path}' is not a readable {kind} recording "
            f"(corrupt, truncated or another format{'; ' + cut if cut else ''}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    check_raw(raw, source=path, folder=path.parent)
    try:
        raw.load_data(verbose="error")
    except Exception as exc:
        raise ValueError(
            f"'{path}' is not a readable {kind} recording "
            f"(corrupt, truncated or another format{'; ' + cut if cut else ''}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    n_keep = round(records.n_present * records.record_seconds * raw.info["sfreq"]) if cut else 0
    if cut and raw.n_times > n_keep > 0:
        # never more than the whole records present, whatever MNE made of the rest
        raw.crop(tmax=raw.times[n_keep - 1])
    rec = recording_from_raw(raw, source=path)
    if cut:
        message = f"{path}: {cut}; read what is there ({rec.n_samples} samples)"
        logger.warning("%s", message)
        rec.warnings.append(message)
    return rec


def check_header(path: Path, *, folder: Path) -> None:
    """Check what a recording's header declares, before MNE opens it.

    An EDF/BDF header's rates (:func:`~sblr_rt.io.readers._edf_header.check_edf_rate`);
    the files a BrainVision header names, which must lie inside ``folder``.

    Parameters
    ----------
    path : Path
        The recording file.
    folder : Path
        The folder every file it names must be in (its own folder; a BIDS recording's
        root).

    Raises
    ------
    ValueError
        If a rate is out of bounds or a named file lies outside ``folder``.
    """
    suffix = path.suffix.lower()
    if suffix in (".edf", ".bdf") and path.is_file():
        check_edf_rate(path)
    elif suffix in (".vhdr", ".ahdr") and path.is_file():
        for key, named in brainvision_files(path):
            check_inside(named, folder, what=f"the BrainVision header '{path}' ({key})")


def check_raw(raw, *, source, folder: Path) -> None:
    """Check an MNE Raw opened without its data: its files, rate and size.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Opened with ``preload=False``.
    source : str | Path
        The recording, for messages.
    folder : Path
        The folder every data file must be in.

    Raises
    ------
    ValueError
        If a data file other than ``source`` itself (a link to it included) lies outside
        ``folder``, the rate is out of ``(0, MAX_SFREQ]`` or the samples would take more
        than ``MAX_DATA_BYTES`` as float64.
    """
    named = Path(os.path.realpath(source))
    for name in raw.filenames:
        if name is None:
            continue
        real = Path(os.path.realpath(name))
        if real == named or (named.is_dir() and real.is_relative_to(named)):
            continue  # the recording the caller named (a link to it too), or inside it
        check_inside(name, folder, what=f"the recording '{source}' (its data file)")
    check_sfreq(raw.info["sfreq"], what=f"'{source}'")
    n_bytes = 8.0 * len(raw.ch_names) * raw.n_times
    check_allocation(
        n_bytes,
        what=f"'{source}' ({len(raw.ch_names)} channels x {raw.n_times} samples, float64)",
    )


def recording_from_raw(raw, *, source="") -> Recording:
    """Convert an MNE Raw object into a :class:`Recording` (volts, annotations as markers).

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Loaded raw data (not changed).
    source : str | Path
        Where it came from.

    Returns
    -------
    recording : Recording
        Data (n_channels, n_samples) in volts of the EEG channels not in
        ``raw.info["bads"]`` (the others in :attr:`Recording.excluded`), PhysioNet labels
        standardised; markers from the annotations, except ``BAD``/``EDGE`` ones, or, when
        there is no other annotation, from the events of the trigger channels (value: the
        event code).

    Raises
    ------
    ValueError
        If no EEG channel is left once non-EEG and bad channels are left out.
    """
    samples, values = _markers(raw)
    labels = standard_labels(raw.ch_names)
    picks, excluded = _eeg_picks(raw, labels, source)
    inside = (samples >= 0) & (samples < raw.n_times)
    if not inside.all():
        logger.warning("%d markers outside the data were dropped", int((~inside).sum()))
    return Recording(
        data=raw.get_data(picks=picks),
        sfreq=raw.info["sfreq"],
        ch_names=[labels[i] for i in picks],
        marker_times=samples[inside] / raw.info["sfreq"],
        marker_values=[v for v, ok in zip(values, inside, strict=True) if ok],
        source=str(source),
        unit="V",
        excluded=excluded,
    )


def _markers(raw) -> tuple[np.ndarray, list[str]]:
    """Return the marker samples (from the first sample) and values of a Raw."""
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
    if stim and not keep:  # trigger channel events become the markers
        try:
            events = mne.find_events(
                raw, stim_channel=stim, shortest_event=1, consecutive=True, verbose="error"
            )
        except ValueError as exc:
            logger.warning("no events read from trigger channels %s: %s", stim, exc)
            events = np.zeros((0, 3), dtype=np.int64)
        samples = events[:, 0] - raw.first_samp
        values = [str(code) for code in events[:, 2]]
    return samples, values


def _eeg_picks(raw, labels, source) -> tuple[list[int], dict[str, str]]:
    """Return the indices of the good EEG channels and why each other channel is out.

    Trigger channels are left out without a word (their events are the markers); any
    other channel left out is named in a WARNING, by its standardised label (``labels``,
    as the recording's channels are named).
    """
    types = raw.get_channel_types()
    bads = set(raw.info["bads"])
    picks, excluded = [], {}
    for i, (name, kind) in enumerate(zip(raw.ch_names, types, strict=True)):
        if kind == "stim":
            continue
        if kind != "eeg":
            excluded[labels[i]] = f"type {kind}"
        elif name in bads:
            excluded[labels[i]] = "bad"
        else:
            picks.append(i)
    if not picks:
        kinds = Counter(types)
        raise ValueError(
            f"'{source}' has no EEG channel to use: expected channels of type 'eeg' not "
            f"marked bad; got {dict(kinds)} by type, bad: {sorted(bads) or 'none'}"
        )
    if excluded:
        logger.warning(
            "%s: %d channels left out (EEG channels only, bad ones excluded): %s",
            source,
            len(excluded),
            ", ".join(f"{name} ({why})" for name, why in excluded.items()),
        )
    return picks, excluded

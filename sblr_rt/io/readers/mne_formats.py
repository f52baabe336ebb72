"""Recordings in the formats MNE-Python reads (FIF, EDF, BDF, GDF).

Data are in volts. Annotations become markers (except ``BAD``/``EDGE`` ones), at the sample
their onset falls on; without annotations, trigger-channel events do (values: event codes).
Trigger (``stim``) channels are left out of the data. PhysioNet EDF channel names such as
``Fc5.`` are standardised to 10-10 labels (``FC5``) with
:func:`mne.datasets.eegbci.standardize`.

An EDF/BDF file with fewer data records than its header announces (cut short) is read as
far as it goes, with a WARNING and an entry in :attr:`Recording.warnings` ("truncated: N of
M data records present").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sblr_rt.io.recording import Recording

from ._common import logger
from ._edf_header import edf_records

__all__ = ["MNE_READERS", "read_mne", "recording_from_raw"]

#: Extensions read through MNE-Python, with the reader's name in :mod:`mne.io`.
MNE_READERS = {
    ".fif": "read_raw_fif",
    ".fif.gz": "read_raw_fif",
    ".edf": "read_raw_edf",
    ".bdf": "read_raw_bdf",
    ".gdf": "read_raw_gdf",
}


def read_mne(path: Path, reader: str) -> Recording:
    """Read ``path`` with the MNE reader named ``reader`` (see :data:`MNE_READERS`)."""
    import mne

    records = edf_records(path) if path.suffix.lower() in (".edf", ".bdf") else None
    cut = ""
    if records is not None and records.truncated:
        cut = (
            f"truncated: {records.n_present} of {records.n_declared} data records present "
            f"({records.n_present * records.record_seconds:g} of "
            f"{records.n_declared * records.record_seconds:g} s)"
        )
    try:
        raw = getattr(mne.io, reader)(path, preload=True, verbose="error")
    except Exception as exc:  # MNE raises many kinds for a broken file
        raise ValueError(
            f"'{path}' is not a readable {path.suffix.lstrip('.').upper()} recording "
            f"(corrupt, truncated or another format{'; ' + cut if cut else ''}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if any(ch.endswith(".") for ch in raw.ch_names):  # PhysioNet eegmmidb labels
        mne.datasets.eegbci.standardize(raw)
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

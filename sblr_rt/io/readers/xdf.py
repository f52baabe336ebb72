"""XDF recordings (LabRecorder) through :func:`pyxdf.load_xdf`.

The EEG stream (type ``EEG``, else the regularly sampled numeric stream with most channels)
and every marker stream (string or irregular streams), merged in time; each marker goes to
the EEG sample with the nearest timestamp. Units as stored (``desc`` metadata). When the
stream types its channels and some are ``EEG``, only those are kept (the others listed in
:attr:`Recording.excluded`); PhysioNet/BCI2000 labels (``Fc5.``) are standardised by the
rule of :mod:`sblr_rt.io.labels`.

The EEG timestamps are checked, not trusted to be regular: a jump (the gap rule of
:mod:`sblr_rt.io.gaps`) is kept in :attr:`Recording.gaps` (the samples on either side
are stored joined) and warned about with its position and length; a stream whose
timestamps run at a rate more than 5 % from its declared rate is refused (samples dropped
or a wrong declaration: neither rate can be trusted). Timestamps are dejittered by pyxdf
within the stretches between gaps only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sblr_rt.io.declared_limits import check_sfreq
from sblr_rt.io.gaps import GAP_PERIODS, GAP_SECONDS
from sblr_rt.io.labels import standard_labels
from sblr_rt.io.readers._common import logger, marker_text
from sblr_rt.io.readers._stamps import RATE_TOLERANCE, effective_rate, stamp_gaps
from sblr_rt.io.recording import Recording

__all__ = ["read_xdf"]


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


def read_xdf(path: Path) -> Recording:
    """Read an ``.xdf``/``.xdfz`` file (see the module docstring)."""
    import pyxdf

    try:
        # segments for dejittering break where our gap rule does, so gaps stay visible
        streams, _ = pyxdf.load_xdf(
            str(path),
            verbose=False,
            jitter_break_threshold_seconds=GAP_SECONDS,
            jitter_break_threshold_samples=GAP_PERIODS,
        )
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
    sfreq = check_sfreq(_first(info.get("nominal_srate")), what=f"'{path}': {describe(main)}")
    data = np.asarray(main["time_series"], dtype=np.float64).T
    stamps = np.asarray(main["time_stamps"], dtype=np.float64)
    labels = _xdf_channel_field(info, "label")
    if len(labels) != data.shape[0] or not all(labels):
        labels = [f"ch{i + 1}" for i in range(data.shape[0])]
    labels = standard_labels(labels)
    keep, excluded = _eeg_channels(path, labels, _xdf_channel_field(info, "type"))
    gaps, warnings = _check_timing(path, describe(main), stamps, sfreq)
    units = {u for u in _xdf_channel_field(info, "unit") if u}
    unit = units.pop() if len(units) == 1 else "unknown"
    t0 = stamps[0]
    times, values = [], []
    for s in markers:
        for ts, sample in zip(s["time_stamps"], s["time_series"], strict=True):
            times.append(ts - t0)
            values.append(marker_text(sample[0] if len(sample) else ""))
    times = np.asarray(times, dtype=np.float64)
    # align each marker to the sample with the nearest timestamp
    idx = np.clip(np.searchsorted(stamps, times + t0), 1, max(len(stamps) - 1, 1))
    if len(stamps) > 1 and times.size:
        idx = idx - ((times + t0 - stamps[idx - 1]) < (stamps[idx] - times - t0))
    inside = (times >= -0.5 / sfreq) & (times <= (stamps[-1] - t0) + 0.5 / sfreq)
    if times.size and not inside.all():
        logger.warning("%s: %d markers outside the EEG were dropped", path, (~inside).sum())
    return Recording(
        data=data[keep],
        sfreq=sfreq,
        ch_names=[labels[i] for i in keep],
        marker_times=(idx[inside] / sfreq) if times.size else times,
        marker_values=[v for v, ok in zip(values, inside, strict=True) if ok],
        source=str(path),
        unit=unit,
        gaps=gaps,
        warnings=warnings,
        excluded=excluded,
    )


def _eeg_channels(path: Path, labels: list[str], types: list[str]):
    """Return the indices of the EEG channels and why each other channel is out.

    When the stream types its channels (``desc/channels/channel/type``) and calls some of
    them ``EEG``, only those are kept; otherwise (no types, or none ``EEG``: an amplifier
    may say ``ExG``) every channel is.
    """
    kinds = [t.strip().lower() for t in types]
    if len(kinds) != len(labels) or "eeg" not in kinds:
        return list(range(len(labels))), {}
    keep = [i for i, k in enumerate(kinds) if k == "eeg"]
    excluded = {labels[i]: f"type {k or 'not given'}" for i, k in enumerate(kinds) if k != "eeg"}
    if excluded:
        logger.warning(
            "%s: %d channels left out (EEG channels only): %s",
            path,
            len(excluded),
            ", ".join(f"{name} ({why})" for name, why in excluded.items()),
        )
    return keep, excluded


def _check_timing(path: Path, name: str, stamps: np.ndarray, sfreq: float):
    """Return the gaps and warnings of the EEG stream's timestamps; refuse a wrong rate."""
    gaps = stamp_gaps(stamps, sfreq)
    rate = effective_rate(stamps, gaps)
    if rate is not None and abs(rate - sfreq) > RATE_TOLERANCE * sfreq:
        raise ValueError(
            f"'{path}': the EEG stream {name} declares {sfreq:g} Hz but its timestamps run "
            f"at {rate:.4g} Hz ({abs(rate / sfreq - 1):.0%} apart, at most "
            f"{RATE_TOLERANCE:.0%} allowed): samples were dropped or the declared rate is "
            "wrong, so neither rate can be trusted"
        )
    warnings = []
    if gaps:
        where = ", ".join(
            f"{seconds:.3g} s before sample {i} ({i / sfreq:.3f} s)" for i, seconds in gaps[:10]
        )
        more = f" and {len(gaps) - 10} more" if len(gaps) > 10 else ""
        warnings.append(
            f"{path}: {len(gaps)} gaps in the EEG stream {name}, "
            f"{sum(s for _, s in gaps):.3g} s missing in all: {where}{more}; the samples "
            "around each are joined, epochs across one are rejected"
        )
        logger.warning("%s", warnings[-1])
    return gaps, warnings

"""The :class:`Recording` container: continuous samples, channel labels, rate and markers.

Readers (:mod:`sblr_rt.io.readers`) fill it from files; :func:`concatenate_recordings` joins
several end to end.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Recording", "concatenate_recordings"]


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
    gaps : list of (int, float)
        Where samples are missing: ``(i, seconds)`` for a jump of ``seconds`` lost between
        samples ``i - 1`` and ``i`` (``0 < i < n_samples``), sorted by ``i``. The samples
        are stored joined, so an epoch spanning ``i`` mixes two stretches of time and is
        rejected by calibration (reason ``"gap"``).
    warnings : list of str
        What the reader found wrong with the file (truncation, gaps), each also logged
        as a WARNING when read; empty for a whole file.
    excluded : dict of str to str
        Channels of the file left out of ``data``, with the reason: ``"bad"`` (marked bad
        by the file or BIDS ``channels.tsv``) or ``"type eog"`` (not EEG; the file's
        channel type); empty when every channel is used.
    """

    data: np.ndarray
    sfreq: float
    ch_names: list[str]
    marker_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    marker_values: list[str] = field(default_factory=list)
    epoch_length: int | None = None
    source: str = ""
    unit: str = "V"
    gaps: list[tuple[int, float]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)

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
        self.gaps = _checked_gaps(self.gaps, self.n_samples)
        self.warnings = [str(w) for w in self.warnings]
        self.excluded = {str(k): str(v) for k, v in dict(self.excluded).items()}

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

    def pick_channels(self, names, *, reason: str = "left out") -> Recording:
        """Return a copy holding only the channels ``names``, in that order.

        Parameters
        ----------
        names : sequence of str
            Channel labels of this recording.
        reason : str
            Why the other channels go: recorded in :attr:`excluded`.

        Returns
        -------
        recording : Recording
            The same markers, gaps and warnings; the channels not kept added to
            ``excluded`` with ``reason``.
        """
        names = [str(n) for n in names]
        unknown = [n for n in names if n not in self.ch_names]
        if unknown:
            raise ValueError(
                f"channels to pick must be in {self.source or 'the recording'}, got unknown "
                f"{unknown}"
            )
        dropped = {n: reason for n in self.ch_names if n not in names}
        return dataclasses.replace(
            self,
            data=self.data[[self.ch_names.index(n) for n in names]],
            ch_names=names,
            excluded={**self.excluded, **dropped},
        )

    def rename_channels(self, mapping) -> Recording:
        """Return a copy whose channels carry new labels (labels of another cap mapped).

        By the rules of :func:`mne.rename_channels`
        (:meth:`sblr_rt.io.labels.ChannelRenaming.apply`): every old label must be a
        channel of the recording (one left out as bad or not EEG, in :attr:`excluded`,
        counts, and is renamed there), and no two channels may end with one label.

        Parameters
        ----------
        mapping : ChannelRenaming | dict | str | None
            Old label -> new label, in any form
            :meth:`~sblr_rt.io.labels.ChannelRenaming.parse` reads
            (``"EEG C3-REF=C3,EEG C4-REF=C4"``); None or empty: this recording.

        Returns
        -------
        recording : Recording
            The same samples, markers and gaps under the new labels.

        Raises
        ------
        ValueError
            If an old label is not a channel (close labels named), or two channels would
            share a label.

        Examples
        --------
        >>> rec = Recording(np.zeros((2, 10)), 100.0, ["EEG C3-REF", "EEG C4-REF"])
        >>> rec.rename_channels("EEG C3-REF=C3,EEG C4-REF=C4").ch_names
        ['C3', 'C4']
        """
        from sblr_rt.io.labels import ChannelRenaming

        renaming = ChannelRenaming.parse(mapping)
        if not renaming:
            return self
        what = f"the recording {self.source}" if self.source else "the recording"
        names = renaming.apply(self.ch_names, what=what, known=set(self.excluded))
        new = renaming.mapping
        excluded = {new.get(k, k): v for k, v in self.excluded.items()}
        return dataclasses.replace(self, ch_names=names, excluded=excluded)

    def __repr__(self) -> str:
        kind = f", epochs of {self.epoch_length}" if self.epoch_length else ""
        if self.gaps:
            kind += f", {len(self.gaps)} gaps"
        return (
            f"<Recording {Path(self.source).name or '?'}: {self.n_channels} ch x "
            f"{self.n_samples} samples @ {self.sfreq:g} Hz ({self.duration:.1f} s, "
            f"{self.unit}), {len(self.marker_values)} markers{kind}>"
        )


def _checked_gaps(gaps, n_samples: int) -> list[tuple[int, float]]:
    """Return ``gaps`` as sorted ``(int, float)`` pairs inside the data, or raise."""
    out = []
    for gap in gaps:
        try:
            index, seconds = gap
        except (TypeError, ValueError):
            raise ValueError(
                f"'gaps' must hold (sample index, seconds missing) pairs, got {gap!r}"
            ) from None
        index, seconds = int(index), float(seconds)
        if not 0 < index < n_samples or not seconds > 0:
            raise ValueError(
                f"a gap must follow a sample (0 < index < {n_samples}) and last a positive "
                f"time, got index {index}, {seconds} s"
            )
        out.append((index, seconds))
    return sorted(out)


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
        ``epoch_length`` is kept when all inputs share it, else None. Gaps are shifted
        with their samples; warnings are kept in order.
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
        gaps=[
            (index + off, seconds)
            for rec, off in zip(recordings, offsets, strict=True)
            for index, seconds in rec.gaps
        ],
        warnings=[w for rec in recordings for w in rec.warnings],
        excluded={k: v for rec in recordings for k, v in rec.excluded.items()},
    )


# --------------------------------------------------------------------------------------

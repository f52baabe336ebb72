"""Labelled trials out of the online loop, for a model that learns during the session.

The decision thread only notes each decided trial (:meth:`TrialTap.record`: a deque append
of a few numbers). A consumer on another thread (the adaptation, at the calibration layer)
calls :meth:`TrialTap.pop`, which reads each trial's raw segment from the source's ring
buffer (thread-safe for readers), in the model's channel order and unit, and labels it with
the class its cue names.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field

import numpy as np

logger = logging.getLogger("sblr_rt.online")

__all__ = ["LabelledTrial", "TrialTap"]


@dataclass
class LabelledTrial:
    """One decided trial and the raw samples around it.

    Attributes
    ----------
    data : ndarray, shape (n_channels, n_samples)
        Raw samples in the model's channel order and unit, from ``seconds_before`` before
        the model's raw epoch (warm-up included) to the end of the trial window.
    timestamps : ndarray, shape (n_samples,)
        Their stream timestamps.
    ch_names : list of str
        The model's raw channels.
    sfreq : float
        Sampling rate.
    t_cue : float
        The cue's timestamp.
    cue : str
        The marker value.
    label : str | None
        The class the cue names, None when it names no class of the model.
    predicted : str
        The loop's decision for this trial.
    model_version : int
        The model version that decided it.
    index : int
        Trials decided since the loop started, this one's 0-based count.
    """

    data: np.ndarray
    timestamps: np.ndarray
    ch_names: list
    sfreq: float
    t_cue: float
    cue: str
    label: str | None
    predicted: str
    model_version: int
    index: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def cue_offset(self) -> float:
        """Return the samples from the segment's start to the cue's, over the nominal rate.

        The cue's sample is the one nearest its timestamp, as the loop places a trial's
        window (``trial_stop`` of :mod:`sblr_rt.online.streaming`). Counting samples
        rather than subtracting timestamps keeps the window where the loop decided it when
        the stream's clock does not run at the nominal rate (a replay at 10x speed).
        """
        ts = np.asarray(self.timestamps, dtype=np.float64)
        k = int(np.searchsorted(ts, self.t_cue))
        if k >= len(ts) or (k > 0 and self.t_cue - ts[k - 1] <= ts[k] - self.t_cue):
            k = max(k - 1, 0)
        return k / self.sfreq


class TrialTap:
    """Note decided trials on the decision thread; hand them out with their samples.

    Parameters
    ----------
    cue_classes : dict
        ``{marker value: class label}`` of the cues that start a trial.
    model_classes : sequence of str
        The model's classes (a cue whose label is not one of them gets ``label=None``).
    maxlen : int
        Trials kept until popped (older ones are forgotten, with a warning).
    """

    def __init__(self, cue_classes: dict, model_classes, *, maxlen: int = 1000) -> None:
        self.cue_classes = dict(cue_classes)
        self.model_classes = [str(c) for c in model_classes]
        self._noted: deque = deque(maxlen=maxlen)
        self._count = 0

    def record(self, t_cue: float, cue: str, decision) -> None:
        """Note a decided trial (decision thread; cheap)."""
        self._noted.append(
            (
                self._count,
                float(t_cue),
                str(cue),
                decision.label,
                int(decision.model_version or 0),
                int(decision.window_start_index),
                int(decision.window_stop_index),
            )
        )
        self._count += 1

    def pop(self, buffer, ch_names, *, feed, sfreq, seconds_before) -> list:
        """Return the trials noted since the last call, with their raw segments.

        Parameters
        ----------
        buffer : RingBuffer
            The source's raw buffer.
        ch_names : list of str
            The model's raw channels (the order of ``feed.pick``).
        feed : StreamFeed
            The stream's channels in the model's order and the unit factor.
        sfreq : float
            Sampling rate.
        seconds_before : float
            Seconds of samples kept before the model's raw epoch (room for the longer
            filter warm-up of another feature path when a refit re-selects).

        Returns
        -------
        trials : list of LabelledTrial
            Oldest first; a trial whose samples the buffer no longer holds is skipped and
            logged.
        """
        out = []
        while self._noted:
            index, t_cue, cue, predicted, version, first, stop = self._noted.popleft()
            start = max(buffer.first_index, first - round(seconds_before * sfreq))
            try:
                chunk, ts = buffer.get(start, stop)
            except ValueError:
                logger.warning("Trial %d (cue %r): its samples are gone; not kept.", index, cue)
                continue
            data = feed.apply(chunk.T).T
            label = self.cue_classes.get(cue)
            if label not in self.model_classes:
                label = None
            out.append(
                LabelledTrial(
                    data=np.ascontiguousarray(data, dtype=np.float64),
                    timestamps=ts,
                    ch_names=list(ch_names),
                    sfreq=float(sfreq),
                    t_cue=t_cue,
                    cue=cue,
                    label=label,
                    predicted=predicted,
                    model_version=version,
                    index=index,
                )
            )
        return out

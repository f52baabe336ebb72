"""Windows of dead or saturated electrodes get no decision: calibration's rejection, online.

Calibration leaves out an epoch when one of the channels the model uses is flat
(peak-to-peak at most ``flat``), clipped (stuck at its extreme for ``clip_run`` samples in a
row) or beyond ``reject`` peak-to-peak (:mod:`sblr_rt.calibration.epochs`). A window the
model was never trained on gets a decision with no meaning (ten channels railed at 0.4 V
gave p = 1.00 every time), so the online loop applies the same rules, with the model's own
settings (:class:`~sblr_rt.online.run_info.RunInfo`), to every window before classifying
it. A railed electrode is flat (constant at the rail) or clipped (stuck at it).

The checks cost nothing per decision in the default settings: as samples arrive,
:class:`WindowQuality` notes per sample the latest sample at which any used channel last
changed value, and whether some used channel has been stuck at its extreme so far (the
largest or smallest value it ever sent: an amplifier's rail; a recording's extremes are
not known online) for ``clip_run`` samples; a window is then judged from two numbers. Only
``flat > 0`` and ``reject`` (both off by default) read the window's samples.
"""

from __future__ import annotations

import numpy as np

from sblr_rt.stream.ring_buffer import RingBuffer
from sblr_rt.units import invalid_samples, max_abs_sample

__all__ = ["QUALITY_REASONS", "WindowQuality"]

#: Why a window's signal is refused (keys of ``Dropped``), in the order they are checked.
QUALITY_REASONS = ("flat", "clipped", "amplitude")


class WindowQuality:
    """The signal checks of calibration's epoch rejection, applied to online windows.

    Parameters
    ----------
    classifier : OnlineClassifier
        Its model's used channels (``model.pick_indices``) and calibration's
        rejection settings (``run_info``: ``flat``, ``clip_run``, ``reject``).
    capacity : int
        Samples kept (the streaming state's capacity).

    Notes
    -----
    Indices are this object's own: sample ``k`` is the ``k``-th sample pushed (lost
    samples, :meth:`skip`, count too).
    """

    def __init__(self, classifier, capacity: int) -> None:
        n_channels = len(classifier.ch_names)
        self.used = np.asarray(classifier.model.pick_indices, dtype=int)
        run_info = classifier.run_info
        self.flat, self.clip_run, self.reject = run_info.flat, run_info.clip_run, run_info.reject
        self.max_abs = max_abs_sample(run_info.unit)
        self.n_times_raw = int(classifier.n_times_raw)
        capacity = int(capacity)
        n_used = len(self.used)
        # Per sample: the latest index at which any used channel had last changed
        # ("changed": all of them changed since then), and how many samples so far had a
        # channel stuck at its extreme for clip_run samples (a running count).
        self._changed = RingBuffer(1, capacity)
        self._stuck = RingBuffer(1, capacity)
        self._samples = RingBuffer(n_used, capacity) if self._reads_samples else None
        self._n_channels = n_channels
        self._n = 0
        self._n_stuck = 0
        self._last = np.full(n_used, np.nan)  # previous sample
        self._last_change = np.full(n_used, -1, dtype=np.int64)
        self._run_start = np.zeros(n_used, dtype=np.int64)  # of the run at the extreme
        self._at_edge = np.zeros(n_used, dtype=bool)  # previous sample at its extreme
        self._high = np.full(n_used, -np.inf)
        self._low = np.full(n_used, np.inf)

    @property
    def _reads_samples(self) -> bool:
        return self.flat > 0 or self.reject is not None

    def push(self, picked: np.ndarray) -> None:
        """Note a chunk's used channels, in the model's channel order and unit.

        Parameters
        ----------
        picked : ndarray, shape (n_samples, n_model_channels)
            The chunk, as it enters the streaming state (invalid samples as they are:
            windows holding them are refused anyway).
        """
        n = len(picked)
        if not n:
            return
        x = picked[:, self.used]
        index = self._n + np.arange(n)
        prev = np.vstack([self._last[None], x[:-1]])
        changed = x != prev  # NaN != NaN: a NaN counts as a change (refused elsewhere)
        last_change = np.maximum.accumulate(
            np.where(changed, index[:, None], self._last_change[None]), axis=0
        )
        self._changed.push(last_change.min(axis=1, initial=n + self._n)[:, None], None)
        self._last_change = last_change[-1]
        if self.clip_run is not None:
            # An inf or a sample beyond max_abs is a gap, not an extreme (as in calibration).
            finite = np.where(invalid_samples(x, self.max_abs), np.nan, x)
            high = np.fmax.accumulate(np.vstack([self._high[None], finite]), axis=0)[1:]
            low = np.fmin.accumulate(np.vstack([self._low[None], finite]), axis=0)[1:]
            edge = (x == high) | (x == low)
            before = np.vstack([self._at_edge[None], edge[:-1]])
            going_on = edge & before & ~changed  # the same value, still at the extreme
            reset = np.where(going_on, -1, index[:, None])
            reset[0] = np.where(going_on[0], self._run_start, reset[0])
            start = np.maximum.accumulate(reset, axis=0)  # where each run began
            stuck = ((index[:, None] - start + 1 >= self.clip_run) & edge).any(axis=1)
            self._high, self._low = high[-1], low[-1]
            self._at_edge, self._run_start = edge[-1], start[-1]
            counts = self._n_stuck + np.cumsum(stuck)
            self._n_stuck = int(counts[-1])
        else:
            counts = np.full(n, self._n_stuck)
        self._stuck.push(counts[:, None], None)
        if self._samples is not None:
            self._samples.push(x, None)
        self._last = x[-1].copy()
        self._n += n

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (windows over them are refused anyway)."""
        if n > 0:
            self.push(np.full((n, self._n_channels), np.nan))

    def reason(self, stop: int) -> str | None:
        """Return why the window ending before sample ``stop`` is refused, or None.

        Returns
        -------
        reason : {"flat", "clipped", "amplitude"} | None
            The first rule the window fails, in calibration's order; None also when the
            window is not held (the streaming state refuses it on its own).
        """
        start = stop - self.n_times_raw
        last_change = self._at(self._changed, stop - 1)
        if last_change is None:
            return None
        if self.flat <= 0:
            if last_change <= start:  # a used channel kept one value over the window
                return "flat"
        elif self._ptp(start, stop, lambda ptp: ptp <= self.flat):
            return "flat"
        if self.clip_run is not None:
            first = start + self.clip_run - 1  # a run of clip_run ending here lies inside
            before = self._at(self._stuck, first - 1) if first > 0 else 0.0
            if before is not None and self._at(self._stuck, stop - 1) > before:
                return "clipped"
        if self.reject is not None and self._ptp(start, stop, lambda ptp: ptp > self.reject):
            return "amplitude"
        return None

    @staticmethod
    def _at(ring: RingBuffer, k: int) -> float | None:
        try:
            (value,), _ = ring.get(k, k + 1)
        except ValueError:
            return None
        return float(value[0])

    def _ptp(self, start: int, stop: int, test) -> bool:
        try:
            seg, _ = self._samples.get(start, stop)
        except ValueError:
            return False
        return bool(np.any(test(seg.max(axis=1) - seg.min(axis=1))))

    def channels(self, stop: int, reason: str, ch_names) -> list[str]:
        """Return the names of the used channels that make the window fail ``reason``.

        Read once per stretch of refused windows (for the warning): only the channels
        still stuck or unchanged now are named for ``flat`` and ``clipped``.
        """
        if reason == "flat" and self.flat <= 0:
            bad = self._last_change <= stop - self.n_times_raw
        elif reason == "clipped":
            bad = self._at_edge & (self._n - self._run_start >= (self.clip_run or 1))
        elif self._samples is not None:
            try:
                seg, _ = self._samples.get(stop - self.n_times_raw, stop)
            except ValueError:
                return []
            ptp = seg.max(axis=1) - seg.min(axis=1)
            bad = ptp <= self.flat if reason == "flat" else ptp > self.reject
        else:
            return []
        return [str(ch_names[self.used[i]]) for i in np.flatnonzero(bad)]

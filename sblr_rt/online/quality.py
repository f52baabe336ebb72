"""Windows of dead or saturated electrodes get no decision: calibration's rejection, online.

Calibration leaves out an epoch when one of the channels the model uses is flat
(peak-to-peak at most ``flat``), clipped (stuck at its extreme for ``clip_run`` samples in a
row) or beyond ``reject`` peak-to-peak (:mod:`sblr_rt.calibration.epochs`). A window the
model was never trained on gets a decision with no meaning (ten channels railed at 0.4 V
gave p = 1.00 every time), so the online loop applies the same rules, with the model's own
settings (``metadata["config"]``), to every window before classifying it.
:class:`WindowQuality` keeps the model's used channels of the recent samples (in the
model's unit) and their extremes so far (a recording's extremes are not known online: an
amplifier's rail is the largest value it ever sends, so "stuck at the largest value seen"
finds it), and says why a window is refused. A railed electrode is flat (constant at the
rail) or clipped (stuck at it).
"""

from __future__ import annotations

import numpy as np

from sblr_rt.stream.ring_buffer import RingBuffer

__all__ = ["QUALITY_REASONS", "WindowQuality"]

#: Why a window's signal is refused (keys of ``Dropped``), in the order they are checked.
QUALITY_REASONS = ("flat", "clipped", "amplitude")


def _longest_run(mask: np.ndarray) -> np.ndarray:
    """Return the longest run of True along the last axis, per row."""
    out = np.zeros(mask.shape[0], dtype=np.int64)
    for row in np.flatnonzero(mask.any(axis=1)):
        edges = np.flatnonzero(np.diff(np.r_[0, mask[row].astype(np.int8), 0]))
        out[row] = int(np.max(edges[1::2] - edges[::2]))
    return out


class WindowQuality:
    """The signal checks of calibration's epoch rejection, applied to online windows.

    Parameters
    ----------
    classifier : OnlineClassifier
        Its model's used channels (``preprocessor.pick_indices``) and settings
        (``model.metadata["config"]``: ``flat``, default 0; ``clip_run``, default 5, None
        off; ``reject``, default None).
    capacity : int
        Samples kept (the streaming state's capacity).
    """

    def __init__(self, classifier, capacity: int) -> None:
        model = classifier.model
        pre = getattr(model, "preprocessor", None)
        n_channels = len(classifier.ch_names)
        picks = getattr(pre, "pick_indices", None)
        self.used = np.arange(n_channels) if picks is None else np.asarray(picks, dtype=int)
        config = (getattr(model, "metadata", None) or {}).get("config") or {}
        config = config if isinstance(config, dict) else {}
        self.flat = _number(config.get("flat", 0.0), 0.0)
        clip_run = config.get("clip_run", 5)
        self.clip_run = None if clip_run is None else max(1, int(_number(clip_run, 5)))
        reject = config.get("reject")
        self.reject = None if reject is None else _number(reject, None)
        self.n_times = int(classifier.n_times)
        self._samples = RingBuffer(len(self.used), int(capacity))
        self._high = np.full(len(self.used), -np.inf)
        self._low = np.full(len(self.used), np.inf)

    def push(self, picked: np.ndarray) -> None:
        """Keep the used channels of a chunk in the model's channel order and unit.

        Parameters
        ----------
        picked : ndarray, shape (n_samples, n_model_channels)
            The chunk, as it enters the streaming state.
        """
        if not len(picked):
            return
        used = picked[:, self.used]
        finite = np.isfinite(used)
        if finite.any():
            np.maximum(self._high, np.max(used, axis=0, initial=-np.inf, where=finite),
                       out=self._high)  # fmt: skip
            np.minimum(self._low, np.min(used, axis=0, initial=np.inf, where=finite),
                       out=self._low)  # fmt: skip
        self._samples.push(used, None)

    def skip(self, n: int) -> None:
        """Advance by ``n`` lost samples (kept as zeros; such windows are refused anyway)."""
        if n > 0:
            self._samples.push(np.zeros((n, len(self.used))), None)

    def reason(self, stop: int) -> str | None:
        """Return why the window ending before sample ``stop`` is refused, or None.

        Returns
        -------
        reason : {"flat", "clipped", "amplitude"} | None
            The first rule the window fails, in calibration's order.
        """
        start = stop - self.n_times
        try:
            seg, _ = self._samples.get(start, stop)
        except ValueError:  # not held: the streaming state refuses it on its own
            return None
        high, low = seg.max(axis=1), seg.min(axis=1)
        ptp = high - low
        if np.any(ptp <= self.flat):
            return "flat"
        if self.clip_run is not None:
            at_edge = (high == self._high) | (low == self._low)
            if at_edge.any():
                rows = np.flatnonzero(at_edge)
                sub = seg[rows]
                mask = (sub == self._high[rows, None]) | (sub == self._low[rows, None])
                if np.any(_longest_run(mask) >= self.clip_run):
                    return "clipped"
        if self.reject is not None and np.any(ptp > self.reject):
            return "amplitude"
        return None

    def channels(self, stop: int, reason: str, ch_names) -> list[str]:
        """Return the names of the used channels that make the window fail ``reason``."""
        try:
            seg, _ = self._samples.get(stop - self.n_times, stop)
        except ValueError:
            return []
        ptp = seg.max(axis=1) - seg.min(axis=1)
        if reason == "flat":
            bad = ptp <= self.flat
        elif reason == "amplitude":
            bad = ptp > (np.inf if self.reject is None else self.reject)
        else:
            mask = (seg == self._high[:, None]) | (seg == self._low[:, None])
            bad = _longest_run(mask) >= (self.clip_run or np.inf)
        return [str(ch_names[self.used[i]]) for i in np.flatnonzero(bad)]


def _number(value, default):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if np.isfinite(value) else default

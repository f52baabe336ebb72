"""Samples in, decisions on any recent window out: the streaming state of the online loop.

:class:`StreamingState` keeps what every incremental form shares (absolute sample indices,
timestamps, invalid samples, breaks, which windows may be classified) and drives one
:class:`~sblr_rt.online.incremental.IncrementalForm` that computes the scores.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from sblr_rt.io.gaps import gap_threshold
from sblr_rt.online.incremental import IncrementalForm, form_class
from sblr_rt.stream.ring_buffer import RingBuffer
from sblr_rt.units import invalid_samples, max_abs_sample
from sblr_rt.utils._docs import fill_doc
from sblr_rt.utils._renamed import renamed_attribute, renamed_keyword

__all__ = ["StreamFeed", "StreamingState", "count_nonfinite"]


def count_nonfinite(chunk: np.ndarray, *, max_abs: float = np.inf) -> int:
    """Return the number of samples (rows) of ``chunk`` holding NaN, ±inf or beyond ``max_abs``.

    ``max_abs`` is the bound of :func:`~sblr_rt.units.max_abs_sample` in the
    chunk's unit (``StreamingState.max_abs``); the default counts NaN and ±inf only.
    """
    if chunk.size == 0:
        return 0
    return int(np.count_nonzero(invalid_samples(chunk, max_abs).any(axis=1)))


@dataclass(frozen=True)
class StreamFeed:
    """How the stream's samples become the model's: its channels picked, its unit rescaled.

    Found when the loop starts (and for each swapped model) from the stream's channels and
    units against the model's (:func:`~sblr_rt.online._startup.stream_feed`).

    Attributes
    ----------
    pick : ndarray of int | None
        The stream's channels the model reads, in the model's order (None: all, as is).
    scale : float | ndarray of shape (n_model_channels,) | None
        Factor from the stream's unit to the model's (None: 1).
    """

    pick: np.ndarray | None = None
    scale: float | np.ndarray | None = None

    def apply(self, data: np.ndarray) -> np.ndarray:
        """Return the model's channels of ``data``, shape (n_samples, n_channels), rescaled.

        A view of ``data`` when nothing is picked nor rescaled.
        """
        picked = data if self.pick is None else data[:, self.pick]
        if self.scale is not None:  # the stream's unit to the model's: once, here
            picked = picked * self.scale
        return picked


class StreamingState:
    """Samples in, decisions on any recent window out: the fast step of the online loop.

    Obtained from :meth:`OnlineClassifier.streaming`. Feed raw chunks with :meth:`push`
    (model channel order); samples get absolute indices from 0. Then
    :meth:`decide(stop) <decide>` classifies the raw window of samples ``stop - n_times``
    up to ``stop - 1``, with the same result (to rounding) as :meth:`OnlineClassifier.step`
    on those samples. Not thread-safe: one thread feeds and decides.

    Invalid samples (NaN, ±inf, or beyond :attr:`max_abs` in magnitude: an amplifier
    glitch, no measurement) are stored as zeros and remembered; a window that holds one,
    or that straddles a break (:meth:`mark_break`, :meth:`skip`), is refused by
    :meth:`why_not`. No filter state needs resetting: the FIR filter forgets everything
    older than ``n_pad`` samples, and that warm-up is part of every window. The filters
    never see an invalid sample, so none of its rounding reaches a later window.

    Parameters
    ----------
    classifier : OnlineClassifier
        The classifier.
    capacity : int | None
        Samples of history kept; default two windows.
    form : str
        A registered incremental form's name (:data:`sblr_rt.online.incremental.FORMS`).
    path : str
        Deprecated alias of ``form``.

    Attributes
    ----------
    n_pushed : int
        Samples pushed (or skipped) so far; the next sample's index.
    n_times_raw : int
        Samples per raw window.
    form : str
        The incremental form's name.
    max_abs : float
        Magnitude beyond which a sample is invalid, in the model's unit
        (:func:`~sblr_rt.units.max_abs_sample` of ``classifier.run_info.unit``).
    """

    def __init__(self, classifier, *, capacity=None, form="projected", path=None):
        form = renamed_keyword("path", "form", path, form, default="projected")
        clf = classifier
        self.classifier = clf
        #: DecisionRule: how this state's scores become decisions (the classifier's).
        self.rule = clf.rule
        self.n_times_raw = clf.n_times_raw
        capacity = 2 * clf.n_times_raw if capacity is None else int(capacity)
        if capacity < clf.n_times_raw:
            raise ValueError(
                f"'capacity' must hold at least one window ({clf.n_times_raw} samples), got "
                f"{capacity}"
            )
        self.capacity = capacity
        cls = form_class(form)
        cls.check_model(clf.scoring)
        self.form = cls.name
        self._form: IncrementalForm = cls(clf.scoring, capacity)
        self._n_ch = len(clf.ch_names)
        self.max_abs = max_abs_sample(clf.run_info.unit)
        self._times = RingBuffer(1, capacity)
        # Recent runs of invalid samples and of lost samples, [first, last] absolute;
        # recent breaks (index of the first sample after a discontinuity). Pruned once
        # older than the history.
        self._bad_runs: deque[list[int]] = deque()
        self._skipped: deque[list[int]] = deque()
        self._breaks: deque[int] = deque()
        # First sample of the current timeline: the stream's clock may jump back, and the
        # held times are sorted from here on only.
        self._timeline_start = 0
        self._cue_tolerance = gap_threshold(clf.sfreq)
        centring = getattr(clf, "run_centring", None)
        # The stream's run: its running mean starts at the calibration reference.
        self.run_centring = None if centring is None else centring.start()

    @property
    def incremental_form(self) -> IncrementalForm:
        """The incremental form computing the scores."""
        return self._form

    path = renamed_attribute("path", "form")
    feature_path = renamed_attribute("feature_path", "incremental_form")

    # ------------------------------------------------------------------ feeding
    @property
    def n_pushed(self) -> int:
        """Samples pushed or skipped so far (the next sample's absolute index)."""
        return self._times.n_pushed

    def push(self, chunk: np.ndarray, timestamps: np.ndarray) -> None:
        """Append raw samples.

        Parameters
        ----------
        chunk : ndarray, shape (n_samples, n_channels)
            Raw samples in the model's channel order (LSL's layout) and unit (the bound
            :attr:`max_abs` is in it).
        timestamps : ndarray, shape (n_samples,)
            Their timestamps.
        """
        n = chunk.shape[0]
        if n == 0:
            return
        if chunk.ndim != 2 or chunk.shape[1] != self._n_ch:
            raise ValueError(
                f"'chunk' must have shape (n_samples, {self._n_ch}), got {chunk.shape}"
            )
        bad = invalid_samples(chunk, self.max_abs).any(axis=1)
        if bad.any():
            self._note_bad(self.n_pushed + np.flatnonzero(bad))
            chunk = np.where(bad[:, None], 0.0, chunk)
        self._form.push(chunk)
        timestamps = np.asarray(timestamps, dtype=np.float64)
        self._note_timeline(timestamps)
        # The ring's one data column holds the timestamps too (a view, no allocation).
        self._times.push(timestamps[:, None], timestamps)
        self._prune()

    def push_with_breaks(self, chunk: np.ndarray, timestamps: np.ndarray, breaks) -> None:
        """Append raw samples with a break before each of the rows ``breaks``.

        Parameters
        ----------
        chunk : ndarray, shape (n_samples, n_channels)
            Raw samples in the model's channel order.
        timestamps : ndarray, shape (n_samples,)
            Their timestamps.
        breaks : sequence of int
            Increasing rows of ``chunk`` that follow a gap (:meth:`mark_break` before each).
        """
        start = 0
        for g in breaks:
            self.push(chunk[start:g], timestamps[start:g])
            self.mark_break()
            start = g
        self.push(chunk[start:], timestamps[start:])

    def _note_bad(self, indices: np.ndarray) -> None:
        runs = self._bad_runs
        cuts = np.flatnonzero(np.diff(indices) > 1)
        for first, last in zip(
            indices[np.r_[0, cuts + 1]], indices[np.r_[cuts, len(indices) - 1]], strict=True
        ):
            if runs and runs[-1][1] + 1 >= first:
                runs[-1][1] = int(last)
            else:
                runs.append([int(first), int(last)])

    def _note_timeline(self, timestamps: np.ndarray) -> None:
        """Start a new timeline where the timestamps step back (before they are pushed)."""
        n = self.n_pushed
        steps = np.diff(timestamps, prepend=self.timestamp(n - 1) if n else timestamps[0])
        back = np.flatnonzero(steps < 0)
        if back.size:
            self._timeline_start = n + int(back[-1])

    def _prune(self) -> None:
        oldest = self.n_pushed - self.capacity
        for runs in (self._bad_runs, self._skipped):
            while runs and runs[0][1] < oldest:
                runs.popleft()
        while self._breaks and self._breaks[0] <= oldest:
            self._breaks.popleft()

    def skip(self, n: int) -> None:
        """Advance by ``n`` samples that were lost (no window may span them)."""
        n = int(n)
        if n <= 0:
            return
        self.mark_break()
        self._skipped.append([self.n_pushed, self.n_pushed + n - 1])
        self._form.skip(n)
        # Lost samples repeat the last time held, so the held times stay sorted.
        last = self.timestamp(self.n_pushed - 1) if self.n_pushed else -np.inf
        held = np.full(n, last)
        self._times.push(held[:, None], held)
        self.mark_break()

    def mark_break(self) -> None:
        """Declare a discontinuity before the next sample (a gap in the stream)."""
        if not self._breaks or self._breaks[-1] != self.n_pushed:
            self._breaks.append(self.n_pushed)
            self._form.mark_break()
        self._prune()

    def settle(self) -> None:
        """Run the form's deferred work now (call when no decision waits, e.g. after one).

        Optional: :meth:`push` runs whatever is still due. Results do not depend on it.
        """
        self._form.settle()

    # ------------------------------------------------------------------ deciding
    def timestamp(self, index: int) -> float:
        """Timestamp of the held sample at absolute ``index``."""
        return self._times.timestamp_at(int(index))

    def trial_stop(self, t_cue: float) -> int | None:
        """Return the ``stop`` index of the trial window of a cue at time ``t_cue``.

        The cue's sample is the held sample nearest to ``t_cue``; the window ends at
        ``onset + round(tmin * sfreq) + n_window`` (exclusive), as in
        :class:`~sblr_rt.bci_model.BCIModel`'s epoch convention.

        Parameters
        ----------
        t_cue : float
            The marker's timestamp (same clock as the samples).

        Returns
        -------
        stop : int | None
            None while no sample at or after ``t_cue`` has arrived; ``-1`` if the samples
            the cue names are not held: it precedes them (overwritten, or before the
            stream, or on the timeline before the stream's clock jumped back), or it falls
            in a gap (no sample within the gap threshold of it).
        """
        n = self.n_pushed
        if n == 0:
            return None
        first = max(0, n - self.capacity, self._timeline_start)
        _, times = self._times.get(first, n)
        if not t_cue <= times[-1]:
            return None
        k = int(np.searchsorted(times, t_cue))
        clf = self.classifier
        if k == 0:
            if t_cue < times[0] - 0.5 / clf.sfreq:
                return -1
            onset = first
        else:
            onset = first + (k if times[k] - t_cue < t_cue - times[k - 1] else k - 1)
        if abs(times[onset - first] - t_cue) > self._cue_tolerance:
            return -1
        # Window [onset + round(tmin sfreq), + n_window); raw epoch n_pad earlier.
        return onset + round(clf.tmin * clf.sfreq) + clf.n_window

    def why_not(self, stop: int) -> str | None:
        """Return why the window ending before ``stop`` cannot be classified, or None.

        Returns
        -------
        reason : str | None
            ``"future"`` (not all samples arrived), ``"unavailable"`` (before the first
            sample, or overwritten), ``"gap"`` (straddles a break), ``"nonfinite"`` (holds
            NaN, inf or a sample beyond :attr:`max_abs`), or None when the window can be
            classified.
        """
        start = stop - self.n_times_raw
        n = self.n_pushed
        if stop > n:
            return "future"
        if start < 0 or start < n - self.capacity:
            return "unavailable"
        if any(start < b < stop for b in self._breaks) or any(
            first < stop and last >= start for first, last in self._skipped
        ):
            return "gap"
        if any(first < stop and last >= start for first, last in self._bad_runs):
            return "nonfinite"
        return None

    def observe_trial(self, stop: int) -> bool:
        """Move the run's mean with the trial window ending before ``stop``, deciding nothing.

        A trial decided early (from the smoothed evidence of sliding windows) still
        contributes its cue's window at ``tmax`` to run centring, exactly as a trial decided
        at ``tmax`` does in :meth:`decide`, so that the run's mean, and the scores measured
        from it, are those of :meth:`BCIModel.decision_function_run
        <sblr_rt.bci_model.BCIModel.decision_function_run>`.

        Returns
        -------
        moved : bool
            False when the model is not run-centred or the window cannot be classified.
        """
        if self.run_centring is None or self.why_not(stop) is not None:
            return False
        self.run_centring.update(self._form.scores(stop))
        return True

    @fill_doc
    def decide(self, stop: int, *, trial: bool = False, cue: str | None = None):
        """Classify the raw window of samples ``stop - n_times`` .. ``stop - 1``.

        Parameters
        ----------
        stop : int
            Absolute index one past the window's last sample.
        %(trial)s
        %(cue)s

        Returns
        -------
        decision : Decision
            As :meth:`OnlineClassifier.step`, with ``window_end`` the last sample's
            timestamp.

        Raises
        ------
        ValueError
            If the window cannot be classified (see :meth:`why_not`).
        """
        reason = self.why_not(stop)
        if reason is not None:
            raise ValueError(
                f"the window ending before sample {stop} cannot be classified: {reason} "
                f"(check StreamingState.why_not first); got 'stop'={stop}"
            )
        scores = self._form.scores(stop)
        if self.run_centring is not None:  # trials move the run's mean, then are scored
            scores = self.run_centring.step(scores) if trial else self.run_centring.adjust(scores)
        return self.rule.decision(scores, self.timestamp(stop - 1), trial, cue)

"""One scheduling step of the online loop, without threads or I/O of its own.

:class:`Scheduler` moves what the EEG source holds into the classifier's streaming state,
finds the gaps (:mod:`sblr_rt.io.gaps`' rule), and decides the windows that are due:
sliding hops and trial windows of cues. The loop's worker thread calls
:meth:`Scheduler.step` over and over; tests call it on an in-memory source.

A decision is only ever made on the samples its cue names. Each cue's time is checked
against the EEG's clock: one stamped more than :data:`CUE_AHEAD` seconds after the newest
sample (or not a finite time) is refused at once; one whose samples are not held (already
overwritten, in a gap, before the stream's clock jumped back) is refused when it is
placed; one still waiting :data:`CUE_EXPIRY` seconds after its window should have been
complete expires. Each is counted (``Telemetry.refused_cues``) and logged. Samples that
arrive in one large chunk are taken in pieces that the streaming state can hold, deciding
the trial windows due after each piece, so that no trial window is overwritten before it is
classified. Windows failing calibration's signal checks (flat, clipped, amplitude;
:mod:`sblr_rt.online.quality`) get no decision, counted by reason, with one warning per
stretch of such windows.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from sblr_rt.io.gaps import find_gaps, gap_threshold
from sblr_rt.online.decision import Decision
from sblr_rt.online.quality import QUALITY_REASONS, WindowQuality
from sblr_rt.online.streaming import StreamFeed, count_nonfinite
from sblr_rt.online.swap import SwapSlot

logger = logging.getLogger("sblr_rt.online")

__all__ = ["CUE_AHEAD", "CUE_EXPIRY", "Outputs", "Scheduler", "stream_label"]

#: The ``Dropped`` field of a sliding window refused for a ``StreamingState.why_not`` reason.
_SLIDING_REASONS = {"gap": "refilling", "unavailable": "gap"}
#: Seconds after the newest EEG sample beyond which a cue's time is refused: a cue program
#: stamps its cues when it shows them, and EEG arrives within a chunk or two of that.
CUE_AHEAD = 30.0
#: Seconds a cue may wait beyond the end of its trial window, in stream time or on the
#: clock, before it expires.
CUE_EXPIRY = 10.0
#: Cues refused that are logged one by one; after these, every 100th.
_CUES_LOGGED = 10


@dataclasses.dataclass(frozen=True)
class Outputs:
    """Where a :class:`Scheduler`'s results go, and the clock that stamps them.

    Parameters
    ----------
    telemetry : TelemetryRecorder
        Where counts, gaps and decisions are recorded.
    clock : callable
        The clock of the stream's timestamps (``sblr_rt.stream.clock.local_clock``), for
        the publish time and the cues' expiry.
    sink : object with ``push(dict)`` | None
        Where decisions are published.
    on_chunk : callable | None
        ``on_chunk(first_index, data, timestamps)`` for every chunk read (the display).
    on_trial : callable | None
        ``on_trial(t_cue, cue, decision)`` after each trial decision (the trial tap).
    """

    telemetry: object
    clock: Callable[[], float]
    sink: object | None = None
    on_chunk: Callable | None = None
    on_trial: Callable | None = None


def stream_label(source) -> str:
    """Return how the logs and errors name the EEG stream of ``source``."""
    name = getattr(source, "name", None)
    return f"EEG stream {name!r}" if name else "the EEG stream"


class Scheduler:
    """Ingest the source's new samples and decide the due windows.

    Parameters
    ----------
    state : StreamingState
        The classifier's streaming state (fed here).
    source : object
        The started EEG source: ``buffer`` (a :class:`~sblr_rt.stream.RingBuffer`:
        ``n_pushed``, ``first_index``, ``get``), optional ``name`` (for messages) and
        ``gap_indices(start, stop)``, the buffer indices of samples that follow a gap as the
        source detected them (:meth:`sblr_rt.stream.LSLSource.gap_indices`; absent:
        :func:`sblr_rt.io.gaps.find_gaps` is applied here).
    feed : StreamFeed
        The stream's channels the model reads and the unit factor, applied as samples
        enter the state.
    outputs : Outputs
        The telemetry, the clock, the sink and the display's and trial tap's hooks.
    hop_samples : int
        Samples between sliding decisions; 0: no sliding decisions.
    evidence : Evidence | None
        The evidence accumulated over a trial (:mod:`sblr_rt.online.evidence`): every
        decision gets ``proba_smoothed`` and ``early``, and a sliding decision may decide
        the open trial early. None: decisions as they come.
    model_version : int
        The version every decision names (``decision["model_version"]``).

    Attributes
    ----------
    swaps : SwapSlot
        A model hand-over put here (:mod:`sblr_rt.online.swap`) is adopted at the start of
        the next :meth:`step`, between two decisions.
    """

    def __init__(
        self,
        state,
        source,
        feed: StreamFeed,
        outputs: Outputs,
        *,
        hop_samples: int = 0,
        evidence=None,
        model_version: int = 0,
    ):
        self.state = state
        self.buffer = source.buffer
        self.gap_indices = getattr(source, "gap_indices", None)
        self.label = stream_label(source)
        self.feed = feed
        self.telemetry = outputs.telemetry
        self.clock = outputs.clock
        self.sink = outputs.sink
        self.on_chunk = outputs.on_chunk
        self.on_trial = outputs.on_trial
        self.hop_samples = int(hop_samples)
        self.evidence = evidence
        self.gap_threshold = gap_threshold(state.classifier.sfreq)
        # Start from the oldest sample held: samples that arrived while the loop was
        # still connecting are classified too (cues at the very start need them).
        self.n_in = self.buffer.first_index  # raw index of the next sample to read
        self.offset = self.n_in  # raw index of the state's sample 0
        self.last_ts: float | None = None
        self.next_slide: int | None = None  # state index of the next sliding decision
        self.pending_cues: list[tuple[float, str]] = []
        self.decided_early: dict[tuple[float, str], Decision] = {}  # cue -> early decision
        self.halted: str | None = None
        self.model_version = int(model_version)
        self.swaps = SwapSlot()
        clf = state.classifier
        # Seconds from a cue to its trial window's last sample.
        self.cue_span = (round(clf.tmin * clf.sfreq) + clf.n_window) / clf.sfreq
        # Samples ingested at once: the state keeps a window and this much more.
        self.piece = max(1, state.capacity - state.n_times_raw)
        self.quality = WindowQuality(clf, state.capacity)
        self.quality_base = self.n_in  # raw index of the quality ring's sample 0
        self._stretch: tuple[str, int] | None = None  # (reason, windows) of refusals
        self._n_cue_refusals = 0
        self._impossible_burst = False  # the last chunk held a sample beyond max_abs

    def _note_impossible(self, picked, n_impossible: int) -> None:
        """Warn once per burst of finite samples beyond the bound (counted as non-finite)."""
        if n_impossible and not self._impossible_burst:
            finite = np.where(np.isfinite(picked), np.abs(picked), 0.0)
            _, channel = np.unravel_index(np.argmax(finite), finite.shape)
            logger.warning(
                "%s: %d samples beyond ±%g in the model's unit (1 V: no EEG amplifier's range), "
                "up to %.3g on %s: not measurements; no decision from a window holding one, "
                "as for NaN (counted as nonfinite); one message per burst.",
                self.label,
                n_impossible,
                self.state.max_abs,
                float(finite.max()),
                self.state.classifier.ch_names[channel],
            )
        self._impossible_burst = bool(n_impossible)

    def gaps_in(self, start: int, stop: int, timestamps, last: float | None):
        """Return the rows of raw samples ``[start, stop)`` that follow a gap.

        The source's own gaps when it tracks them (one rule, one count), else
        :func:`~sblr_rt.io.gaps.find_gaps` on ``timestamps`` after ``last``.
        """
        if self.gap_indices is not None:
            return self.gap_indices(start, stop) - start
        return find_gaps(timestamps, last=last, threshold=self.gap_threshold)

    # ------------------------------------------------------------------------------------
    def step(self, cues=()) -> int:
        """Ingest the new samples, then decide the due trial windows and sliding hop.

        Parameters
        ----------
        cues : iterable of (float, str)
            New cues (timestamp, marker value) that start a trial.

        Returns
        -------
        n_new : int
            Samples ingested.
        """
        prepared = self.swaps.take()
        if prepared is not None:
            self._adopt(prepared)
        cues = self._admit(cues)
        if self.evidence is not None:
            for t, value in cues:
                self.evidence.cue(t, value)
        self.pending_cues.extend(cues)
        n_new = 0
        while True:  # a large chunk in pieces, the trial windows decided between them
            n = self.ingest(self.piece)
            n_new += n
            if self.pending_cues:
                self.trial_decisions_due()
            if n < self.piece:
                break
        if self.hop_samples and n_new:
            self.slide()
        self.state.settle()  # the form's deferred work, now that the decisions are out
        return n_new

    def _admit(self, cues) -> list[tuple[float, str]]:
        """Return the cues whose time the stream can hold; refuse the others."""
        buffer, out = self.buffer, []
        newest = buffer.timestamp_at(buffer.n_pushed - 1) if buffer.n_pushed else None
        for t, value in cues:
            t = float(t)
            if not math.isfinite(t):
                self._refuse_cue(t, value, "far", "its time is not finite")
            elif newest is not None and t > newest + CUE_AHEAD:
                self._refuse_far(t, value, newest)
            else:
                out.append((t, value))
        return out

    def _refuse_far(self, t: float, value, newest: float) -> None:
        self._refuse_cue(
            t, value, "far",
            f"stamped {t - newest:.4g} s after the newest EEG sample (more than "
            f"{CUE_AHEAD:g} s: the cue's clock is not the stream's)",
        )  # fmt: skip

    def _refuse_cue(self, t: float, value, reason: str, why: str) -> None:
        self.telemetry.refuse_cue(reason)
        if self.evidence is not None:
            self.evidence.forget(t, value)
        self.decided_early.pop((t, value), None)
        self._n_cue_refusals += 1
        n = self._n_cue_refusals
        if n <= _CUES_LOGGED or n % 100 == 0:
            logger.warning(
                "No decision for the trial at cue %r (t = %.4f): %s.%s",
                value,
                t,
                why,
                f" {n} cues refused so far; every 100th is logged from now."
                if n == _CUES_LOGGED
                else "",
            )

    def next_target(self) -> int:
        """Raw ``n_pushed`` worth waking up for (the next hop's last sample)."""
        if self.next_slide is not None:
            return max(self.n_in + 1, self.next_slide + self.offset)
        return self.n_in + (self.hop_samples or 1)

    def watch(self, status: dict) -> None:
        """Halt deciding while the source says its measured rate is far from the declared one.

        Parameters
        ----------
        status : dict
            The source's ``status()``; ``rate_far_off`` (absent: False) and
            ``effective_sfreq`` are read.
        """
        halted = None
        if status.get("rate_far_off", False):
            rate = status.get("effective_sfreq")
            measured = "unknown" if rate is None else f"{rate:.4g} Hz"
            halted = (
                f"the measured rate ({measured}) is far from the declared "
                f"{self.state.classifier.sfreq:g} Hz"
            )
        if bool(halted) != bool(self.halted):  # once per halt, not per new measurement
            if halted:
                logger.error("%s: no decisions while %s.", self.label, halted)
            else:
                logger.info("%s: the rate is back to normal; deciding again.", self.label)
        self.halted = halted
        self.telemetry.set_halted(halted)

    def _adopt(self, prepared) -> None:
        """Take over a swapped model's state, caught up with the samples ingested since."""
        old = self.model_version
        try:
            self.feed_state(
                prepared.state, prepared.n_in, self.n_in, prepared.feed, prepared.last_ts
            )
        except ValueError:
            logger.warning(
                "Model version %d not adopted: the samples to catch up were overwritten; "
                "still deciding with version %d.",
                prepared.version,
                old,
            )
            return
        if self.next_slide is not None:  # state indices, re-based
            self.next_slide += self.offset - prepared.offset
        self.state, self.offset, self.feed = prepared.state, prepared.offset, prepared.feed
        self.model_version = prepared.version
        if self.evidence is not None:  # the new model's probabilities, the new calibration
            self.evidence.calibration = prepared.classifier.probability
        logger.info("Switched from model version %d to %d.", old, self.model_version)
        self.telemetry.set_model_version(self.model_version, _prior_share(prepared.classifier))

    def feed_state(self, state, start: int, stop: int, feed, last_ts: float | None):
        """Push raw samples ``[start, stop)`` of the buffer into another streaming state.

        A swapped model's state (:func:`~sblr_rt.online.swap.prepare_swap`, and its catch-up
        when adopted), with the gaps found by :meth:`gaps_in` but not logged or counted
        again: :meth:`ingest` did when it took these samples.

        Parameters
        ----------
        state : StreamingState
            The state to feed.
        start, stop : int
            Raw (buffer) indices of the samples.
        feed : StreamFeed
            The stream's channels in that state's model's order, and the unit factor.
        last_ts : float | None
            Timestamp of the sample before ``start`` (None: unknown).

        Returns
        -------
        last_ts : float | None
            Timestamp of the last sample fed.

        Raises
        ------
        ValueError
            If the buffer no longer holds the samples.
        """
        if stop <= start:
            return last_ts
        chunk, ts = self.buffer.get(start, stop)
        state.push_with_breaks(feed.apply(chunk.T), ts, self.gaps_in(start, stop, ts, last_ts))
        return float(ts[-1])

    # ------------------------------------------------------------------------------------
    def ingest(self, limit: int | None = None) -> int:
        """Move the samples that arrived since the last call (at most ``limit``) into the state."""
        buffer, state = self.buffer, self.state
        n_pushed = buffer.n_pushed
        if n_pushed <= self.n_in:
            return 0
        first = buffer.first_index
        if self.n_in < first:  # fell behind the raw buffer: skip to what is left
            lost = first - self.n_in
            logger.warning("The online loop fell behind the stream: %d samples skipped.", lost)
            state.skip(lost)
            self.quality.skip(lost)
            self.n_in = first
            self.last_ts = None
            self.telemetry.count("overruns")
        if limit is not None:
            n_pushed = min(n_pushed, self.n_in + int(limit))
        try:
            chunk, ts = buffer.get(self.n_in, n_pushed)
        except ValueError:  # overwritten between the two reads; catch up next cycle
            return 0
        first_index, self.n_in = self.n_in, n_pushed
        data = chunk.T  # (n_samples, n_channels) view
        if self.on_chunk is not None:
            self.on_chunk(first_index, data, ts)
        prev, self.last_ts = self.last_ts, float(ts[-1])
        gap_at = self.gaps_in(first_index, n_pushed, ts, prev)
        picked = self.feed.apply(data)
        n_bad = count_nonfinite(picked, max_abs=state.max_abs)
        if n_bad:
            self.telemetry.count("nonfinite_samples", n_bad)
            self._note_impossible(picked, n_bad - count_nonfinite(picked))
        else:
            self._impossible_burst = False
        self.quality.push(picked)
        for g in gap_at:
            t_before = ts[g - 1] if g > 0 else prev
            logger.warning(
                "Gap of %.3f s in %s; decisions resume once a full window follows.",
                ts[g] - t_before,
                self.label,
            )
            self.telemetry.gap(t_before, ts[g])
        state.push_with_breaks(picked, ts, gap_at)
        return n_pushed - first_index

    def trial_decisions_due(self) -> None:
        """Decide the trial windows whose samples have all arrived; refuse the others.

        A cue whose samples are not held is refused (``unavailable``); one still waiting
        :data:`CUE_EXPIRY` seconds after its window should have ended, in the stream's
        time or on the clock, expires.
        """
        state, keep, buffer = self.state, [], self.buffer
        # Received, maybe not ingested yet (a large chunk is taken in pieces).
        received = buffer.timestamp_at(buffer.n_pushed - 1) if buffer.n_pushed else -math.inf
        now = max(received, self.clock())
        for t, value in self.pending_cues:
            if math.isfinite(received) and t > received + CUE_AHEAD:  # came before the EEG
                self._refuse_far(t, value, received)
                continue
            stop = state.trial_stop(t)
            if stop is None or stop > state.n_pushed:  # not all samples arrived yet
                waited = now - (t + self.cue_span)
                if received < t + self.cue_span and waited > CUE_EXPIRY:
                    self._refuse_cue(
                        t, value, "expired",
                        f"its window should have been complete {waited:.4g} s ago (more "
                        f"than {CUE_EXPIRY:g} s); the stream never delivered it",
                    )  # fmt: skip
                else:
                    keep.append((t, value))
                continue
            if stop < 0:
                self._refuse_cue(
                    t, value, "unavailable",
                    "the samples it names are not held (overwritten already, before the "
                    "stream, in a gap, or before the stream's clock jumped back)",
                )  # fmt: skip
                continue
            early = self.decided_early.pop((t, value), None)
            if early is not None:  # published early; the tap still gets the tmax window
                state.observe_trial(stop)  # and run centring its trial window, as offline
                if self.on_trial is not None:
                    window = dataclasses.replace(
                        early,
                        window_start_index=stop - state.n_times_raw + self.offset,
                        window_stop_index=stop + self.offset,
                    )
                    self.on_trial(t, value, window)
                continue
            decision = self.decide(stop, trial=True, cue=value)
            if decision is not None and self.on_trial is not None:
                self.on_trial(t, value, decision)
        self.pending_cues = keep

    def slide(self) -> None:
        """Decide the latest window if a hop is due.

        Older due hops are skipped: counted as ``refilling`` when their window straddles a
        gap (it would have been refused anyway), else as ``behind``.
        """
        state, hop = self.state, self.hop_samples
        n = state.n_pushed
        if self.next_slide is None:
            self.next_slide = max(n, state.n_times_raw)
        if n < self.next_slide:
            return
        behind = (n - self.next_slide) // hop
        if behind and self.halted:
            self.telemetry.drop("halted", behind)
        elif behind:
            stops = range(self.next_slide, self.next_slide + behind * hop, hop)
            refilling = sum(state.why_not(stop) == "gap" for stop in stops)
            if refilling:
                self.telemetry.drop("refilling", refilling)
            if behind - refilling:
                self.telemetry.drop("behind", behind - refilling)
        self.decide(n, trial=False, cue=None)
        self.next_slide = n + hop - (n - self.next_slide) % hop

    def decide(self, stop: int, *, trial: bool, cue) -> Decision | None:
        """Classify the window ending before ``stop`` and publish it, or count why not."""
        state = self.state
        reason = "halted" if self.halted else state.why_not(stop)
        if reason is None:
            reason = self._signal_check(stop)
        decision = None
        if reason is None:
            t0 = time.perf_counter()
            decision = state.decide(stop, trial=trial, cue=cue)
            step_time = time.perf_counter() - t0
            if decision.label is None:  # non-finite scores are never published
                reason, decision = "nonfinite", None
        if reason is not None:
            self._refused(stop, reason, trial, cue)
            return None
        decision = dataclasses.replace(decision, model_version=self.model_version)
        early = None
        if self.evidence is not None:
            smoothed, early = self.evidence.add(decision)
            decision = dataclasses.replace(decision, proba_smoothed=smoothed, early=False)
        decision = self._publish(decision, stop, step_time)
        if early is not None:  # the smoothed evidence decided the open trial
            smoothed = decision.proba_smoothed
            label = max(smoothed, key=smoothed.__getitem__)
            early_decision = dataclasses.replace(
                decision, label=label, trial=True, cue=early[1], early=True
            )
            # The cue stays pending until its tmax window is in, so that the trial tap
            # (adaptation) gets the same epoch as a trial decided at tmax; no second
            # decision is published for it.
            self.decided_early[early] = self._publish(early_decision, stop, step_time)
        return decision

    def _publish(self, decision: Decision, stop: int, step_time: float) -> Decision:
        """Push ``decision`` to the sink; record and return it with its indices and time."""
        if self.sink is not None:
            self.sink.push(decision.public())
        published = self.clock()
        decision = dataclasses.replace(
            decision,
            window_start_index=stop - self.state.n_times_raw + self.offset,
            window_stop_index=stop + self.offset,
            published=published,
            step_time=step_time,
        )
        self.telemetry.decision(decision, published, published - decision.window_end)
        return decision

    def _signal_check(self, stop: int) -> str | None:
        """Apply calibration's signal checks to the window; warn once per bad stretch."""
        reason = self.quality.reason(stop + self.offset - self.quality_base)
        stretch = self._stretch
        if reason is None:
            if stretch is not None:
                self._stretch = None
                logger.info(
                    "%s: the model's channels are usable again; deciding again (%d windows "
                    "refused as %s).",
                    self.label,
                    stretch[1],
                    stretch[0],
                )
            return None
        if stretch is None or stretch[0] != reason:
            names = self.quality.channels(
                stop + self.offset - self.quality_base, reason, self.state.classifier.ch_names
            )
            logger.warning(
                "%s: no decisions while the window has %s channels (%s), as calibration "
                "rejects such epochs; one message per stretch.",
                self.label,
                reason,
                ", ".join(names[:10]) + (f" and {len(names) - 10} more" * (len(names) > 10)),
            )
            self._stretch = (reason, 1)
        else:
            self._stretch = (reason, stretch[1] + 1)
        return reason

    def _refused(self, stop: int, reason: str, trial: bool, cue) -> None:
        state = self.state
        if reason in QUALITY_REASONS:  # counted by reason, sliding and trial windows alike
            self.telemetry.drop(reason)
            return
        if not trial:  # a sliding window straddling a gap: refilling after it
            self.telemetry.drop(_SLIDING_REASONS.get(reason, reason))
            return
        self.telemetry.drop("trials")
        logger.warning(
            "No decision for the trial at cue %r: window %s (samples %d..%d; held %d..%d).",
            cue,
            reason,
            stop - state.n_times_raw + self.offset,
            stop - 1 + self.offset,
            max(0, state.n_pushed - state.capacity) + self.offset,
            state.n_pushed - 1 + self.offset,
        )


def _prior_share(classifier) -> float | None:
    """Return how much of a classifier's model is still a prior's (None: no prior)."""
    return getattr(getattr(classifier, "model", None), "prior_share", None)

"""What the online loop reports: counters, latency statistics and the frozen snapshot.

:class:`TelemetryRecorder` is written by the loop's worker (thread-safe, bounded);
:meth:`OnlineLoop.snapshot` freezes it into one :class:`Telemetry`, which the dashboard and
the command line read by attribute.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque

import numpy as np

from sblr_rt.io.labels import ChannelMatch
from sblr_rt.utils._renamed import renamed_attribute

__all__ = [
    "Dropped",
    "RawTraces",
    "RecentValues",
    "RefusedCues",
    "Stats",
    "StreamTelemetry",
    "Telemetry",
    "TelemetryRecorder",
]

#: Why a window gave no decision (keys of :class:`Dropped`).
DROP_REASONS = (
    "gap", "refilling", "nonfinite", "behind", "trials", "halted", "flat", "clipped",
    "amplitude",
)  # fmt: skip
#: Why a cue got no trial decision (keys of :class:`RefusedCues`).
CUE_REFUSALS = ("far", "unavailable", "expired")


@dataclasses.dataclass(frozen=True)
class Stats:
    """Summary of recent values (seconds): ``n`` and ``p50``, ``p99``, ``max``, ``mean``."""

    n: int = 0
    p50: float = float("nan")
    p99: float = float("nan")
    max: float = float("nan")
    mean: float = float("nan")

    @property
    def caveat(self) -> str:
        """Why latencies read below zero, or ``""``.

        A latency is the decision's publication on this computer's LSL clock minus its
        window's end on the stream's timestamps; it is negative when the stream stamps its
        samples ahead of that clock (mne-lsl's ``PlayerLSL`` stamps a chunk's last sample
        one chunk ahead), and then measures the stamps, not the loop.

        Examples
        --------
        >>> Stats(n=10, p50=-0.095).caveat
        "the stream's timestamps run ahead of this computer's clock"
        >>> Stats(n=10, p50=0.004).caveat
        ''
        """
        if self.n and self.p50 < 0:
            return "the stream's timestamps run ahead of this computer's clock"
        return ""


@dataclasses.dataclass(frozen=True)
class Dropped:
    """Windows given no decision, by reason.

    ``gap`` (the window's samples are no longer held: overwritten, or before the first),
    ``refilling`` (sliding hops while the window refills after a gap: it still straddles
    the gap, whether the hop was classified or skipped), ``nonfinite`` (it held NaN, inf
    or samples beyond 1 V, which no amplifier measures, or gave non-finite scores),
    ``behind`` (hops skipped: the samples of several hops arrived at once, only the latest
    window is classified), ``trials`` (trial windows
    that could not be classified), ``halted`` (hops skipped while deciding was halted, see
    :attr:`Telemetry.halted`); then the signal checks of calibration's epoch rejection
    (:mod:`sblr_rt.online.quality`), sliding and trial windows alike: ``flat`` (a used
    channel's peak-to-peak at most ``flat``: a dead or railed electrode), ``clipped`` (a
    used channel stuck at its extreme for ``clip_run`` samples), ``amplitude`` (beyond
    ``reject`` peak-to-peak).
    """

    gap: int = 0
    refilling: int = 0
    nonfinite: int = 0
    behind: int = 0
    trials: int = 0
    halted: int = 0
    flat: int = 0
    clipped: int = 0
    amplitude: int = 0

    @property
    def total(self) -> int:
        """All windows given no decision."""
        return sum(getattr(self, reason) for reason in DROP_REASONS)


@dataclasses.dataclass(frozen=True)
class RefusedCues:
    """Cues given no trial decision before their window was classified, by reason.

    ``far`` (stamped further than ``CUE_AHEAD`` seconds after the stream's newest sample,
    or not a finite time), ``unavailable`` (the samples it names are not held: overwritten
    already, before the stream started, in a gap, or on the timeline before the stream's
    clock jumped back), ``expired`` (still waiting ``CUE_EXPIRY`` seconds after its
    window should have been complete). See :mod:`sblr_rt.online.scheduler`.
    """

    far: int = 0
    unavailable: int = 0
    expired: int = 0

    @property
    def total(self) -> int:
        """All cues refused."""
        return sum(getattr(self, reason) for reason in CUE_REFUSALS)


@dataclasses.dataclass(frozen=True)
class StreamTelemetry:
    """The EEG stream as the loop sees it (NaN/None/0 until the source is there).

    ``state`` is the source's: ``"connecting"``, ``"streaming"``, ``"stalled"`` (open but
    silent) or ``"lost"`` (default: ``"streaming"`` if ``connected``, else ``"lost"``);
    ``rate_ok`` (None until measured) and ``rate_far_off`` are its
    verdict on ``effective_sfreq`` against the declared ``sfreq``; ``refused`` why a returning
    stream was not taken (None otherwise). :attr:`summary` says all of it in a few words for
    a status line.
    """

    name: str | None = None
    source_id: str | None = None
    connected: bool = False
    sfreq: float = float("nan")
    n_channels: int = 0
    ch_names: tuple[str, ...] = ()
    n_samples: int = 0
    buffer_fill: float = 0.0
    buffer_seconds: float = 0.0
    effective_sfreq: float = float("nan")
    n_reconnects: int = 0
    state: str | None = None
    rate_ok: bool | None = None
    rate_far_off: bool = False
    refused: str | None = None

    def __post_init__(self) -> None:
        if self.state is None:  # a source that does not say: from the connection
            object.__setattr__(self, "state", "streaming" if self.connected else "lost")

    @property
    def summary(self) -> str:
        """The stream's state for a status line.

        ``"rate far off (x Hz measured, y declared)"`` while the source says so, else the
        state (``"streaming"``, ``"stalled"``, ``"lost"``, ``"connecting"``); a lost
        stream whose return was refused says why (``"lost (back but refused: ...)"``).
        """
        if self.state == "lost" and self.refused:
            return f"lost (back but refused: {self.refused})"
        if self.state in ("lost", "stalled", "connecting"):
            return self.state
        if self.rate_far_off:
            measured = self.effective_sfreq
            measured = f"{measured:.4g}" if np.isfinite(measured) else "?"
            return f"rate far off ({measured} Hz measured, {self.sfreq:g} declared)"
        return self.state

    @staticmethod
    def state_of(status: dict, connected: bool) -> dict:
        """Return the ``state``, ``rate_ok``, ``rate_far_off``, ``refused`` fields of a status.

        A source without ``state`` in its status is ``"streaming"`` while connected,
        ``"lost"`` otherwise.
        """
        state = status.get("state") or ("streaming" if connected else "lost")
        rate_ok = status.get("rate_ok")
        refused = status.get("refused")
        return {
            "state": str(state),
            "rate_ok": None if rate_ok is None else bool(rate_ok),
            "rate_far_off": bool(status.get("rate_far_off", False)),
            "refused": None if refused is None else str(refused),
        }

    @classmethod
    def from_source(cls, source, status: dict, connected: bool) -> StreamTelemetry:
        """Describe a started source (``buffer``, ``sfreq``, ``ch_names``) and its status."""
        buffer = source.buffer
        sfreq = float(source.sfreq)
        return cls(
            name=getattr(source, "name", None),
            source_id=getattr(source, "source_id", None),
            connected=connected,
            sfreq=sfreq,
            n_channels=int(source.n_channels),
            ch_names=tuple(source.ch_names),
            n_samples=int(buffer.n_pushed),
            buffer_fill=buffer.n_available / buffer.capacity,
            buffer_seconds=buffer.capacity / sfreq,
            effective_sfreq=status.get("effective_sfreq") or float("nan"),
            n_reconnects=status.get("n_reconnects", 0),
            **cls.state_of(status, connected),
        )


@dataclasses.dataclass(frozen=True)
class RawTraces:
    """Decimated raw samples for display: ``data`` (n_channels, n_kept) float32, ``times``.

    ``unit`` is the samples' unit when known (``""`` otherwise).
    """

    data: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0), np.float32))
    times: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    ch_names: tuple[str, ...] = ()
    sfreq: float = float("nan")
    unit: str = ""


@dataclasses.dataclass(frozen=True)
class Telemetry:
    """One snapshot of the online loop (or of a bare stream, for the dashboard).

    Attributes
    ----------
    time : float
        LSL clock time of the snapshot.
    running : bool
        Whether the worker runs.
    mode, form : str | None
        ``"sliding"``/``"trial"``; the incremental form's name
        (:data:`sblr_rt.online.incremental.FORMS`). ``path`` is its deprecated alias.
    hop : float
        Seconds between sliding decisions.
    stream : StreamTelemetry
        The EEG stream.
    raw : RawTraces
        Decimated raw samples of the selected channels.
    decisions, trials : tuple of Decision
        Recent decisions (all; trial ones), oldest first
        (:class:`~sblr_rt.online.decision.Decision`).
    cues : tuple of (float, str)
        Recent markers received.
    step_time, latency : Stats
        Seconds per decision; from ``window_end`` to the push on the outlet.
    decisions_per_second : float
        Over the statistics' horizon.
    n_decisions, n_trial_decisions, n_cues : int
        Totals since start.
    gaps : tuple of (float, float)
        Recent gaps (timestamps of the last sample before and the first after).
    n_gaps : int
        Gaps since start: the one count (:mod:`sblr_rt.io.gaps`' rule).
    dropped : Dropped
        Windows given no decision, by reason.
    refused_cues : RefusedCues
        Cues given no trial decision, by reason.
    n_nonfinite_samples : int
        Samples received with NaN, inf or a value beyond 1 V (in the model's unit:
        :func:`~sblr_rt.units.max_abs_sample`) in one of the model's channels.
    n_overruns : int
        Times the raw buffer overwrote samples the loop had not read.
    halted : str | None
        Why the loop does not decide now (e.g. the measured rate is far from the
        declared one), None while it decides.
    worker_cpu : float
        CPU seconds of the worker per wall second since start.
    channels : ChannelMatch | None
        Which stream channel feeds each model channel and by which label rule
        (:class:`sblr_rt.io.labels.ChannelMatch`; its ``summary`` says it in one line);
        None before the loop started.
    model_version : int
        The model version deciding now (each decision names its own).
    prior_share : float | None
        How much of that model's decision is still a prior across people's
        (:attr:`BCIModel.prior_share <sblr_rt.bci_model.BCIModel.prior_share>`); None
        for a model without a prior.
    adaptation : dict | None
        The session's adaptation status (version, trials, refit running or failed,
        last error), None without ``--adapt``.
    run_centring : dict | None
        Unsupervised run centring (:mod:`sblr_rt.model.run_centring`): ``n_trials`` in
        this run's mean so far and the calibration reference's ``warmup`` weight; None
        when the model is not run-centred or centring is off.
    """

    time: float = float("nan")
    running: bool = False
    mode: str | None = None
    hop: float = float("nan")
    form: str | None = None
    stream: StreamTelemetry = StreamTelemetry()
    raw: RawTraces = dataclasses.field(default_factory=RawTraces)
    decisions: tuple = ()
    trials: tuple = ()
    cues: tuple = ()
    step_time: Stats = Stats()
    latency: Stats = Stats()
    decisions_per_second: float = 0.0
    n_decisions: int = 0
    n_trial_decisions: int = 0
    n_cues: int = 0
    gaps: tuple = ()
    n_gaps: int = 0
    dropped: Dropped = Dropped()
    refused_cues: RefusedCues = RefusedCues()
    n_nonfinite_samples: int = 0
    n_overruns: int = 0
    halted: str | None = None
    worker_cpu: float = 0.0
    channels: ChannelMatch | None = None
    model_version: int = 0
    prior_share: float | None = None
    adaptation: dict | None = None
    run_centring: dict | None = None

    path = renamed_attribute("path", "form")


class RecentValues:
    """Values with their times, keeping only the last ``horizon`` seconds.

    Parameters
    ----------
    horizon : float
        Seconds of history kept.
    maxlen : int
        Hard bound on the number of values kept, whatever their times.
    """

    def __init__(self, horizon: float = 60.0, maxlen: int = 100_000) -> None:
        self.horizon = float(horizon)
        self._times: deque[float] = deque(maxlen=maxlen)
        self._values: deque[float] = deque(maxlen=maxlen)

    def add(self, t: float, value: float) -> None:
        """Record ``value`` observed at time ``t`` (seconds) and drop what is too old."""
        self._times.append(t)
        self._values.append(value)
        self._prune(t)

    def _prune(self, now: float) -> None:
        limit = now - self.horizon
        while self._times and self._times[0] < limit:
            self._times.popleft()
            self._values.popleft()

    def summary(self, now: float) -> Stats:
        """Summarize the values of the last ``horizon`` seconds (NaN stats when none)."""
        self._prune(now)
        n = len(self._values)
        if n == 0:
            return Stats()
        values = np.fromiter(self._values, dtype=float, count=n)
        p50, p99 = np.percentile(values, [50.0, 99.0])
        return Stats(n, float(p50), float(p99), float(values.max()), float(values.mean()))

    def rate(self, now: float) -> float:
        """Return the number of values per second over the last ``horizon`` seconds."""
        self._prune(now)
        n = len(self._times)
        if n < 2:
            return 0.0
        span = max(now - self._times[0], 1e-9)
        return n / span if span < self.horizon else n / self.horizon


class TelemetryRecorder:
    """The loop's counters and recent history, written by the worker, read by snapshots.

    Parameters
    ----------
    history_seconds : float
        Horizon of the latency, step-time and rate statistics.
    max_history : int
        Decisions, trial decisions, cues and gaps kept.
    """

    def __init__(self, history_seconds: float = 60.0, max_history: int = 500) -> None:
        self.lock = threading.Lock()
        self.decisions: deque = deque(maxlen=max_history)
        self.trial_decisions: deque = deque(maxlen=max_history)
        self.pending: deque = deque(maxlen=100_000)  # for OnlineLoop.pop_decisions()
        self.cues: deque = deque(maxlen=max_history)
        self.gaps: deque = deque(maxlen=max_history)
        self.step_times = RecentValues(history_seconds)
        self.latencies = RecentValues(history_seconds)
        self.decision_times = RecentValues(history_seconds)
        self.counts = dict.fromkeys(
            ("decisions", "trial_decisions", "cues", "gaps", "nonfinite_samples", "overruns"),
            0,
        )
        self.dropped = dict.fromkeys(DROP_REASONS, 0)
        self.refused_cues = dict.fromkeys(CUE_REFUSALS, 0)
        self.halted: str | None = None
        self.model_version = 0
        self.prior_share: float | None = None
        self.adaptation: dict | None = None

    def count(self, key: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``key``."""
        with self.lock:
            self.counts[key] += n

    def drop(self, reason: str, n: int = 1) -> None:
        """Count ``n`` windows given no decision for ``reason`` (one of ``DROP_REASONS``)."""
        with self.lock:
            self.dropped[reason] += n

    def refuse_cue(self, reason: str) -> None:
        """Count a cue given no trial decision for ``reason`` (one of ``CUE_REFUSALS``)."""
        with self.lock:
            self.refused_cues[reason] += 1

    def set_halted(self, reason: str | None) -> None:
        """Say why the loop does not decide now (None: it decides)."""
        with self.lock:
            self.halted = reason

    def set_model_version(self, version: int, prior_share: float | None = None) -> None:
        """Say which model version decides now, and how much of it is still a prior's."""
        with self.lock:
            self.model_version = int(version)
            self.prior_share = None if prior_share is None else float(prior_share)

    def set_adaptation(self, status: dict | None) -> None:
        """Keep the adaptation's status (a plain dict, copied) for the snapshots."""
        with self.lock:
            self.adaptation = None if status is None else dict(status)

    def gap(self, t_before: float, t_after: float) -> None:
        """Record a gap between two sample times."""
        with self.lock:
            self.counts["gaps"] += 1
            self.gaps.append((float(t_before), float(t_after)))

    def cue(self, t: float, value: str) -> None:
        """Record a marker received."""
        with self.lock:
            self.cues.append((float(t), str(value)))
            self.counts["cues"] += 1

    def decision(self, decision, published: float, latency: float) -> None:
        """Record a published decision (with its ``step_time`` and ``trial``)."""
        with self.lock:
            self.step_times.add(published, decision.step_time)
            self.latencies.add(published, latency)
            self.decision_times.add(published, 1.0)
            self.decisions.append(decision)
            self.pending.append(decision)
            if decision.trial:
                self.trial_decisions.append(decision)
                self.counts["trial_decisions"] += 1
            self.counts["decisions"] += 1

    def pop_pending(self) -> list:
        """Return and forget the decisions recorded since the last call."""
        with self.lock:
            out = list(self.pending)
            self.pending.clear()
        return out

    def freeze(self, now: float, n_decisions: int | None = None, **fields) -> Telemetry:
        """Return a :class:`Telemetry` of the counters now, plus ``fields``.

        Parameters
        ----------
        now : float
            The current time (the clock of the recorded times).
        n_decisions : int | None
            Keep only the last ``n_decisions`` decisions and trial decisions.
        **fields
            The other :class:`Telemetry` fields (stream, raw, mode, ...).
        """
        with self.lock:
            decisions, trials = tuple(self.decisions), tuple(self.trial_decisions)
            if n_decisions is not None:
                decisions = decisions[-n_decisions:] if n_decisions else ()
                trials = trials[-n_decisions:] if n_decisions else ()
            c = dict(self.counts)
            return Telemetry(
                time=now,
                decisions=decisions,
                trials=trials,
                cues=tuple(self.cues),
                step_time=self.step_times.summary(now),
                latency=self.latencies.summary(now),
                decisions_per_second=self.decision_times.rate(now),
                n_decisions=c["decisions"],
                n_trial_decisions=c["trial_decisions"],
                n_cues=c["cues"],
                gaps=tuple(self.gaps),
                n_gaps=c["gaps"],
                dropped=Dropped(**self.dropped),
                refused_cues=RefusedCues(**self.refused_cues),
                n_nonfinite_samples=c["nonfinite_samples"],
                n_overruns=c["overruns"],
                halted=self.halted,
                model_version=self.model_version,
                prior_share=self.prior_share,
                adaptation=None if self.adaptation is None else dict(self.adaptation),
                **fields,
            )

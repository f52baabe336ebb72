"""The online loop: an LSL EEG stream in, one decision per hop (and per cue) out.

:class:`OnlineLoop` connects to the EEG stream (and, in trial mode, to the marker stream),
checks the stream's channels and rate against the model, and runs a worker thread that

1. moves the samples that arrived since the last cycle from the source's ring buffer into
   the classifier's streaming state (projected onto the model's spatial factors, or
   band-pass filtered once per sample: :meth:`OnlineClassifier.streaming`),
2. every ``hop`` seconds of stream time classifies the latest window,
3. in trial mode also classifies the window that ends at each cue's ``tmax``,
4. pushes each decision as JSON to the ``SBLR-Predictions`` outlet.

The worker never holds a lock that the LSL reader or the outlet waits on for longer than a
copy of the new samples. Windows that hold a gap in the stream or samples with NaN give no
decision (counted in :meth:`OnlineLoop.snapshot`); when the stream vanishes the loop says
so in the log and resumes on its own when the stream returns. An exception in the worker
thread is logged, stops the worker, and is raised again by the next public call.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque

import numpy as np

from sblr_rt.io.jsonable import dumps
from sblr_rt.online._stats import DecimatedRing, RecentValues
from sblr_rt.online.classifier import OnlineClassifier, check_stream_info, public_decision

logger = logging.getLogger("sblr_rt.online")

__all__ = ["OnlineLoop", "local_clock"]


def local_clock() -> float:
    """Return the LSL clock (seconds).

    liblsl's clock is ``std::chrono::steady_clock``, which is the clock of
    :func:`time.monotonic` on Linux, macOS and Windows alike; using it here keeps pylsl out
    of this module.
    """
    return time.monotonic()


_MODES = ("sliding", "trial")


class OnlineLoop:
    """Classify an LSL EEG stream in real time and publish the decisions.

    Parameters
    ----------
    model : BCIModel | OnlineClassifier
        The trained model (e.g. from :func:`sblr_rt.load_model`), or a classifier built on
        one.
    stream : str | None
        Name of the EEG stream; None takes the only stream of type ``stype``.
    stype : str
        Type of the EEG stream.
    source_id : str | None
        ``source_id`` of the EEG stream, to tell apart streams of the same name.
    mode : ``"sliding"`` | ``"trial"``
        ``"sliding"``: a decision on the latest window every ``hop`` seconds.
        ``"trial"``: the same, and also a decision on the window that ends at each cue's
        ``tmax`` (cues are the marker values in ``cues``), marked ``"trial": true``.
    hop : float
        Seconds of stream time between sliding decisions, ``>= 0``; 0 turns sliding
        decisions off (trial mode only then).
    marker_stream : str | None
        Name of the marker stream (trial mode); None takes the only stream of type
        ``marker_stype``.
    marker_stype : str
        Type of the marker stream.
    marker_source_id : str | None
        ``source_id`` of the marker stream.
    cues : sequence of str | None
        Marker values that start a trial; None uses the model's class labels.
    outlet : bool
        Whether to publish decisions on an LSL outlet.
    outlet_name : str
        Name of the prediction outlet.
    outlet_source_id : str | None
        ``source_id`` of the prediction outlet (default: derived from the outlet name).
    timeout : float
        Seconds to wait for the streams at :meth:`start`.
    fast : bool
        Use the projected/folded fast path (default) rather than the plain pipeline.
        Both give the same numbers (to rounding); the plain path is for checking.
    buffer_seconds : float | None
        Seconds of raw samples the LSL source keeps; default: 4 windows and at least 30 s.
    display_sfreq : float
        Rate of the decimated raw samples kept for :meth:`snapshot`.
    display_seconds : float
        Seconds of decimated raw samples kept for :meth:`snapshot`.
    history_seconds : float
        Horizon of the latency, step-time and rate statistics.
    max_history : int
        Number of decisions, trial decisions and cues kept for :meth:`snapshot`.

    Notes
    -----
    Hops are counted in samples (``round(hop * sfreq)``), so a replay at accelerated speed
    gets one decision per ``hop`` seconds of *stream* time. When the samples of several
    hops arrive at once, only the latest window is classified (the others are counted as
    ``dropped["behind"]`` in :meth:`snapshot`). While the worker runs, BLAS is limited to
    one thread (:func:`threadpoolctl.threadpool_limits` acts on the whole process): on
    small products a multi-threaded OpenBLAS is many times slower and jittery.

    Examples
    --------
    >>> from sblr_rt import load_model  # doctest: +SKIP
    >>> with OnlineLoop(load_model("model.npz"), stream="SBLR-Sim") as loop:  # doctest: +SKIP
    ...     time.sleep(10)
    ...     print(loop.snapshot()["latency"])
    """

    def __init__(
        self,
        model,
        *,
        stream: str | None = None,
        stype: str = "EEG",
        source_id: str | None = None,
        mode: str = "sliding",
        hop: float = 0.05,
        marker_stream: str | None = None,
        marker_stype: str = "Markers",
        marker_source_id: str | None = None,
        cues=None,
        outlet: bool = True,
        outlet_name: str = "SBLR-Predictions",
        outlet_source_id: str | None = None,
        timeout: float = 5.0,
        fast: bool = True,
        buffer_seconds: float | None = None,
        display_sfreq: float = 100.0,
        display_seconds: float = 10.0,
        history_seconds: float = 60.0,
        max_history: int = 500,
    ) -> None:
        self.classifier = (
            model if isinstance(model, OnlineClassifier) else OnlineClassifier(model, fast=fast)
        )
        if mode not in _MODES:
            raise ValueError(f"'mode' must be one of {_MODES}, got {mode!r}.")
        hop = float(hop)
        if not math.isfinite(hop) or hop < 0:
            raise ValueError(f"'hop' must be a finite number of seconds >= 0, got {hop!r}.")
        if mode == "sliding" and hop == 0:
            raise ValueError("'hop' must be > 0 in sliding mode (0 turns sliding off), got 0.")
        for name, value in (("timeout", timeout), ("display_sfreq", display_sfreq)):
            if not value > 0:
                raise ValueError(f"'{name}' must be > 0, got {value!r}.")
        self.stream = stream
        self.stype = stype
        self.source_id = source_id
        self.mode = mode
        self.hop = hop
        self.marker_stream = marker_stream
        self.marker_stype = marker_stype
        self.marker_source_id = marker_source_id
        self.cues = (
            None if cues is None and mode == "sliding" else self._cue_set(cues, self.classifier)
        )
        self.outlet = bool(outlet)
        self.outlet_name = outlet_name
        self.outlet_source_id = outlet_source_id
        self.timeout = float(timeout)
        self.fast = bool(fast)
        window_seconds = self.classifier.n_times / self.classifier.sfreq
        self.buffer_seconds = (
            max(30.0, 4 * window_seconds) if buffer_seconds is None else float(buffer_seconds)
        )
        self.display_sfreq = float(display_sfreq)
        self.display_seconds = float(display_seconds)
        self.history_seconds = float(history_seconds)
        self.max_history = int(max_history)

        self._lock = threading.Lock()  # guards everything snapshot() reads
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._source = None
        self._markers = None
        self._outlet = None
        self._started = False
        self._reset_stats()

    # ------------------------------------------------------------------------------------
    @staticmethod
    def _cue_set(cues, classifier) -> frozenset:
        if cues is None:
            return frozenset(str(c) for c in classifier.classes)
        if isinstance(cues, str):
            cues = [c.strip() for c in cues.split(",") if c.strip()]
        return frozenset(str(c) for c in cues)

    def _reset_stats(self) -> None:
        self._decisions: deque = deque(maxlen=self.max_history)
        self._trial_decisions: deque = deque(maxlen=self.max_history)
        self._pending_out: deque = deque(maxlen=100_000)  # for pop_decisions()
        self._cue_log: deque = deque(maxlen=self.max_history)
        self._step_times = RecentValues(self.history_seconds)
        self._latencies = RecentValues(self.history_seconds)
        self._decision_times = RecentValues(self.history_seconds)
        self._counts = {
            "decisions": 0,
            "trial_decisions": 0,
            "dropped_gap": 0,
            "dropped_nan": 0,
            "dropped_behind": 0,
            "dropped_trials": 0,
            "nan_samples": 0,
            "gaps": 0,
            "overruns": 0,
            "cues": 0,
        }
        self._gaps: deque = deque(maxlen=self.max_history)
        self._connected = False
        self._status: dict = {}
        self._display = None
        self._worker_cpu = 0.0
        self._worker_started = None

    # ------------------------------------------------------------------------------------
    # public API
    def start(self) -> OnlineLoop:
        """Connect to the streams, check them against the model and start the worker.

        Returns
        -------
        self : OnlineLoop
            The running loop.

        Raises
        ------
        TimeoutError
            If a stream is not found within ``timeout`` seconds.
        ValueError
            If the stream's channels or rate differ from the model's.
        RuntimeError
            If the loop is already running (call :meth:`stop` first).
        """
        self._raise_if_failed()
        if self._started:
            raise RuntimeError("The loop is already running; call OnlineLoop.stop() first.")
        from sblr_rt.stream import LSLSource, MarkerSource, PredictionOutlet

        clf = self.classifier
        source = LSLSource(
            name=self.stream,
            stype=self.stype,
            source_id=self.source_id,
            timeout=self.timeout,
            buffer_seconds=self.buffer_seconds,
        )
        source.start()
        markers = None
        try:
            self._pick = check_stream_info(
                clf, list(source.ch_names), float(source.sfreq), stream=self._stream_label(source)
            )
            if self.mode == "trial":
                markers = MarkerSource(
                    name=self.marker_stream,
                    stype=self.marker_stype,
                    source_id=self.marker_source_id,
                    timeout=self.timeout,
                )
                markers.start()
            outlet = None
            if self.outlet:
                kwargs = {"name": self.outlet_name}
                kwargs["source_id"] = self.outlet_source_id or f"sblr-rt-{self.outlet_name}"
                outlet = PredictionOutlet(**kwargs)
        except BaseException:
            for started in (markers, source):
                if started is not None:
                    try:
                        started.stop()
                    except Exception:
                        logger.exception("Stopping %r failed.", started)
            raise
        self._source, self._markers, self._outlet = source, markers, outlet
        self._reset_stats()
        n_display = max(1, round(clf.sfreq / self.display_sfreq))
        self._display = DecimatedRing(
            source.n_channels,
            n_display,
            max(1, round(self.display_seconds * clf.sfreq / n_display)),
        )
        self._display_sfreq = clf.sfreq / n_display
        self._state = clf.streaming(capacity=self._state_capacity())
        self._stop_event.clear()
        self._error = None
        self._started = True
        self._thread = threading.Thread(target=self._run, name="sblr-rt-online", daemon=True)
        self._thread.start()
        logger.info(
            "Online loop started on %s (%d channels, %g Hz): %s mode, hop %g s, window %d "
            "samples, %s path.",
            self._stream_label(source),
            source.n_channels,
            source.sfreq,
            self.mode,
            self.hop,
            clf.n_times,
            self._state.path,
        )
        return self

    def stop(self) -> None:
        """Stop the worker and close the streams; raise the worker's error if it failed.

        Safe to call twice.
        """
        thread, self._thread = self._thread, None
        self._stop_event.set()
        if thread is not None:
            thread.join(timeout=10.0)
            if thread.is_alive():  # pragma: no cover - the worker never blocks this long
                logger.error("The online worker did not stop within 10 s.")
        for attr in ("_markers", "_source", "_outlet"):
            obj = getattr(self, attr)
            setattr(self, attr, None)
            if obj is not None:
                try:
                    obj.stop() if hasattr(obj, "stop") else obj.close()
                except Exception:
                    logger.exception("Closing %s failed.", attr.strip("_"))
        self._started = False
        self._raise_if_failed()

    def __enter__(self) -> OnlineLoop:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __del__(self):  # pragma: no cover - best effort at interpreter exit
        try:
            if self._thread is not None:
                self._stop_event.set()
        except Exception:
            pass

    @property
    def running(self) -> bool:
        """Whether the worker thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def pop_decisions(self) -> list[dict]:
        """Return the decisions made since the last call, oldest first.

        Returns
        -------
        decisions : list of dict
            Each as pushed to the outlet (``label``, ``proba``, ``window_end``, ``trial``,
            ``cue``) plus ``score`` (the model's decision function),
            ``window_start_index``/``window_stop_index`` (absolute sample indices of the
            window in the stream since :meth:`start`), ``published`` (LSL clock time when
            pushed) and ``step_time`` (seconds spent classifying).
        """
        self._raise_if_failed()
        with self._lock:
            out = list(self._pending_out)
            self._pending_out.clear()
        return out

    def wait_for_decisions(self, n: int, timeout: float, *, trial: bool = False) -> list[dict]:
        """Collect at least ``n`` decisions (trial decisions only if ``trial``).

        Parameters
        ----------
        n : int
            Number of decisions wanted.
        timeout : float
            Seconds to wait at most.
        trial : bool
            Count only trial decisions.

        Returns
        -------
        decisions : list of dict
            Everything popped (see :meth:`pop_decisions`); may hold fewer than ``n`` if the
            timeout expired.
        """
        deadline = time.monotonic() + timeout
        got: list[dict] = []
        while time.monotonic() < deadline:
            got.extend(self.pop_decisions())
            if sum(1 for d in got if d["trial"] or not trial) >= n:
                break
            time.sleep(0.01)
        return got

    def snapshot(self, channels=None, *, n_decisions: int | None = None) -> dict:
        """Return the loop's state for a dashboard; cheap and thread-safe.

        Meant to be polled from a GUI timer (10-30 Hz): it copies a few small arrays under
        a lock the worker holds only briefly, and never touches the stream.

        Parameters
        ----------
        channels : sequence of str or int | None
            Raw channels to return in ``"raw"`` (names or stream indices); all when None.
        n_decisions : int | None
            Return at most this many recent decisions (all kept when None).

        Returns
        -------
        snapshot : dict
            With keys

            ``time`` : float
                LSL clock time of the snapshot.
            ``running`` : bool
                Whether the worker runs. ``error`` : str | None, the worker's failure.
            ``mode`` : str, ``hop`` : float, ``path`` : str
                Configuration: sliding/trial, seconds between decisions, and the
                computation path (``"projected"``, ``"filtered"`` or ``"plain"``).
            ``stream`` : dict
                ``name``, ``source_id``, ``sfreq`` (nominal), ``n_channels``,
                ``ch_names``, ``connected`` (bool), ``n_samples`` (received since start),
                ``buffer_fill`` (fraction of the raw ring buffer in use, 0-1),
                ``buffer_seconds``, ``effective_sfreq`` (from the timestamps, NaN until
                known), ``n_reconnects``.
            ``raw`` : dict
                ``data`` ndarray float32 (n_selected, n_display), the latest samples
                decimated (every k-th sample, no anti-alias filter) to ``sfreq``;
                ``times`` ndarray (n_display,) their LSL timestamps; ``ch_names``;
                ``sfreq`` (the display rate).
            ``decisions`` : list of dict
                Recent decisions, oldest first: ``label``, ``proba`` ({label: p}),
                ``score``, ``window_end`` (LSL timestamp of the window's last sample),
                ``trial``, ``cue``, ``published`` (LSL clock time when pushed),
                ``step_time`` (s), ``window_start_index``/``window_stop_index``.
            ``trials`` : list of dict
                Recent trial decisions (same keys).
            ``cues`` : list of (float, str)
                Recent markers received (all values, not only cues): LSL timestamp and
                value. ``n_cues`` : int, markers received in total.
            ``step_time`` : dict
                Seconds spent per decision over the last ``history_seconds``: ``n``,
                ``p50``, ``p99``, ``max``, ``mean`` (NaN when empty).
            ``latency`` : dict
                End-to-end latency inside the loop, from ``window_end`` to the push on the
                outlet (seconds), same keys.
            ``decisions_per_second`` : float
                Over the last ``history_seconds``.
            ``n_decisions``, ``n_trial_decisions`` : int
                Totals since start.
            ``gaps`` : list of (float, float)
                Recent gaps in the stream (timestamps of the last sample before and the
                first after); ``n_gaps`` : int, total.
            ``dropped`` : dict
                Windows given no decision: ``gap`` (the window held a gap),
                ``nan`` (it held samples with NaN), ``behind`` (hops skipped because
                samples of several hops arrived at once, or the loop was late: only the
                latest window is classified), ``trials`` (trial windows that could not
                be classified), ``total``.
            ``n_nan_samples`` : int
                Samples received with NaN in one of the model's channels.
            ``n_overruns`` : int
                Times the loop fell so far behind that the raw buffer overwrote samples
                it had not read (those samples are skipped, like a gap).
            ``worker_cpu`` : float
                CPU seconds used by the worker thread per wall second since start.
        """
        self._raise_if_failed()
        now = local_clock()
        source = self._source
        with self._lock:
            decisions = list(self._decisions)
            trials = list(self._trial_decisions)
            if n_decisions is not None:
                decisions = decisions[-n_decisions:] if n_decisions else []
                trials = trials[-n_decisions:] if n_decisions else []
            cues = list(self._cue_log)
            counts = dict(self._counts)
            gaps = list(self._gaps)
            step = self._step_times.summary(now)
            latency = self._latencies.summary(now)
            rate = self._decision_times.rate(now)
            connected = self._connected
            status = dict(self._status)
            raw = {"data": np.zeros((0, 0), np.float32), "times": np.zeros(0), "ch_names": []}
            if self._display is not None and source is not None:
                idx, names = self._display_channels(channels, list(source.ch_names))
                data, times = self._display.latest(idx)
                raw = {"data": data, "times": times, "ch_names": names}
                raw["sfreq"] = self._display_sfreq
            cpu = self._worker_cpu
            started = self._worker_started
        stream = {"name": self.stream, "source_id": self.source_id, "connected": connected}
        if source is not None:
            buffer = source.buffer
            stream.update(
                name=getattr(source, "name", None) or self.stream,
                sfreq=float(source.sfreq),
                n_channels=int(source.n_channels),
                ch_names=list(source.ch_names),
                n_samples=int(buffer.n_pushed),
                buffer_fill=buffer.n_available / buffer.capacity,
                buffer_seconds=buffer.capacity / float(source.sfreq),
                effective_sfreq=status.get("effective_sfreq") or float("nan"),
                n_reconnects=status.get("n_reconnects", 0),
            )
        wall = (time.monotonic() - started) if started else 0.0
        dropped = {
            "gap": counts["dropped_gap"],
            "nan": counts["dropped_nan"],
            "behind": counts["dropped_behind"],
            "trials": counts["dropped_trials"],
        }
        dropped["total"] = sum(dropped.values())
        return {
            "time": now,
            "running": self.running,
            "error": None,
            "mode": self.mode,
            "hop": self.hop,
            "path": getattr(getattr(self, "_state", None), "path", None),
            "stream": stream,
            "raw": raw,
            "decisions": decisions,
            "trials": trials,
            "cues": cues,
            "step_time": step,
            "latency": latency,
            "decisions_per_second": rate,
            "n_decisions": counts["decisions"],
            "n_trial_decisions": counts["trial_decisions"],
            "gaps": gaps,
            "n_gaps": counts["gaps"],
            "dropped": dropped,
            "n_nan_samples": counts["nan_samples"],
            "n_overruns": counts["overruns"],
            "n_cues": counts["cues"],
            "worker_cpu": cpu / wall if wall > 0 else 0.0,
        }

    # ------------------------------------------------------------------------------------
    # internals
    def _raise_if_failed(self) -> None:
        error = self._error
        if error is not None:
            self._error = None
            raise RuntimeError(
                f"The online worker thread failed: {type(error).__name__}: {error}"
            ) from error

    @staticmethod
    def _stream_label(source) -> str:
        name = getattr(source, "name", None)
        return f"EEG stream {name!r}" if name else "the EEG stream"

    def _state_capacity(self) -> int:
        clf = self.classifier
        # Room for a window plus 5 s (at least a window) for cues whose marker arrives
        # late (a marker inlet's first clock sync can take a while; replays run faster
        # than real time) and for slow worker cycles.
        return int(clf.n_times + max(5.0 * clf.sfreq, clf.n_times))

    def _display_channels(self, channels, ch_names):
        if channels is None:
            return None, ch_names
        idx = []
        for ch in channels:
            if isinstance(ch, str):
                if ch not in ch_names:
                    raise ValueError(
                        f"'channels' must name channels of the stream, got unknown {ch!r}."
                    )
                idx.append(ch_names.index(ch))
            else:
                idx.append(int(ch))
        return np.asarray(idx, dtype=int), [ch_names[i] for i in idx]

    def _run(self) -> None:
        from threadpoolctl import threadpool_limits

        t_cpu0 = time.thread_time()
        with self._lock:
            self._worker_started = time.monotonic()
        try:
            with threadpool_limits(limits=1):
                self._loop()
        except BaseException as exc:
            logger.exception("The online worker thread failed; the loop stopped.")
            self._error = exc
        finally:
            with self._lock:
                self._worker_cpu = time.thread_time() - t_cpu0

    def _loop(self) -> None:
        clf = self.classifier
        source = self._source
        buffer = source.buffer
        state = self._state
        sfreq = clf.sfreq
        hop_samples = max(1, round(self.hop * sfreq)) if self.hop > 0 else 0
        # Start from the oldest sample held: samples that arrived while start() was still
        # connecting the marker stream and outlet are classified too (trial cues at the
        # very start of a stream need them).
        self._n_in = buffer.first_index  # absolute index in the raw buffer of the next sample
        self._offset = self._n_in  # raw index of the state's sample 0
        self._last_ts = None
        self._gap_threshold = 2.5 / sfreq
        self._next_slide = None  # state index at which the next sliding decision is due
        self._pending_cues: list[tuple[float, str]] = []
        self._last_status = 0.0
        t_cpu0 = time.thread_time()
        while not self._stop_event.is_set():
            target = self._n_in + (hop_samples or 1)
            if self._next_slide is not None:
                target = max(self._n_in + 1, self._next_slide + self._offset)
            buffer.wait_for(target, timeout=0.02)
            self._check_status()
            n_new = self._ingest(buffer, state)
            if self._markers is not None:
                self._collect_cues()
                self._trial_decisions_due(state)
            if hop_samples and n_new:
                self._slide(state, hop_samples)
            with self._lock:
                self._worker_cpu = time.thread_time() - t_cpu0

    def _check_status(self) -> None:
        now = time.monotonic()
        if now - self._last_status < 0.1:
            return
        self._last_status = now
        status = self._source.status()
        connected = bool(status.get("connected", True))
        with self._lock:
            self._status = status
        if connected != self._connected:
            if connected:
                logger.info("%s is streaming.", self._stream_label(self._source))
            else:
                logger.warning(
                    "%s vanished; no decisions until it returns (the loop keeps running).",
                    self._stream_label(self._source),
                )
            with self._lock:
                self._connected = connected

    def _ingest(self, buffer, state) -> int:
        n_pushed = buffer.n_pushed
        if n_pushed <= self._n_in:
            return 0
        first = buffer.first_index
        if self._n_in < first:  # fell behind the raw buffer: skip to what is left
            lost = first - self._n_in
            logger.warning("The online loop fell behind the stream: %d samples skipped.", lost)
            state.skip(lost)
            self._n_in = first
            self._last_ts = None
            with self._lock:
                self._counts["overruns"] += 1
        try:
            chunk, ts = buffer.get(self._n_in, n_pushed)
        except ValueError:  # overwritten between the two reads; catch up next cycle
            return 0
        first_index = self._n_in
        self._n_in = n_pushed
        data = chunk.T  # (n_samples, n_channels) view
        with self._lock:  # snapshot() reads the display ring
            self._display.push(first_index, data, ts)
        # Gaps: a jump in the timestamps larger than 2.5 sample periods.
        prev = self._last_ts
        diffs = np.diff(ts, prepend=ts[0] if prev is None else prev)
        gap_at = np.flatnonzero(diffs > self._gap_threshold)
        self._last_ts = ts[-1]
        picked = data if self._pick is None else data[:, self._pick]
        n_nan = state.count_nan(picked)
        if n_nan:
            with self._lock:
                self._counts["nan_samples"] += n_nan
        start = 0
        for g in gap_at:
            state.push(picked[start:g], ts[start:g])
            state.reset()
            t_before = ts[g - 1] if g > 0 else prev
            logger.warning(
                "Gap of %.3f s in %s; decisions resume once a full window follows.",
                ts[g] - t_before,
                self._stream_label(self._source),
            )
            with self._lock:
                self._counts["gaps"] += 1
                self._gaps.append((float(t_before), float(ts[g])))
            start = g
        state.push(picked[start:], ts[start:])
        return n_pushed - first_index

    def _collect_cues(self) -> None:
        popped = self._markers.pop()
        if not popped:
            return
        with self._lock:
            for t, value in popped:
                self._cue_log.append((float(t), str(value)))
                self._counts["cues"] += 1
        for t, value in popped:
            if str(value) in self.cues:
                self._pending_cues.append((float(t), str(value)))

    def _trial_decisions_due(self, state) -> None:
        if not self._pending_cues:
            return
        keep = []
        for t, value in self._pending_cues:
            stop = state.trial_stop(t)
            if stop is None:  # the cue's sample has not arrived yet
                keep.append((t, value))
                continue
            if stop > state.n_pushed:
                keep.append((t, value))
                continue
            self._decide(state, stop, trial=True, cue=value)
        self._pending_cues = keep

    def _slide(self, state, hop_samples: int) -> None:
        n = state.n_pushed
        if self._next_slide is None:
            self._next_slide = max(n, state.n_times)
        if n < self._next_slide:
            return
        behind = (n - self._next_slide) // hop_samples
        if behind:
            with self._lock:
                self._counts["dropped_behind"] += behind
        self._decide(state, n, trial=False, cue=None)
        self._next_slide = n + hop_samples - (n - self._next_slide) % hop_samples

    def _decide(self, state, stop: int, *, trial: bool, cue) -> None:
        reason = state.why_not(stop)
        if reason is not None:
            with self._lock:
                if trial:
                    self._counts["dropped_trials"] += 1
                else:
                    key = "dropped_nan" if reason == "nan" else "dropped_gap"
                    self._counts[key] += 1
            if trial:
                logger.warning(
                    "No decision for the trial at cue %r: window %s (samples %d..%d; held "
                    "%d..%d).",
                    cue,
                    reason,
                    stop - state.n_times + self._offset,
                    stop - 1 + self._offset,
                    max(0, state.n_pushed - state.capacity) + self._offset,
                    state.n_pushed - 1 + self._offset,
                )
            return
        t0 = time.perf_counter()
        decision = state.decide(stop, trial=trial, cue=cue)
        step_time = time.perf_counter() - t0
        public = public_decision(decision)
        if self._outlet is not None:
            self._outlet.push(public)
        published = local_clock()
        latency = published - decision["window_end"]
        decision.update(
            window_start_index=stop - state.n_times + self._offset,
            window_stop_index=stop + self._offset,
            published=published,
            step_time=step_time,
        )
        with self._lock:
            self._step_times.add(published, step_time)
            self._latencies.add(published, latency)
            self._decision_times.add(published, 1.0)
            self._decisions.append(decision)
            self._pending_out.append(decision)
            if trial:
                self._trial_decisions.append(decision)
                self._counts["trial_decisions"] += 1
            self._counts["decisions"] += 1


def decision_to_json(decision: dict) -> str:
    """Serialize a decision as pushed on ``SBLR-Predictions``.

    Parameters
    ----------
    decision : dict
        A decision from :meth:`OnlineClassifier.step` or the loop.

    Returns
    -------
    text : str
        The JSON object with keys ``label``, ``proba``, ``window_end``, ``trial``, ``cue``.
    """
    return dumps(public_decision(decision))

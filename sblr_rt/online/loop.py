"""The online loop: an EEG source in, one decision per hop (and per cue) out.

:class:`OnlineLoop` takes its collaborators as objects: the EEG source (a ``buffer``
:class:`~sblr_rt.stream.RingBuffer` with ``ch_names``, ``sfreq``, ``status()``), the marker
source (``pop() -> [(t, value), ...]``) in trial mode, a sink (``push(decision)``) and the
clock; :meth:`OnlineLoop.from_lsl` builds the LSL ones. A worker thread calls
:meth:`OnlineLoop.step_once` over and over. Each step moves the new samples into the
classifier's streaming state (rescaled when the stream's unit differs from the model's),
classifies the latest window every ``hop`` seconds of stream time and, in trial mode, the
window ending at each cue's ``tmax`` (or decides the trial early from the smoothed
evidence, :mod:`~sblr_rt.online.evidence`), and pushes each decision to the sink (JSON on
``SBLR-Predictions``, numbers on ``SBLR-Predictions-Numeric``).

Windows holding a gap or non-finite samples (NaN, ±inf, or beyond 1 V: no measurement)
give no decision (counted in :meth:`OnlineLoop.snapshot`), nor does a stream whose
measured rate is far from the declared one. A vanished stream is logged and the loop
resumes when it returns. An exception in the worker stops it and is raised again by the
next public call.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

from sblr_rt.online._startup import (
    build_scheduler,
    close,
    open_collaborators,
    stream_feed,
    stream_label,
)
from sblr_rt.online._stats import RawDisplay
from sblr_rt.online._watch import StatusWatch
from sblr_rt.online.classifier import OnlineClassifier
from sblr_rt.online.cues import CueFilter, cue_classes
from sblr_rt.online.decision import Decision
from sblr_rt.online.evidence import Evidence, check_smoothing
from sblr_rt.online.lsl import LSLStreams, lsl_collaborators
from sblr_rt.online.scheduler import Outputs
from sblr_rt.online.settings import (
    DisplaySettings,
    OnlineSettings,
    refuse_unknown,
    take_options,
)
from sblr_rt.online.swap import prepare_swap
from sblr_rt.online.tap import TrialTap
from sblr_rt.online.telemetry import RawTraces, StreamTelemetry, Telemetry, TelemetryRecorder

logger = logging.getLogger("sblr_rt.online")

__all__ = ["OnlineLoop"]

_STATUS_EVERY = 0.1  # seconds of clock between reads of the source's status


class OnlineLoop:
    """Classify an EEG stream in real time and publish the decisions.

    Parameters
    ----------
    model : BCIModel | OnlineClassifier
        The trained model, or a classifier built on one (``settings.fast`` builds it).
    source : object
        The EEG source: ``buffer`` (a :class:`~sblr_rt.stream.RingBuffer`), ``ch_names``,
        ``sfreq``, ``n_channels``, ``name``, ``status() -> dict``; optional ``start()`` and
        ``stop()`` (called by :meth:`start` and :meth:`stop`).
    markers : object | None
        The marker source in trial mode: ``pop() -> list of (timestamp, value)``; optional
        ``start()``/``stop()``.
    sink : object | None
        Where decisions go: ``push(dict)``; optional ``open()`` and ``close()``.
    clock : callable | None
        The clock of the stream's timestamps; default
        :func:`sblr_rt.stream.clock.local_clock`.
    settings : OnlineSettings | None
        What the loop decides and when (:class:`~sblr_rt.online.settings.OnlineSettings`:
        ``mode``, ``hop``, ``cues``, ``fast``, ``unit_mismatch``, ``smoothing``,
        ``keep_trials``, ``model_version``, ``rename_channels``); None: the defaults,
        sliding every 0.05 s.
    display : DisplaySettings | None
        What :meth:`snapshot` keeps (:class:`~sblr_rt.online.settings.DisplaySettings`:
        ``display_sfreq``, ``display_seconds``, ``history_seconds``, ``max_history``).
    **options
        Fields of :class:`~sblr_rt.online.settings.OnlineSettings` and
        :class:`~sblr_rt.online.settings.DisplaySettings`, a shorthand:
        ``OnlineLoop(model, source, markers=m, mode="trial")`` sets ``settings.mode``.

    Attributes
    ----------
    settings : OnlineSettings
        The settings, with ``smoothing`` and ``model_version`` resolved (the model's run
        configuration, :attr:`OnlineClassifier.run_info
        <sblr_rt.online.OnlineClassifier.run_info>`, where None was given).
    display : DisplaySettings
        What the snapshot keeps.
    classifier : OnlineClassifier
        The classifier of ``model`` (a model of :meth:`swap_model` decides after it).

    Notes
    -----
    Hops are counted in samples (``round(hop * sfreq)``), so a replay at accelerated speed
    gets one decision per ``hop`` seconds of *stream* time. When the samples of several
    hops arrive at once, only the latest window is classified (the others are counted as
    ``dropped.behind``). The worker limits BLAS to one thread: on small products a
    multi-threaded OpenBLAS is many times slower and jittery.

    Examples
    --------
    >>> from sblr_rt import load_model  # doctest: +SKIP
    >>> loop = OnlineLoop.from_lsl(load_model("model.npz"), stream="SBLR-Sim")  # doctest: +SKIP
    >>> with loop:  # doctest: +SKIP
    ...     time.sleep(10)
    ...     print(loop.snapshot().latency.p99)
    """

    def __init__(
        self,
        model,
        source,
        *,
        markers=None,
        sink=None,
        clock=None,
        settings: OnlineSettings | None = None,
        display: DisplaySettings | None = None,
        **options,
    ) -> None:
        settings = take_options(options, OnlineSettings, settings)
        display = take_options(options, DisplaySettings, display)
        refuse_unknown(options, "OnlineLoop()", OnlineSettings, DisplaySettings)
        if settings.mode == "trial" and markers is None:
            raise ValueError("'markers' must be a marker source in trial mode, got None.")
        self.classifier = _as_classifier(model, settings.fast)
        smoothing = check_smoothing(
            settings.smoothing, self.classifier, settings.mode, settings.hop
        )
        cue_filter = (
            None
            if settings.cues is None and settings.mode == "sliding"
            else CueFilter(settings.cues, self.classifier)
        )
        version = settings.model_version
        self.settings = dataclasses.replace(
            settings,
            smoothing=smoothing,
            model_version=self.classifier.run_info.version if version is None else version,
        )
        self.display = display
        if clock is None:
            from sblr_rt.stream import local_clock as clock
        self.source = source
        self.markers = markers
        self.sink = sink
        self.clock = clock
        self._cue_filter = cue_filter
        # A trial's class: the model's own marker -> class map, whatever 'cues' says.
        self._tap = (
            TrialTap(cue_classes(None, self.classifier), self.classifier.classes)
            if settings.keep_trials
            else None
        )
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._started = False
        self._scheduler = None
        self._display = None
        self._channels = None  # the ChannelMatch found at start
        self._telemetry = TelemetryRecorder(display.history_seconds, display.max_history)
        self._watch = StatusWatch(_STATUS_EVERY)
        self._worker_cpu = 0.0
        self._worker_started = None

    # The settings, read-only, as attributes.
    mode = property(lambda self: self.settings.mode, doc="``settings.mode``.")
    hop = property(lambda self: self.settings.hop, doc="``settings.hop``.")
    smoothing = property(lambda self: self.settings.smoothing, doc="``settings.smoothing``.")
    unit_mismatch = property(
        lambda self: self.settings.unit_mismatch, doc="``settings.unit_mismatch``."
    )

    @property
    def cues(self) -> frozenset[str] | None:
        """The marker values that start a trial (None: sliding mode without cues)."""
        return None if self._cue_filter is None else self._cue_filter.cues

    @classmethod
    def from_lsl(
        cls,
        model,
        streams: LSLStreams | None = None,
        *,
        settings: OnlineSettings | None = None,
        display: DisplaySettings | None = None,
        **options,
    ) -> OnlineLoop:
        """Build a loop on LSL streams (connected at :meth:`start`).

        Parameters
        ----------
        model : BCIModel | OnlineClassifier
            The trained model.
        streams : LSLStreams | None
            The EEG and marker streams to read and the decision outlets to open
            (:class:`~sblr_rt.online.lsl.LSLStreams`); None: the defaults.
        settings, display
            See :class:`OnlineLoop`.
        **options
            Fields of :class:`~sblr_rt.online.lsl.LSLStreams` (``stream``, ``stype``,
            ``source_id``, ``marker_stream``, ``marker_stype``, ``marker_source_id``,
            ``outlet``, ``outlet_name``, ``outlet_source_id``, ``timeout``,
            ``buffer_seconds``), of :class:`~sblr_rt.online.settings.OnlineSettings` and
            of :class:`~sblr_rt.online.settings.DisplaySettings`, a shorthand.

        Returns
        -------
        loop : OnlineLoop
            Not started; a stopped loop cannot be started again (build a new one).
        """
        streams = take_options(options, LSLStreams, streams)
        settings = take_options(options, OnlineSettings, settings)
        display = take_options(options, DisplaySettings, display)
        refuse_unknown(
            options, "OnlineLoop.from_lsl()", LSLStreams, OnlineSettings, DisplaySettings
        )
        clf = _as_classifier(model, settings.fast)
        source, markers, sink, clock = lsl_collaborators(
            clf, streams, trial=settings.mode == "trial"
        )
        return cls(
            clf,
            source,
            markers=markers,
            sink=sink,
            clock=clock,
            settings=settings,
            display=display,
        )

    def start(self, *, thread: bool = True) -> OnlineLoop:
        """Start the collaborators, check the stream against the model, start the worker.

        Parameters
        ----------
        thread : bool
            Start the worker thread; False leaves the stepping to :meth:`step_once`.

        Returns
        -------
        self : OnlineLoop

        Raises
        ------
        TimeoutError
            If a stream is not found in time (LSL sources).
        ValueError
            If the stream's channels or rate differ from the model's, or its unit does
            and ``unit_mismatch`` is ``"refuse"``.
        RuntimeError
            If the loop is already running (call :meth:`stop` first).
        """
        self._raise_if_failed()
        if self._started:
            raise RuntimeError("The loop is already running; call OnlineLoop.stop() first.")
        feed, self._channels = open_collaborators(
            self.classifier,
            self.source,
            self.markers,
            self.sink,
            unit_mismatch=self.settings.unit_mismatch,
            rename=self.settings.rename_channels,
        )
        self._prepare(feed)
        self._started = True
        self._stop_event.clear()
        if thread:
            self._thread = threading.Thread(target=self._run, name="sblr-rt-online", daemon=True)
            self._thread.start()
        logger.info(
            "Online loop started on %s (%d channels, %g Hz; %s): %s mode, hop %g s, window "
            "%d samples, %s form, %s.",
            self._label,
            self.source.n_channels,
            self.source.sfreq,
            self._channels.summary,
            self.mode,
            self.hop,
            self.classifier.n_times_raw,
            self._scheduler.state.form,
            self.smoothing.describe(),
        )
        return self

    def _prepare(self, feed) -> None:
        settings, display = self.settings, self.display
        adaptation = self._telemetry.adaptation
        self._telemetry = TelemetryRecorder(display.history_seconds, display.max_history)
        self._telemetry.set_model_version(
            settings.model_version, getattr(self.classifier.model, "prior_share", None)
        )
        self._telemetry.set_adaptation(adaptation)
        self._display = RawDisplay(
            self.source.n_channels,
            self.classifier.sfreq,
            display.display_sfreq,
            display.display_seconds,
            self._telemetry.lock,
        )
        outputs = Outputs(
            telemetry=self._telemetry,
            clock=self.clock,
            sink=self.sink,
            on_chunk=self._display.push,
            on_trial=None if self._tap is None else self._tap.record,
        )
        self._scheduler = build_scheduler(
            self.classifier,
            self.source,
            feed,
            outputs,
            hop=settings.hop,
            evidence=Evidence(
                self.classifier.classes,
                settings.smoothing,
                calibration=self.classifier.probability,
            ),
            model_version=settings.model_version,
        )
        self._watch.reset()
        self._error = None

    def stop(self) -> None:
        """Stop the worker and close the collaborators; raise the worker's error if any.

        Safe to call twice.
        """
        thread, self._thread = self._thread, None
        self._stop_event.set()
        if thread is not None:
            thread.join(timeout=10.0)
            if thread.is_alive():  # pragma: no cover - the worker never blocks this long
                logger.error("The online worker did not stop within 10 s.")
        if self._started:
            for obj in (self.markers, self.source, self.sink):
                if obj is not None:
                    close(obj)
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

    def step_once(self) -> int:
        """Run one scheduling step: ingest the new samples, decide the due windows.

        Returns
        -------
        n_new : int
            Samples ingested.

        Raises
        ------
        RuntimeError
            If the loop was not started, or if its worker thread runs (one stepper only).
        """
        if self._scheduler is None or not self._started:
            raise RuntimeError("Start the loop first: OnlineLoop.start(thread=False).")
        if self._thread is not None and threading.current_thread() is not self._thread:
            raise RuntimeError("The worker thread steps this loop; do not call step_once().")
        self._watch.check(
            self.source, self.clock(), self._scheduler, self._telemetry.lock, self._label
        )
        cues = self._collect_cues() if self.mode == "trial" else ()
        return self._scheduler.step(cues)

    def _run(self) -> None:
        from threadpoolctl import threadpool_limits

        t_cpu0 = time.thread_time()
        with self._telemetry.lock:
            self._worker_started = time.monotonic()
        try:
            with threadpool_limits(limits=1):
                buffer = self.source.buffer
                while not self._stop_event.is_set():
                    buffer.wait_for(self._scheduler.next_target(), timeout=0.02)
                    self.step_once()
                    self._worker_cpu = time.thread_time() - t_cpu0
        except BaseException as exc:
            logger.exception("The online worker thread failed; the loop stopped.")
            self._error = exc
        finally:
            self._worker_cpu = time.thread_time() - t_cpu0

    def _collect_cues(self) -> list[tuple[float, str]]:
        popped = self.markers.pop() or ()
        for t, value in popped:
            self._telemetry.cue(t, value)
        return self._cue_filter.accept(popped)

    def pop_decisions(self) -> list[Decision]:
        """Return the decisions made since the last call, oldest first.

        Returns
        -------
        decisions : list of Decision
            Each as pushed to the sink (``label``, ``proba``, ``window_end``, ``trial``,
            ``cue``, ``model_version``, ``proba_smoothed``, ``early``) plus ``score``,
            ``window_start_index``/``window_stop_index`` (absolute sample indices in the
            stream since :meth:`start`), ``published`` (clock time when pushed) and
            ``step_time`` (seconds spent classifying); see
            :class:`~sblr_rt.online.decision.Decision`.
        """
        self._raise_if_failed()
        return self._telemetry.pop_pending()

    def wait_for_decisions(self, n: int, timeout: float, *, trial: bool = False) -> list[Decision]:
        """Collect at least ``n`` decisions (trial decisions only if ``trial``).

        Returns
        -------
        decisions : list of Decision
            Everything popped (see :meth:`pop_decisions`); fewer than ``n`` if the
            ``timeout`` (seconds) expired.
        """
        deadline = time.monotonic() + timeout
        got: list[Decision] = []
        while time.monotonic() < deadline:
            got.extend(self.pop_decisions())
            if sum(1 for d in got if d.trial or not trial) >= n:
                break
            time.sleep(0.01)
        return got

    def snapshot(self, channels=None, *, n_decisions: int | None = None) -> Telemetry:
        """Return the loop's state for a dashboard; cheap and thread-safe.

        Meant to be polled from a GUI timer (10-30 Hz): it copies a few small arrays under
        a lock the worker holds only briefly, and never touches the stream.

        Parameters
        ----------
        channels : sequence of str or int | None
            Raw channels to return in ``raw`` (names or stream indices); all when None.
        n_decisions : int | None
            Return at most this many recent decisions (all kept when None).

        Returns
        -------
        telemetry : Telemetry
            See :class:`~sblr_rt.online.telemetry.Telemetry`.
        """
        self._raise_if_failed()
        now = self.clock()
        source = self.source
        scheduler = self._scheduler
        raw = RawTraces()
        with self._telemetry.lock:
            status = dict(self._watch.status)
            connected = self._watch.connected
            if self._display is not None:
                raw = self._display.traces(channels, list(source.ch_names))
            cpu, started = self._worker_cpu, self._worker_started
        stream = StreamTelemetry(
            name=getattr(source, "name", None), connected=connected, state="connecting"
        )
        if self._started:
            stream = StreamTelemetry.from_source(source, status, connected)
        wall = (time.monotonic() - started) if started else 0.0
        return self._telemetry.freeze(
            now,
            n_decisions,
            running=self.running,
            mode=self.mode,
            hop=self.hop,
            form=None if scheduler is None else scheduler.state.form,
            stream=stream,
            raw=raw,
            worker_cpu=cpu / wall if wall > 0 else 0.0,
            channels=self._channels,
            run_centring=None if scheduler is None else _centring_status(scheduler.state),
        )

    # ------------------------------------------------------------------ adaptation
    # What an adapter (``sblr_rt.calibration.adapt.Adapter``) calls: switch to a new model
    # version between two decisions, name the version deciding now, hand out the labelled
    # trials, show its status in the snapshot.
    def swap_model(self, model, *, version: int | None = None) -> None:
        """Switch to ``model`` between two decisions, without a gap; call from any thread.

        The new model's streaming state is built here, on the calling thread, from the
        samples the loop already ingested (:func:`~sblr_rt.online.swap.prepare_swap`);
        the decision thread adopts it at the start of its next step, so no window is
        skipped and the decision thread never waits for the preparation.

        Parameters
        ----------
        model : BCIModel | OnlineClassifier
            The new model: the same raw channels and rate as the stream.
        version : int | None
            The version its decisions name; None: the model's own
            (:attr:`RunInfo.version <sblr_rt.online.run_info.RunInfo.version>`).

        Raises
        ------
        RuntimeError
            If the loop is not running.
        ValueError
            If the model does not fit the stream (channels, rate, unit).
        """
        self._raise_if_failed()
        scheduler = self._scheduler
        if scheduler is None or not self._started:
            raise RuntimeError("Start the loop before swapping its model.")
        current = self.classifier
        clf = (
            model
            if isinstance(model, OnlineClassifier)
            else OnlineClassifier(
                model,
                fast=current.fast,
                recentre=current.recentre,
                recentre_warmup=current.recentre_warmup,
            )
        )
        feed, _ = stream_feed(
            clf, self.source, self.settings.unit_mismatch, rename=self.settings.rename_channels
        )
        version = clf.run_info.version if version is None else int(version)
        scheduler.swaps.put(prepare_swap(clf, scheduler, feed=feed, version=version))

    @property
    def model_version(self) -> int:
        """The model version deciding now."""
        scheduler = self._scheduler
        return self.settings.model_version if scheduler is None else scheduler.model_version

    @property
    def swap_pending(self) -> bool:
        """Whether a model from :meth:`swap_model` waits to be adopted."""
        return self._scheduler is not None and self._scheduler.swaps.pending

    def pop_trials(self, *, seconds_before: float = 2.0) -> list:
        """Return the trials decided since the last call, labelled, with their samples.

        Parameters
        ----------
        seconds_before : float
            Seconds of samples kept before each trial's raw epoch.

        Returns
        -------
        trials : list of LabelledTrial
            See :class:`~sblr_rt.online.tap.LabelledTrial`; ``label`` is None for a cue
            that names no class of the model.

        Raises
        ------
        RuntimeError
            If the loop was built without ``keep_trials=True``.
        """
        if self._tap is None:
            raise RuntimeError("Build the loop with keep_trials=True to pop its trials.")
        scheduler = self._scheduler
        if scheduler is None:
            return []
        clf = scheduler.state.classifier
        return self._tap.pop(
            scheduler.buffer,
            list(clf.ch_names),
            feed=scheduler.feed,
            sfreq=clf.sfreq,
            seconds_before=seconds_before,
        )

    def set_adaptation(self, status: dict | None) -> None:
        """Show the adaptation's status in :meth:`snapshot` (``Telemetry.adaptation``)."""
        self._telemetry.set_adaptation(status)

    # ------------------------------------------------------------------ internals
    @property
    def _label(self) -> str:
        return stream_label(self.source)

    def _raise_if_failed(self) -> None:
        error = self._error
        if error is not None:
            self._error = None
            raise RuntimeError(
                f"The online worker thread failed: {type(error).__name__}: {error}"
            ) from error


def _as_classifier(model, fast: bool) -> OnlineClassifier:
    """Return ``model`` if it is a classifier, else the classifier built on it."""
    return model if isinstance(model, OnlineClassifier) else OnlineClassifier(model, fast=fast)


def _centring_status(state) -> dict | None:
    """Return the run centring of a streaming state, as the snapshot shows it (None: off)."""
    centring = getattr(state, "run_centring", None)
    if centring is None:
        return None
    return {"n_trials": centring.n_trials, "warmup": centring.centring.warmup}

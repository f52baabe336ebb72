"""The main window: Live, Model and Calibrate tabs, the stream chooser, the cue window.

:func:`run` is what ``sblr-rt gui`` calls. Everything that may block (resolving LSL
streams, connecting, stopping the loop, calibrating) runs in a worker
(:class:`sblr_rt.gui.background.BackgroundTask`); the GUI thread only polls snapshots.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyqtgraph as pg
from PyQt5 import QtCore, QtWidgets
from sblr_rt.gui.background import BackgroundTask
from sblr_rt.gui.calibrate_tab import CalibrateTab, _stream_label
from sblr_rt.gui.live_tab import LiveTab
from sblr_rt.gui.model_view import ModelTab
from sblr_rt.gui.widgets import notify

from sblr_rt.online.lsl import DEFAULT_OUTLET_NAME
from sblr_rt.stream.outlets import check_str

logger = logging.getLogger("sblr_rt.gui")

#: Tab titles, in order; screenshots are named after them.
TAB_NAMES = ("Live", "Model", "Calibrate")
#: Seconds closing the window waits at the most for its live stream and recorder to stop.
CLOSE_SECONDS = 10.0


def configure_pyqtgraph() -> None:
    """White background, black text: readable on screen, in print and in the README."""
    pg.setConfigOptions(background="w", foreground="k", antialias=True)


def _is_marker(desc) -> bool:
    from sblr_rt.stream import is_marker_stream

    return is_marker_stream(desc)


class MainWindow(QtWidgets.QMainWindow):
    """One window for the whole session.

    Parameters
    ----------
    model : BCIModel | str | Path | None
        A model, or a model file to load.
    stream : str | None
        Name of an EEG stream to connect to as soon as LSL shows it (whatever its type).
    markers : str | None
        Name of a marker stream for trial mode (with ``stream``).
    markers_source_id : str | None
        Its ``source_id``, where several marker streams share the name.
    stream_type, marker_type : str | None
        Or the type (any case) of the only such stream to connect to.
    hop : float
        Seconds between sliding-window decisions of the online loop.
    adapt : dict | None
        Adapt the model during the session (trial mode, with a model file):
        ``{"folder", "calibration", "every"}`` as
        :meth:`sblr_rt.calibration.adapt.Adapter.for_model_file` takes them.
    source_id : str | None
        The EEG stream's ``source_id`` (to choose one of several of the same name).
    rename_channels : ChannelRenaming | None
        Stream label -> model label, applied before the stream is matched to the model
        (:class:`sblr_rt.io.labels.ChannelRenaming`).
    outlet_name : str
        The live loop's decision outlets: ``outlet_name`` (JSON) and
        ``<outlet_name>-Numeric``, as ``sblr-rt run --outlet-name`` names them.
    """

    def __init__(
        self,
        *,
        model=None,
        stream: str | None = None,
        markers: str | None = None,
        markers_source_id: str | None = None,
        stream_type: str | None = None,
        marker_type: str | None = None,
        hop: float = 0.05,
        adapt: dict | None = None,
        source_id: str | None = None,
        rename_channels=None,
        outlet_name: str = DEFAULT_OUTLET_NAME,
    ):
        super().__init__()
        configure_pyqtgraph()
        self.setWindowTitle("sblr-rt dashboard")
        self.resize(1600, 1000)
        self.model = None
        self.model_path: str | None = None
        self.provider = None
        self.connected_stream = None
        #: Why the last connection failed (None: it did not, or none was made).
        self.connection_error: BaseException | None = None
        self.hop = float(hop)
        self.adapt = adapt
        self.rename_channels = rename_channels
        self.outlet_name = check_str(outlet_name, "outlet_name")
        self.paradigm = None
        self.streams: list = []
        # (name, type, source_id) of the streams to connect to once LSL shows them
        self._pending_stream = (
            (stream, stream_type, source_id) if stream or stream_type or source_id else None
        )
        self._pending_markers = (
            (markers, marker_type, markers_source_id)
            if markers or marker_type or markers_source_id
            else None
        )
        self._tasks: list[BackgroundTask] = []
        # The live connection's openings and stops run on one thread, in order: a loop's
        # outlets close before the next loop opens the same names. Each connection has a
        # number; one superseded while it opened stops what it opened.
        self._live_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sblr-live")
        self._connection = 0
        self._open: set = set()  # the providers open, touched on the live thread only
        self._closed = False

        self.tabs = QtWidgets.QTabWidget()
        self.live_tab = LiveTab()
        self.model_tab = ModelTab()
        self.calibrate_tab = CalibrateTab()
        for widget, name in zip(
            (self.live_tab, self.model_tab, self.calibrate_tab), TAB_NAMES, strict=True
        ):
            self.tabs.addTab(widget, name)
        self.setCentralWidget(self.tabs)
        self._build_toolbar()
        self._build_menu()
        self.calibrate_tab.model_ready.connect(self._on_calibrated)
        self.calibrate_tab.refresh_requested.connect(self.refresh_streams)
        self.calibrate_tab.paradigm_requested.connect(self._on_paradigm_requested)
        self.calibrate_tab.paradigm_stop_requested.connect(self._stop_paradigm)
        self.live_tab.snapshot_drawn.connect(self._feed_paradigm)
        self.statusBar().showMessage("Looking for LSL streams…")
        if model is not None:
            if isinstance(model, str | Path):
                self.load_model_file(model)
            else:
                self.set_model(model)
        self.refresh_streams()

    # ---------------------------------------------------------------------------- layout
    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Stream")
        bar.setMovable(False)
        bar.addWidget(QtWidgets.QLabel(" EEG stream "))
        self.stream_box = QtWidgets.QComboBox()
        self.stream_box.setMinimumWidth(320)
        bar.addWidget(self.stream_box)
        bar.addWidget(QtWidgets.QLabel("  cues from "))
        self.marker_box = QtWidgets.QComboBox()
        self.marker_box.setMinimumWidth(220)
        self.marker_box.setToolTip(
            "A marker stream turns on trial mode: a decision at each cue's tmax as well"
        )
        bar.addWidget(self.marker_box)
        self.refresh_button = QtWidgets.QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh_streams)
        bar.addWidget(self.refresh_button)
        self.connect_button = QtWidgets.QPushButton("Connect")
        self.connect_button.clicked.connect(self._toggle_connection)
        bar.addWidget(self.connect_button)
        bar.addSeparator()
        self.model_label = QtWidgets.QLabel(" no model: traces only ")
        bar.addWidget(self.model_label)

    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction("Open model…", self._open_model_dialog)
        file_menu.addAction("Save screenshots…", self._save_screenshots_dialog)
        file_menu.addSeparator()
        file_menu.addAction("Quit", self.close)
        view = self.menuBar().addMenu("&Paradigm")
        view.addAction("Open cue window", lambda: self.show_paradigm())

    # ----------------------------------------------------------------------------- model
    def load_model_file(self, path) -> None:
        """Load a model file, show it in the Model tab and use it for live decisions."""
        from sblr_rt.io.model_file import load_model

        self.set_model(load_model(path), path=str(path))

    def set_model(self, model, *, path: str | None = None) -> None:
        """Use ``model`` from now on (reconnects the live loop if one runs).

        Parameters
        ----------
        model : BCIModel
            The model.
        path : str | None
            Its file, for display.
        """
        self.model, self.model_path = model, path
        self.model_tab.set_model(model)
        if path:
            info = dict(self.model_tab.summary.info, file=Path(path).name)
            self.model_tab.set_summary(
                type(self.model_tab.summary)(**{**self.model_tab.summary.__dict__, "info": info})
            )
        name = Path(path).name if path else "calibrated model"
        classes = ", ".join(getattr(model, "classes", []))
        self.model_label.setText(f" model: {name} ({classes}) ")
        self.check_timing()
        if self.connected_stream is not None:
            self.connect_to(self.connected_stream, self._current_marker())

    def _open_model_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Open model file", "", "sblr-rt models (*.npz);;All files (*)"
        )
        if path:
            try:
                self.load_model_file(path)
            except (OSError, ValueError, TypeError, RuntimeError) as exc:
                notify(self, "Cannot open model", str(exc))

    def _on_calibrated(self, model, path: str) -> None:
        self.set_model(model, path=path or None)
        self.statusBar().showMessage(f"New model in use: {path}", 10000)
        if self.connected_stream is None:
            # classify the stream just recorded, else the one chosen in the toolbar
            desc = self.calibrate_tab.recorded_stream or self.stream_box.currentData()
            if desc is not None:
                self.connect_to(desc, self._current_marker())
        self.tabs.setCurrentWidget(self.live_tab)

    # --------------------------------------------------------------------------- streams
    def refresh_streams(self) -> None:
        """Ask LSL what streams exist (in a worker; the lists fill when it answers)."""
        from sblr_rt.stream import resolve_streams

        self.refresh_button.setEnabled(False)
        self._tasks.append(
            BackgroundTask(
                resolve_streams,
                timeout=1.0,
                on_done=self._streams_resolved,
                on_error=self._streams_failed,
                parent=self,
            )
        )

    def _streams_resolved(self, streams) -> None:
        from sblr_rt.stream import is_decision_stream

        self.refresh_button.setEnabled(True)
        # our own decision outlets are outputs: never offered as EEG or cue input
        self.streams = [s for s in streams if not is_decision_stream(s)]
        for box, marker in ((self.stream_box, False), (self.marker_box, True)):
            current = box.currentData()
            box.clear()
            if marker:
                box.addItem("(none: sliding windows only)", None)
            for desc in self.streams:
                if _is_marker(desc) == marker:
                    box.addItem(_stream_label(desc), desc)
            for i in range(box.count()):
                if current is not None and box.itemData(i) == current:
                    box.setCurrentIndex(i)
        self.calibrate_tab.set_streams(self.streams)
        if self.connected_stream is not None:
            self.calibrate_tab.follow_connection(self.connected_stream, self._current_marker())
        n_eeg = sum(not _is_marker(d) for d in self.streams)
        self.statusBar().showMessage(
            f"LSL shows {n_eeg} signal stream(s) and {len(self.streams) - n_eeg} marker stream(s)",
            5000,
        )
        if self._pending_stream is not None:
            eeg = self._find(self.stream_box, *self._pending_stream)
            markers = None
            if self._pending_markers is not None:
                markers = self._find(self.marker_box, *self._pending_markers)
            if eeg is not None and (self._pending_markers is None or markers is not None):
                self._pending_stream = self._pending_markers = None
                self.connect_to(eeg, markers)
            else:
                wanted = ", ".join(
                    repr(n) if n else f"of type {t!r}"
                    for n, t, _ in (self._pending_stream, self._pending_markers or (None,) * 3)
                    if n or t
                )
                self.statusBar().showMessage(f"Waiting for LSL stream(s) {wanted}…")
                QtCore.QTimer.singleShot(1000, self.refresh_streams)

    @staticmethod
    def _find(box, name, stype=None, source_id=None):
        """Select and return the box's stream of this name (or the only one of this type)."""

        def wanted(desc) -> bool:
            return (
                desc is not None
                and name in (None, desc.name)
                and (stype is None or desc.stype.lower() == stype.lower())
                and source_id in (None, desc.source_id)
            )

        found = [i for i in range(box.count()) if wanted(box.itemData(i))]
        if not found or (name is None and source_id is None and len(found) > 1):
            return None  # not there yet, or a type that does not choose one stream
        box.setCurrentIndex(found[0])
        return box.itemData(found[0])

    def _streams_failed(self, exc) -> None:
        self.refresh_button.setEnabled(True)
        self.statusBar().showMessage(f"Could not list LSL streams: {exc}")

    def _current_marker(self):
        return self.marker_box.currentData()

    def _toggle_connection(self) -> None:
        if self.provider is not None or self.connected_stream is not None:
            self.disconnect_stream()
            return
        desc = self.stream_box.currentData()
        if desc is None:
            self.statusBar().showMessage("No EEG stream to connect to: press Refresh.", 5000)
            return
        self.connect_to(desc, self._current_marker())

    def connect_to(self, desc, markers=None) -> None:
        """Connect the Live tab to a stream (the online loop if a model is loaded).

        Parameters
        ----------
        desc : StreamDescription
            The EEG stream.
        markers : StreamDescription | None
            A marker stream: trial mode with decisions at each cue too.
        """
        if self._closed:  # a stream list that arrived after the window closed
            return
        previous = self._detach()
        connection = self._connection
        self.connected_stream = desc
        self.calibrate_tab.follow_connection(desc, markers)  # record what is shown
        self.connect_button.setText("Disconnect")
        self.statusBar().showMessage(f"Connecting to {desc.name}…")
        self._tasks.append(
            BackgroundTask(
                self._make_provider,
                desc,
                markers,
                self.model,
                previous,
                connection,
                on_done=lambda provider: self._connected(provider, connection),
                on_error=lambda exc: self._connect_failed(exc, connection),
                parent=self,
                executor=self._live_thread,
            )
        )

    def _make_provider(self, desc, markers, model, previous, connection):
        # runs on the live thread: resolving and opening inlets may take seconds
        from sblr_rt.gui.providers import open_provider

        if previous is not None:  # its outlets close before the new loop opens the same names
            self._stop_open(previous)
        if connection != self._connection:  # superseded before it opened
            return None
        provider = open_provider(
            desc,
            markers,
            model,
            hop=self.hop,
            adapt=self.adapt,
            model_path=self.model_path,
            rename=self.rename_channels,
            outlet_name=self.outlet_name,
        )
        self._open.add(provider)
        if connection != self._connection:  # superseded while it opened
            self._stop_open(provider)
            return None
        return provider

    def _stop_open(self, provider) -> None:
        # runs on the live thread
        self._open.discard(provider)
        provider.stop()

    def _connected(self, provider, connection: int) -> None:
        if provider is None:  # superseded: nothing was kept open
            return
        if connection != self._connection:  # superseded meanwhile
            self._stop_provider(provider)
            return
        self.provider = provider
        self.connection_error = None
        classes = getattr(self.model, "classes", None) if self.model is not None else None
        window = None if self.model is None else (self.model.tmin, self.model.tmax)
        self.live_tab.set_provider(provider, classes=classes, window=window)
        what = "classifying" if self.model is not None else "showing traces of"
        self.statusBar().showMessage(f"Connected: {what} {self.connected_stream.name}", 5000)

    def _connect_failed(self, exc, connection: int) -> None:
        if connection != self._connection:  # a superseded connection: not the user's concern
            logger.info("a superseded connection failed: %s", exc)
            return
        self.connected_stream = None
        self.connection_error = exc
        self.connect_button.setText("Connect")
        self.statusBar().showMessage(f"Could not connect: {exc}")
        self.live_tab.banner.setText(f"Could not connect: {exc}")
        self.live_tab.banner.show()
        notify(self, "Could not connect", str(exc))

    def disconnect_stream(self) -> None:
        """Stop polling and stop the loop or source (in a worker)."""
        provider = self._detach()
        if provider is not None:
            self._stop_provider(provider)

    def _detach(self):
        """Stop showing the connected stream; return its provider (None: none), unstopped."""
        provider, self.provider = self.provider, None
        self.connected_stream = None
        self._connection += 1  # a connection still opening stops what it opens
        self.live_tab.set_provider(None)
        self.connect_button.setText("Connect")
        return provider

    def _stop_provider(self, provider) -> None:
        if self._closed:  # closing stopped every provider open
            return
        self._tasks.append(
            BackgroundTask(self._stop_open, provider, parent=self, executor=self._live_thread)
        )

    # -------------------------------------------------------------------------- paradigm
    def show_paradigm(self, config=None):
        """Open (or raise) the cue window; return it."""
        from sblr_rt.gui.paradigm import ParadigmWindow

        if self.paradigm is None:
            self.paradigm = ParadigmWindow(config)
            self.paradigm.marker_sent.connect(self._paradigm_marker)
            # publish the marker stream at once, so it can be chosen for recording
            self.paradigm.open_outlet()
            QtCore.QTimer.singleShot(1000, self.refresh_streams)
        elif config is not None and not self.paradigm.running:
            self.paradigm.config = config
        self.paradigm.show()
        self.paradigm.raise_()
        return self.paradigm

    def check_timing(self, config=None) -> str | None:
        """Say (status bar, log) how the model's window differs from the cue paradigm's trials.

        Parameters
        ----------
        config : ParadigmConfig | None
            The paradigm; None: the Calibrate tab's fields.

        Returns
        -------
        line : str | None
            :func:`sblr_rt.timing.timing_mismatch`'s line; None without a model, or when
            the window ends within the paradigm's cue and imagery.
        """
        from sblr_rt.timing import timing_mismatch

        if self.model is None:
            return None
        try:
            config = config or self.calibrate_tab.paradigm_panel.config()
        except (ValueError, TypeError):  # fields being edited: checked when the run starts
            return None
        line = timing_mismatch(
            self.model.tmin,
            self.model.tmax,
            config.cue + config.imagery,
            source=f"the cue paradigm's cue {config.cue:g} s + imagery {config.imagery:g} s",
        )
        if line is not None:
            logger.warning("%s", line)
            self.statusBar().showMessage(line)
        return line

    def _on_paradigm_requested(self, config, start: bool) -> None:
        self.check_timing(config)
        window = self.show_paradigm(config)
        window.feedback_enabled = self.calibrate_tab.p_feedback.isChecked()
        if start:
            if window.running:
                window.stop()
            window.start(config)

    def _stop_paradigm(self) -> None:
        if self.paradigm is not None:
            self.paradigm.stop()

    def _paradigm_marker(self, value: str, flip: float) -> None:
        self.calibrate_tab.paradigm_status.setText(
            f"last marker sent: '{value}' at LSL time {flip:.3f} on stream "
            f"'{self.paradigm.marker_name}'"
        )

    def _feed_paradigm(self, snapshot) -> None:
        if self.paradigm is None or not self.paradigm.feedback_enabled:
            return
        decisions = [d for d in snapshot.decisions if not d.trial]
        if decisions:  # the evidence over the trial, not one noisy window
            latest = decisions[-1]
            self.paradigm.set_feedback(latest.proba_smoothed or latest.proba)

    # ------------------------------------------------------------------------ screenshots
    def _save_screenshots_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Screenshot base name", "dashboard.png", "PNG (*.png)"
        )
        if path:
            from sblr_rt.gui.screenshot import save_screenshots

            paths = save_screenshots(self, path)
            self.statusBar().showMessage("Saved " + ", ".join(str(p) for p in paths), 10000)

    def closeEvent(self, event):
        """Stop the loop and close the cue window with the main window."""
        if self._closed:  # closed before: everything is stopped
            super().closeEvent(event)
            return
        self._detach()  # a connection still opening stops what it opens
        self._closed = True
        recorder, self.calibrate_tab.recorder = self.calibrate_tab.recorder, None

        def stop_everything():  # on the live thread, after what is queued there
            stoppers = [p.stop for p in self._open] + ([recorder.stop] if recorder else [])
            self._open.clear()
            _stop_all(stoppers)

        # a bounded wait: closing never hangs on LSL
        done = self._live_thread.submit(stop_everything)
        try:
            done.result(timeout=CLOSE_SECONDS)
        except TimeoutError:
            logger.warning(
                "the live stream did not stop within %.0f s; closing anyway", CLOSE_SECONDS
            )
        self._live_thread.shutdown(wait=False)
        if self.paradigm is not None:
            self.paradigm.close()
        super().closeEvent(event)


def _stop_all(stoppers) -> None:
    for stop in stoppers:
        try:
            stop()
        except Exception:
            logger.exception("stopping %s failed", stop)


def run(
    *,
    model=None,
    stream: str | None = None,
    markers: str | None = None,
    markers_source_id: str | None = None,
    stream_type: str | None = None,
    marker_type: str | None = None,
    screenshot=None,
    source_id: str | None = None,
    hop: float = 0.05,
    settle=3.0,
    adapt: dict | None = None,
    rename_channels=None,
    outlet_name: str = DEFAULT_OUTLET_NAME,
) -> int:
    """Open the dashboard (or render screenshots and return).

    Parameters
    ----------
    model : str | Path | BCIModel | None
        Model (file) to show and to classify with.
    stream : str | None
        EEG stream name to connect to at start.
    markers : str | None
        Marker stream name: trial mode, with a decision at each cue as well.
    markers_source_id : str | None
        Its ``source_id``.
    stream_type, marker_type : str | None
        Or the type (any case) of the only EEG / marker stream to connect to.
    screenshot : str | Path | None
        Render each tab to ``<stem>-<tab>.png`` (and the cue window; for an ensemble the
        Model tab once per member, ``<stem>-model-<k>.png``) and exit.
    hop : float
        Seconds between decisions of the online loop.
    settle : float
        With ``screenshot`` and ``stream``: seconds of live data to wait for first.
    adapt : dict | None
        Adapt the model during the session (see :class:`MainWindow`).
    source_id : str | None
        The EEG stream's ``source_id``.
    rename_channels : ChannelRenaming | None
        Stream label -> model label (see :class:`MainWindow`).
    outlet_name : str
        The live loop's decision outlets (see :class:`MainWindow`).

    Returns
    -------
    code : int
        Exit code.
    """
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["sblr-rt gui"])
    window = MainWindow(
        model=model,
        stream=stream,
        source_id=source_id,
        markers=markers,
        markers_source_id=markers_source_id,
        stream_type=stream_type,
        marker_type=marker_type,
        hop=hop,
        adapt=adapt,
        rename_channels=rename_channels,
        outlet_name=outlet_name,
    )
    if screenshot is not None:
        from sblr_rt.gui.screenshot import LIVE_TIMEOUT, save_screenshots, wait_for_live

        window.show()
        deadline = time.monotonic() + 3.0
        while not window.refresh_button.isEnabled() and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.02)
        if stream is not None or stream_type is not None:
            wait_for_live(window, timeout=max(LIVE_TIMEOUT, settle + 8.0), settle=settle)
        paths = save_screenshots(window, screenshot)
        for path in paths:
            logger.info("wrote %s", path)
        failed = window.connection_error
        window.close()
        app.processEvents()
        if failed is not None:
            raise RuntimeError(
                f"could not connect to the stream: {failed} (the screenshots show the Live "
                "tab with this error and no data)"
            )
        return 0
    window.show()
    # SIGTERM closes the window as its close button does: the loop, the adapter and its
    # refit worker stop (cli's handler would raise inside a Qt slot instead).
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: window.close())
    try:
        return int(app.exec_())
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

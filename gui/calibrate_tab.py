"""The Calibrate tab: data from a stream or a file, calibration in a worker, then live.

1. Data: record the chosen EEG stream and marker stream (the cue window below can
   provide the markers), or pick recording files.
2. Settings: a calibration TOML and the most used fields (classes, window, features,
   search).
3. Calibrate: :func:`sblr_rt.calibration.calibrate` runs in a worker thread with a progress bar;
   the model is saved and, if asked, replaces the live model at once (no restart).
"""

from __future__ import annotations

import datetime as _dt
import logging
import threading
from pathlib import Path

from PyQt5 import QtCore, QtWidgets
from sblr_rt.gui.background import BackgroundTask
from sblr_rt.gui.paradigm_panel import ParadigmPanel, spin_box
from sblr_rt.gui.schedule import ParadigmConfig
from sblr_rt.gui.widgets import notify

from sblr_rt.timing import DEFAULT_WINDOW

logger = logging.getLogger("sblr_rt.gui")


def _stream_label(desc) -> str:
    rate = f"{desc.sfreq:g} Hz" if desc.sfreq > 0 else "irregular"
    return f"{desc.name} ({desc.stype}, {desc.n_channels} ch @ {rate})"


class CalibrateTab(QtWidgets.QWidget):
    """Record or choose data, calibrate in the background, use the model live.

    Parameters
    ----------
    parent : QWidget | None
        Parent widget.
    """

    #: emitted with (model, saved path) when a calibration finished
    model_ready = QtCore.pyqtSignal(object, str)
    #: emitted when the user asks to refresh the list of LSL streams
    refresh_requested = QtCore.pyqtSignal()
    #: emitted with a ParadigmConfig when the user opens / starts the cue window
    paradigm_requested = QtCore.pyqtSignal(object, bool)
    #: emitted when the user stops the cue window's run
    paradigm_stop_requested = QtCore.pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.streams: list = []
        self.recorder = None
        self.recording = None
        self.recorded_stream = None
        self.model = None
        self.model_path: str | None = None
        self.task: BackgroundTask | None = None
        self._progress = (0, 0, "")
        self._progress_lock = threading.Lock()
        self._build()
        self._timer = QtCore.QTimer(self)
        self._timer.timeout.connect(self._poll)
        self._timer.start(200)

    # ---------------------------------------------------------------------------- layout
    def _build(self) -> None:
        outer = QtWidgets.QHBoxLayout(self)
        left = QtWidgets.QVBoxLayout()
        outer.addLayout(left, 3)
        right = QtWidgets.QVBoxLayout()
        outer.addLayout(right, 2)
        left.addWidget(self._build_data())
        left.addWidget(self._build_settings())
        left.addWidget(self._build_run(), 1)
        self.paradigm_panel = ParadigmPanel()
        self.paradigm_panel.requested.connect(self.paradigm_requested)
        self.paradigm_panel.stop_requested.connect(self.paradigm_stop_requested)
        # the main window reads these two
        self.p_feedback = self.paradigm_panel.feedback
        self.paradigm_status = self.paradigm_panel.status
        right.addWidget(self.paradigm_panel)
        right.addStretch(1)

    def _build_data(self) -> QtWidgets.QGroupBox:
        data = QtWidgets.QGroupBox("1. Data")
        form = QtWidgets.QGridLayout(data)
        self.use_stream = QtWidgets.QRadioButton("Record from LSL")
        self.use_file = QtWidgets.QRadioButton("Recording file(s)")
        self.use_stream.setChecked(True)
        form.addWidget(self.use_stream, 0, 0)
        form.addWidget(QtWidgets.QLabel("EEG stream"), 0, 1)
        self.eeg_box = QtWidgets.QComboBox()
        form.addWidget(self.eeg_box, 0, 2)
        refresh = QtWidgets.QPushButton("Refresh streams")
        refresh.clicked.connect(self.refresh_requested)
        form.addWidget(refresh, 0, 3)
        form.addWidget(QtWidgets.QLabel("Marker stream"), 1, 1)
        self.marker_box = QtWidgets.QComboBox()
        form.addWidget(self.marker_box, 1, 2)
        self.record_button = QtWidgets.QPushButton("Start recording")
        self.record_button.clicked.connect(self._toggle_recording)
        form.addWidget(self.record_button, 1, 3)
        self.record_status = QtWidgets.QLabel("not recording")
        form.addWidget(self.record_status, 2, 1, 1, 3)
        form.addWidget(self.use_file, 3, 0)
        self.file_edit = QtWidgets.QLineEdit()
        self.file_edit.setPlaceholderText("EDF/BDF/GDF/FIF/XDF/.mat; several separated by ';'")
        form.addWidget(self.file_edit, 3, 1, 1, 2)
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse_files)
        form.addWidget(browse, 3, 3)
        return data

    def _build_settings(self) -> QtWidgets.QGroupBox:
        settings = QtWidgets.QGroupBox("2. Settings")
        form = QtWidgets.QFormLayout(settings)
        row = QtWidgets.QHBoxLayout()
        self.config_edit = QtWidgets.QLineEdit()
        self.config_edit.setPlaceholderText("optional calibration.toml (fields below win)")
        row.addWidget(self.config_edit)
        browse_cfg = QtWidgets.QPushButton("Browse…")
        browse_cfg.clicked.connect(
            lambda: self._browse_into(self.config_edit, "TOML (*.toml);;All files (*)")
        )
        row.addWidget(browse_cfg)
        form.addRow("Configuration", row)
        self.classes_edit = QtWidgets.QLineEdit()
        self.classes_edit.setPlaceholderText("marker values, e.g. left, right (empty: all)")
        form.addRow("Classes", self.classes_edit)
        self.features_box = QtWidgets.QComboBox()
        self.features_box.addItems(["auto", "waveform", "bandpower", "spectral", "covariance"])
        form.addRow("Features", self.features_box)
        window = QtWidgets.QHBoxLayout()
        self.tmin_spin = spin_box(-5, 10, DEFAULT_WINDOW[0])  # as sblr-rt calibrate
        self.tmax_spin = spin_box(-5, 20, DEFAULT_WINDOW[1])
        for widget in (
            QtWidgets.QLabel("from"),
            self.tmin_spin,
            QtWidgets.QLabel("to"),
            self.tmax_spin,
            QtWidgets.QLabel("s after the cue"),
        ):
            window.addWidget(widget)
        form.addRow("Epoch window", window)
        self.search_box = QtWidgets.QComboBox()
        self.search_box.addItems(["fast", "none", "paper"])
        self.search_box.setToolTip(
            "fast: rank, then 6 x 6 x 5 penalties; none: rank only; paper: the full grid"
        )
        form.addRow("Hyper-parameter search", self.search_box)
        self.cv_spin = QtWidgets.QSpinBox()
        self.cv_spin.setRange(2, 20)
        self.cv_spin.setValue(5)
        form.addRow("CV folds", self.cv_spin)
        return settings

    def _build_run(self) -> QtWidgets.QGroupBox:
        run = QtWidgets.QGroupBox("3. Calibrate")
        form = QtWidgets.QVBoxLayout(run)
        out = QtWidgets.QHBoxLayout()
        out.addWidget(QtWidgets.QLabel("Save model as"))
        self.out_edit = QtWidgets.QLineEdit(self._default_model_path())
        out.addWidget(self.out_edit)
        form.addLayout(out)
        buttons = QtWidgets.QHBoxLayout()
        self.calibrate_button = QtWidgets.QPushButton("Calibrate")
        self.calibrate_button.clicked.connect(self.start_calibration)
        buttons.addWidget(self.calibrate_button)
        self.auto_live = QtWidgets.QCheckBox("then classify live with the new model")
        self.auto_live.setChecked(True)
        buttons.addWidget(self.auto_live)
        self.use_button = QtWidgets.QPushButton("Use this model live")
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(self._use_model)
        buttons.addWidget(self.use_button)
        form.addLayout(buttons)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        form.addWidget(self.progress)
        self.report = QtWidgets.QPlainTextEdit()
        self.report.setReadOnly(True)
        self.report.setPlaceholderText("The calibration report appears here.")
        form.addWidget(self.report, 1)
        return run

    @staticmethod
    def _default_model_path() -> str:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        return str(Path.cwd() / f"model-{stamp}.sblr.npz")

    # --------------------------------------------------------------------------- streams
    def set_streams(self, streams) -> None:
        """Fill the stream lists from ``resolve_streams()`` output.

        Parameters
        ----------
        streams : list of StreamDescription
            What LSL sees.
        """
        from sblr_rt.stream import is_marker_stream

        self.streams = list(streams)
        for box, want in ((self.eeg_box, False), (self.marker_box, True)):
            current = box.currentText()
            box.clear()
            for desc in self.streams:
                if is_marker_stream(desc) == want:
                    box.addItem(_stream_label(desc), desc)
            index = box.findText(current)
            if index >= 0:
                box.setCurrentIndex(index)
            elif want:
                index = box.findText("SBLR-Paradigm", QtCore.Qt.MatchStartsWith)
                if index >= 0:
                    box.setCurrentIndex(index)

    def follow_connection(self, eeg, markers=None) -> None:
        """Choose the streams the window is connected to (the Live tab's), if listed.

        Recording for a calibration then takes the stream the person sees, not the first
        one LSL happens to list; the lists can still be changed by hand.

        Parameters
        ----------
        eeg : StreamDescription
            The connected EEG stream.
        markers : StreamDescription | None
            The connected marker stream, if any.
        """
        for box, desc in ((self.eeg_box, eeg), (self.marker_box, markers)):
            if desc is None:
                continue
            for i in range(box.count()):
                item = box.itemData(i)
                if item is not None and (item.name, item.source_id) == (
                    desc.name,
                    desc.source_id,
                ):
                    box.setCurrentIndex(i)
                    break

    # -------------------------------------------------------------------------- recording
    def _toggle_recording(self) -> None:
        if self.recorder is None:
            eeg, markers = self.eeg_box.currentData(), self.marker_box.currentData()
            if eeg is None or markers is None:
                notify(self, "Choose streams", "Choose an EEG stream and a marker stream first.")
                return
            try:
                recorder = self._new_recorder(eeg, markers)
            except (OSError, ValueError, RuntimeError) as exc:
                self._recording_failed(exc)
                return
            self.recorded_stream = eeg
            self.record_button.setEnabled(False)
            self.record_status.setText(f"connecting to {eeg.name} and {markers.name}…")
            self.task = BackgroundTask(
                recorder.start,
                on_done=self._recording_started,
                on_error=self._recording_failed,
                parent=self,
            )
        else:
            recorder, self.recorder = self.recorder, None
            self.record_button.setEnabled(False)
            self.task = BackgroundTask(
                recorder.stop,
                on_done=self._recording_stopped,
                on_error=self._recording_failed,
                parent=self,
            )

    def _new_recorder(self, eeg, markers):
        from sblr_rt.gui.stream_recorder import StreamRecorder, default_recording_path

        # the recording goes next to the model it will calibrate
        folder = Path(self.out_edit.text().strip() or self._default_model_path()).parent
        return StreamRecorder(
            default_recording_path(folder),
            name=eeg.name,
            source_id=eeg.source_id,
            marker_name=markers.name,
            marker_source_id=markers.source_id,
        )

    def _recording_started(self, recorder) -> None:
        self.recorder = recorder
        self.use_stream.setChecked(True)
        self.record_button.setText("Stop recording")
        self.record_button.setEnabled(True)

    def _recording_stopped(self, recording) -> None:
        self.recording = recording
        self.record_button.setText("Start recording")
        self.record_button.setEnabled(True)
        seconds = recording.data.shape[1] / recording.sfreq
        self.record_status.setText(
            f"recorded {seconds:.1f} s of {len(recording.ch_names)} channels with "
            f"{len(recording.marker_values)} markers in {Path(recording.source).name}: "
            "ready to calibrate"
        )

    def _recording_failed(self, exc) -> None:
        self.recorder = None
        self.record_button.setText("Start recording")
        self.record_button.setEnabled(True)
        self.record_status.setText(f"<span style='color:#B2182B'>recording failed: {exc}</span>")

    # ------------------------------------------------------------------------ calibration
    def _browse_files(self) -> None:
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(self, "Recordings")
        if paths:
            self.file_edit.setText(";".join(paths))
            self.use_file.setChecked(True)

    def _browse_into(self, edit, filters) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open", "", filters)
        if path:
            edit.setText(path)

    def calibration_arguments(self) -> tuple[object, dict]:
        """Return ``(recordings, keyword arguments)`` for :func:`sblr_rt.calibration.calibrate`."""
        if self.use_file.isChecked():
            paths = [p.strip() for p in self.file_edit.text().split(";") if p.strip()]
            if not paths:
                raise ValueError("'Recording file(s)' is empty: choose at least one file")
            recordings = paths
            self.recorded_stream = None  # nothing live to switch to but the toolbar's
        else:
            if self.recording is None:
                raise RuntimeError(
                    "nothing recorded yet: press 'Start recording', run the paradigm, then "
                    "'Stop recording' (or choose recording files)"
                )
            recordings = self.recording
        kwargs = {
            "features": self.features_box.currentText(),
            "tmin": self.tmin_spin.value(),
            "tmax": self.tmax_spin.value(),
            "search": self.search_box.currentText(),
            "cv": self.cv_spin.value(),
        }
        classes = [c.strip() for c in self.classes_edit.text().split(",") if c.strip()]
        if classes:
            kwargs["classes"] = classes
        config = self.config_edit.text().strip()
        if config:
            kwargs["config"] = config
        return recordings, kwargs

    def start_calibration(self) -> None:
        """Run :func:`sblr_rt.calibration.calibrate` in a worker thread."""
        if self.task is not None and not self.task.done:
            return
        try:
            recordings, kwargs = self.calibration_arguments()
        except (ValueError, RuntimeError) as exc:
            notify(self, "Cannot calibrate yet", str(exc))
            return
        out = self.out_edit.text().strip() or self._default_model_path()
        self.calibrate_button.setEnabled(False)
        self.use_button.setEnabled(False)
        self.progress.setRange(0, 0)  # busy until the first report
        self.progress.setFormat("reading data and cutting epochs…")
        self.report.setPlainText(f"calibrate({recordings!r}, {kwargs})\n")
        self._progress = (0, 0, "")
        self.task = BackgroundTask(
            self._calibrate,
            recordings,
            kwargs,
            out,
            on_done=self._calibrated,
            on_error=self._calibration_failed,
            parent=self,
        )

    def _report_progress(self, done, total, stage="") -> None:
        # called from the worker thread: store only, the GUI timer shows it
        with self._progress_lock:
            self._progress = (int(done), int(total), str(stage))

    def _calibrate(self, recordings, kwargs, out):
        from sblr_rt.calibration import calibrate

        model = calibrate(recordings, progress=self._report_progress, **kwargs)
        from sblr_rt.io.model_file import save_model

        save_model(model, out)
        return model, out

    def _calibrated(self, result) -> None:
        model, path = result
        self.model, self.model_path = model, path
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat("done")
        self.calibrate_button.setEnabled(True)
        self.use_button.setEnabled(True)
        self.out_edit.setText(self._default_model_path())
        self.report.appendPlainText(_describe(model, path))
        if self.auto_live.isChecked():
            self._use_model()

    def _calibration_failed(self, exc) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("failed")
        self.calibrate_button.setEnabled(True)
        self.report.appendPlainText(f"FAILED: {type(exc).__name__}: {exc}")

    def _use_model(self) -> None:
        if self.model is not None:
            self.model_ready.emit(self.model, self.model_path or "")

    def _poll(self) -> None:
        if self.recorder is not None:
            try:
                state = self.recorder.poll()
            except Exception as exc:
                self.record_status.setText(f"recording: {exc}")
            else:
                counts = ", ".join(f"{k} {v}" for k, v in sorted(state["counts"].items()))
                lost = "" if state["connected"] else " — EEG STREAM LOST"
                self.record_status.setText(
                    f"recording: {state['seconds']:.1f} s, {state['n_markers']} markers "
                    f"({counts or 'none yet'}){lost}"
                )
        if self.task is not None and not self.task.done and self.progress.maximum() == 0:
            with self._progress_lock:
                done, total, stage = self._progress
            if total:
                self.progress.setRange(0, total)
        if self.task is not None and not self.task.done and self.progress.maximum() > 0:
            with self._progress_lock:
                done, total, stage = self._progress
            self.progress.setMaximum(max(total, 1))
            self.progress.setValue(done)
            label = {"rank": "choosing the rank", "grid": "searching the penalties"}
            self.progress.setFormat(f"{label.get(stage, stage)}: {done}/{total} fits (%p%)")

    # --------------------------------------------------------------------------- paradigm
    def paradigm_config(self) -> ParadigmConfig:
        """Return the cue paradigm configuration from the fields."""
        return self.paradigm_panel.config()


def _describe(model, path: str) -> str:
    from sblr_rt.calibration.outcome import CalibrationOutcome

    lines = [f"saved {path}", repr(model), *CalibrationOutcome.from_model(model).lines()]
    return "\n".join(lines)

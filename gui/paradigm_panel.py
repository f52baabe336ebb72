"""The Calibrate tab's cue-paradigm panel: the fields of a :class:`ParadigmConfig`."""

from __future__ import annotations

from PyQt5 import QtCore, QtWidgets
from sblr_rt.gui.schedule import ParadigmConfig, load_paradigm_config
from sblr_rt.gui.widgets import notify

_HELP = (
    "To calibrate on a live stream: open the cue window (it publishes the marker "
    "stream 'SBLR-Paradigm'), choose the EEG stream and 'SBLR-Paradigm' on the left, "
    "press 'Start recording', then 'Start run'; when the run ends, 'Stop recording' "
    "and 'Calibrate'."
)


def spin_box(lo: float, hi: float, value: float) -> QtWidgets.QDoubleSpinBox:
    """Return a spin box for seconds from ``lo`` to ``hi`` set to ``value``."""
    spin = QtWidgets.QDoubleSpinBox()
    spin.setRange(lo, hi)
    spin.setDecimals(2)
    spin.setSingleStep(0.25)
    spin.setValue(value)
    return spin


class ParadigmPanel(QtWidgets.QGroupBox):
    """Edit a Graz-style cue paradigm; ask for its window to open, start or stop.

    Parameters
    ----------
    parent : QWidget | None
        Parent widget.
    """

    #: emitted with a ParadigmConfig when the user opens (False) / starts (True) the run
    requested = QtCore.pyqtSignal(object, bool)
    #: emitted when the user stops the run
    stop_requested = QtCore.pyqtSignal()

    def __init__(self, parent=None):
        super().__init__("Cue paradigm (Graz-style, its own window)", parent)
        form = QtWidgets.QFormLayout(self)
        defaults = ParadigmConfig()
        self.classes = QtWidgets.QLineEdit(", ".join(defaults.classes))
        form.addRow("Classes (= cue markers)", self.classes)
        self.trials = QtWidgets.QSpinBox()
        self.trials.setRange(1, 500)
        self.trials.setValue(defaults.n_trials_per_class)
        form.addRow("Trials per class", self.trials)
        self.fixation = spin_box(0, 30, defaults.fixation)
        form.addRow("Fixation (s)", self.fixation)
        self.cue = spin_box(0.05, 30, defaults.cue)
        form.addRow("Cue shown (s)", self.cue)
        self.imagery = spin_box(0, 60, defaults.imagery)
        form.addRow("Imagery after cue (s)", self.imagery)
        rest = QtWidgets.QHBoxLayout()
        self.rest_min = spin_box(0, 60, defaults.rest_min)
        self.rest_max = spin_box(0, 60, defaults.rest_max)
        rest.addWidget(self.rest_min)
        rest.addWidget(QtWidgets.QLabel("to"))
        rest.addWidget(self.rest_max)
        form.addRow("Rest, jittered (s)", rest)
        self.feedback = QtWidgets.QCheckBox("feedback bar from live decisions (online mode)")
        form.addRow(self.feedback)
        form.addRow(self._buttons())
        self.status = QtWidgets.QLabel(_HELP)
        self.status.setWordWrap(True)
        form.addRow(self.status)

    def _buttons(self) -> QtWidgets.QHBoxLayout:
        row = QtWidgets.QHBoxLayout()
        for label, slot in (
            ("Load TOML…", self._load),
            ("Open cue window", lambda: self._request(start=False)),
            ("Start run", lambda: self._request(start=True)),
            ("Stop run", self.stop_requested),
        ):
            button = QtWidgets.QPushButton(label)
            button.clicked.connect(slot)
            row.addWidget(button)
        return row

    def config(self) -> ParadigmConfig:
        """Return the paradigm configuration from the fields."""
        classes = tuple(c.strip() for c in self.classes.text().split(",") if c.strip())
        return ParadigmConfig(
            classes=classes,
            n_trials_per_class=self.trials.value(),
            fixation=self.fixation.value(),
            cue=self.cue.value(),
            imagery=self.imagery.value(),
            rest_min=self.rest_min.value(),
            rest_max=max(self.rest_min.value(), self.rest_max.value()),
        )

    def set_config(self, config: ParadigmConfig) -> None:
        """Show ``config`` in the fields."""
        self.classes.setText(", ".join(config.classes))
        self.trials.setValue(config.n_trials_per_class)
        for spin, value in (
            (self.fixation, config.fixation),
            (self.cue, config.cue),
            (self.imagery, config.imagery),
            (self.rest_min, config.rest_min),
            (self.rest_max, config.rest_max),
        ):
            spin.setValue(value)

    def _load(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Paradigm TOML", "", "TOML (*.toml);;All files (*)"
        )
        if not path:
            return
        try:
            self.set_config(load_paradigm_config(path))
        except (OSError, ValueError, TypeError) as exc:
            notify(self, "Cannot load", str(exc))

    def _request(self, *, start: bool) -> None:
        try:
            config = self.config()
        except (ValueError, TypeError) as exc:
            notify(self, "Paradigm settings", str(exc))
            return
        self.requested.emit(config, start)

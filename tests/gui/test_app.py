"""The main window: live connection, model swaps and calibration from the Calibrate tab."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gui


@pytest.mark.slow
def test_calibrate_tab_trains_in_a_worker_and_switches_the_model(qtbot, tmp_path, physionet_dir):
    from sblr_rt.gui.app import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    tab = window.calibrate_tab
    tab.use_file.setChecked(True)
    tab.file_edit.setText(str(physionet_dir / "S001R06.edf"))
    tab.classes_edit.setText("T1, T2")
    from sblr_rt.timing import DEFAULT_WINDOW

    assert (tab.tmin_spin.value(), tab.tmax_spin.value()) == DEFAULT_WINDOW  # as calibrate
    tab.tmin_spin.setValue(0.5)
    tab.tmax_spin.setValue(2.5)
    tab.search_box.setCurrentText("none")
    tab.cv_spin.setValue(2)
    config = tmp_path / "calibration.toml"
    config.write_text("ranks = [1]\nn_times = 20\nn_jobs = 1\n")
    tab.config_edit.setText(str(config))
    tab.out_edit.setText(str(tmp_path / "calibrated.sblr.npz"))
    with qtbot.waitSignal(tab.model_ready, timeout=120_000) as blocker:
        tab.calibrate_button.click()
        # the GUI thread is free while the worker calibrates
        assert not tab.calibrate_button.isEnabled()
    model, path = blocker.args
    assert path.endswith("calibrated.sblr.npz")
    assert model.classes == ["T1", "T2"]
    assert tab.progress.format() == "done"
    # the new model is in use at once: Model tab and toolbar show it
    assert window.model is model
    assert window.model_tab.summary.classes == ["T1", "T2"]
    assert "calibrated.sblr.npz" in window.model_label.text()


@pytest.mark.lsl
@pytest.mark.slow
def test_window_connects_in_a_worker_and_swaps_the_model_live(qtbot, sim_model, source_id):
    from sblr_rt.gui.app import MainWindow

    from .conftest import simulated_model, start_simulator

    name = f"GuiWin-{source_id[-12:]}"
    player = start_simulator(name, source_id)
    window = MainWindow(model=sim_model, stream=name, outlet_name=name + "-Pred")
    qtbot.addWidget(window)
    try:
        # resolution and connection happen in workers; the timeline fills
        qtbot.waitUntil(lambda: window.provider is not None, timeout=20_000)
        first = window.provider
        qtbot.waitUntil(
            lambda: (
                window.live_tab.last_snapshot is not None
                and len(window.live_tab.last_snapshot.decisions) > 3
            ),
            timeout=20_000,
        )
        # a new model replaces the running one without a restart of the program
        other = simulated_model(rank=1, seed=1)
        window.set_model(other)
        qtbot.waitUntil(
            lambda: window.provider is not None and window.provider is not first,
            timeout=20_000,
        )
        assert window.provider.classifier.model is other
        qtbot.waitUntil(
            lambda: (
                window.live_tab.last_snapshot is not None
                and len(window.live_tab.last_snapshot.decisions) > 3
            ),
            timeout=20_000,
        )
        assert window.model_tab.summary.scores[0].rank == 1
        # the decisions go out under the name the window was given
        import pylsl

        found = pylsl.resolve_byprop("name", name + "-Pred", 1, 10.0)
        assert found and found[0].type() == "Markers"
    finally:
        window.close()
        player.stop()


@pytest.mark.lsl
@pytest.mark.slow
def test_cue_window_recording_calibration_then_live(qtbot, tmp_path, source_id):
    """The whole session from the GUI: cues -> recording -> calibration -> live decisions."""
    from PyQt5 import QtCore
    from sblr_rt.gui.app import MainWindow
    from sblr_rt.gui.schedule import ParadigmConfig

    from sblr_rt.io import read_recording
    from sblr_rt.playback.simulator import run_simulator

    name = f"GuiFlow-{source_id[-12:]}"
    player = run_simulator(
        name=name, source_id=source_id, sfreq=100.0, n_channels=8, background=True
    )
    window = MainWindow(outlet_name=name + "-Pred")  # each test's decisions its own outlets
    qtbot.addWidget(window)
    tab = window.calibrate_tab
    config = ParadigmConfig(
        classes=("left", "right"),
        n_trials_per_class=4,
        fixation=0.1,
        cue=0.2,
        imagery=0.4,
        rest_min=0.1,
        rest_max=0.2,
        lead_in=0.3,
        seed=0,
    )
    try:
        window._on_paradigm_requested(config, False)  # opens the window and its outlet
        marker_name = window.paradigm.marker_name

        def listed():
            eeg = tab.eeg_box.findText(name, QtCore.Qt.MatchStartsWith)
            markers = tab.marker_box.findText(marker_name, QtCore.Qt.MatchStartsWith)
            if eeg < 0 or markers < 0:
                window.refresh_streams() if window.refresh_button.isEnabled() else None
                return False
            tab.eeg_box.setCurrentIndex(eeg)
            tab.marker_box.setCurrentIndex(markers)
            return True

        qtbot.waitUntil(listed, timeout=20_000)
        tab.out_edit.setText(str(tmp_path / "flow.sblr.npz"))  # the recording goes there too
        tab.record_button.click()
        qtbot.waitUntil(lambda: tab.recorder is not None, timeout=20_000)
        with qtbot.waitSignal(window.paradigm.finished, timeout=30_000):
            window._on_paradigm_requested(config, True)
        last_flip = window.paradigm.log[-1][1]
        qtbot.waitUntil(lambda: tab.recorder.last_timestamp > last_flip, timeout=5_000)
        tab.record_button.click()
        qtbot.waitUntil(lambda: tab.recording is not None, timeout=20_000)
        assert tab.recording.marker_values.count("left") == 4
        (recorded,) = tmp_path.glob("calibration-*_raw.fif")  # the one recorder's FIF
        assert read_recording(recorded).marker_values == tab.recording.marker_values
        assert not list(tmp_path.glob("*.rec"))
        tab.tmin_spin.setValue(0.0)
        tab.tmax_spin.setValue(0.5)
        tab.features_box.setCurrentText("waveform")  # the flow is under test, not auto
        tab.search_box.setCurrentText("none")
        tab.cv_spin.setValue(2)
        tab.classes_edit.setText("left, right")
        tab.out_edit.setText(str(tmp_path / "flow.sblr.npz"))
        with qtbot.waitSignal(tab.model_ready, timeout=120_000):
            tab.calibrate_button.click()
        # live classification with the new model, without a restart
        qtbot.waitUntil(
            lambda: (
                window.live_tab.last_snapshot is not None
                and len(window.live_tab.last_snapshot.decisions) > 3
            ),
            timeout=30_000,
        )
        assert window.live_tab.last_snapshot.stream.name == name
        assert window.provider.classifier.model is window.model
    finally:
        window.close()
        player.stop()


def test_the_feedback_bar_shows_the_smoothed_probability(qtbot):
    from types import SimpleNamespace

    from sblr_rt.gui.app import MainWindow

    from .conftest import FakeSnapshots

    window = MainWindow()
    qtbot.addWidget(window)
    shown = []
    window.paradigm = SimpleNamespace(feedback_enabled=True, set_feedback=shown.append)
    snapshot = FakeSnapshots(["C3", "C4"]).snapshot()
    window._feed_paradigm(snapshot)
    latest = [d for d in snapshot.decisions if not d["trial"]][-1]
    assert shown == [latest["proba_smoothed"]] and shown[0] != latest["proba"]
    window.paradigm = None


def test_a_model_whose_window_outlasts_the_paradigms_trials_is_named(qtbot, sim_model):
    from sblr_rt.gui.app import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.set_model(sim_model)  # [0.5, 1.5) s: within cue 1.25 s + imagery 3 s
    assert window.check_timing() is None
    panel = window.calibrate_tab.paradigm_panel
    panel.cue.setValue(0.5)
    panel.imagery.setValue(0.75)
    line = window.check_timing()
    assert line.startswith("timing differs: the model reads [0.5, 1.5) s after each cue")
    assert "cue 0.5 s + imagery 0.75 s" in line and "the last 0.25 s" in line
    assert window.statusBar().currentMessage() == line


def test_our_decision_outlets_are_never_offered_as_input(qtbot):
    from sblr_rt.gui.app import MainWindow

    from sblr_rt.stream import StreamDescription

    def desc(name, stype, source_id, fmt, sfreq, n=1):
        return StreamDescription(name, stype, source_id, n, sfreq, fmt, "host", name)

    window = MainWindow()
    qtbot.addWidget(window)
    window._streams_resolved(
        [
            desc("EEG", "EEG", "amp", "float32", 250.0, 8),
            desc("Cues", "Markers", "cues", "string", 0.0),
            desc("SBLR-Predictions", "Markers", "sblr-rt-decisions-x", "string", 0.0),
            desc("Feedback-Numeric", "Predictions", "sblr-rt-decisions-y", "float32", 0.0, 6),
        ]
    )
    eeg = [window.stream_box.itemData(i) for i in range(window.stream_box.count())]
    markers = [window.marker_box.itemData(i) for i in range(window.marker_box.count())]
    assert [d.name for d in eeg] == ["EEG"]
    assert [d.name for d in markers if d is not None] == ["Cues"]


@pytest.mark.lsl
@pytest.mark.slow
def test_an_adapting_session_shows_its_model_version_and_its_warm_up(
    qtbot, sim_model_file, source_id, tmp_path
):
    # gui --adapt: the Live tab's loop comes with an Adapter; with no calibration runs the
    # first trials wait for three of each class (a status, not a failed refit), the model
    # keeps deciding, and the status line says so.
    from sblr_rt.gui.app import MainWindow
    from sblr_rt.gui.providers import AdaptingSession

    from .conftest import start_simulator

    name = f"GuiAdapt-{source_id[-12:]}"
    player = start_simulator(name, source_id)
    folder = tmp_path / "versions"
    adapt = {"folder": folder, "calibration": [], "every": 0}
    window = MainWindow(
        model=sim_model_file,
        stream=name,
        markers=name + "-Markers",
        adapt=adapt,
        outlet_name=name + "-Pred",
    )
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.provider is not None, timeout=20_000)
        assert isinstance(window.provider, AdaptingSession)
        assert (folder / "v0000.sblr.npz").is_file()  # the starting model, version 0
        waiting = "refit waiting for 3 trials per class"
        qtbot.waitUntil(lambda: waiting in window.live_tab.status.text(), timeout=90_000)
        status = window.live_tab.status.text()
        assert "model v0 (adapting:" in status and "failed" not in status, status
        n = len(window.live_tab.last_snapshot.decisions)
        qtbot.waitUntil(lambda: len(window.live_tab.last_snapshot.decisions) > n, timeout=10_000)
    finally:
        window.close()
        player.stop()


def test_the_calibrate_tab_records_the_stream_the_window_is_connected_to(qtbot, monkeypatch):
    import sblr_rt.gui.app as app_module
    from sblr_rt.gui.app import MainWindow

    from sblr_rt.stream import StreamDescription

    def desc(name, stype, source_id, fmt, sfreq, n=1):
        return StreamDescription(name, stype, source_id, n, sfreq, fmt, "host", name)

    streams = [
        desc("First-EEG", "EEG", "amp-1", "float32", 250.0, 8),
        desc("Second-EEG", "EEG", "amp-2", "float32", 500.0, 16),
        desc("Cues-A", "Markers", "cues-a", "string", 0.0),
        desc("Cues-B", "Markers", "cues-b", "string", 0.0),
    ]
    monkeypatch.setattr(app_module, "notify", lambda *args: None)
    window = MainWindow()
    qtbot.addWidget(window)
    monkeypatch.setattr(window, "_make_provider", lambda *args: (_ for _ in ()).throw(
        RuntimeError("no stream in this test")))  # fmt: skip
    window._streams_resolved(streams)
    tab = window.calibrate_tab
    assert tab.eeg_box.currentData().name == "First-EEG"  # LSL's first, before any choice
    window.connect_to(streams[1], streams[3])
    assert tab.eeg_box.currentData().name == "Second-EEG"
    assert tab.marker_box.currentData().name == "Cues-B"
    qtbot.waitUntil(lambda: window.connected_stream is None, timeout=10_000)  # failed
    window.connected_stream = streams[1]
    window._streams_resolved(list(reversed(streams)))  # a refresh lists them otherwise
    assert tab.eeg_box.currentData().name == "Second-EEG"


def test_a_failed_connection_is_kept_and_ends_the_screenshots_wait(qtbot, monkeypatch):
    import sblr_rt.gui.app as app_module
    from sblr_rt.gui.app import MainWindow
    from sblr_rt.gui.screenshot import wait_for_live

    from sblr_rt.stream import StreamDescription

    eeg = StreamDescription("Taken-EEG", "EEG", "amp-1", 8, 250.0, "float32", "host", "Taken-EEG")
    monkeypatch.setattr(app_module, "notify", lambda *args: None)
    window = MainWindow()
    qtbot.addWidget(window)
    refused = RuntimeError("an outlet named 'SBLR-Predictions' is already on the network")
    monkeypatch.setattr(window, "_make_provider", lambda *args: (_ for _ in ()).throw(refused))
    assert window.connection_error is None
    window.connect_to(eeg, None)
    qtbot.waitUntil(lambda: window.connection_error is not None, timeout=10_000)
    assert window.connection_error is refused
    assert "already on the network" in window.live_tab.banner.text()
    # no data will come: the wait ends now, not after its timeout (longer than the test's)
    assert wait_for_live(window, timeout=10_000.0, settle=0.0) is False

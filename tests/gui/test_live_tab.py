"""The Live tab: traces, decision timeline and status from the loop's snapshot."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from .conftest import FakeSnapshots

pytestmark = pytest.mark.gui

CH = [f"C{i}" for i in range(1, 7)] + ["Cz", "CPz", "Pz", "Oz"]


@pytest.fixture
def live_tab(qtbot):
    from sblr_rt.gui.app import configure_pyqtgraph
    from sblr_rt.gui.live_tab import LiveTab

    configure_pyqtgraph()
    tab = LiveTab()
    qtbot.addWidget(tab)
    tab.resize(1200, 800)
    tab.show()
    return tab


def test_draws_traces_decisions_and_status_from_a_snapshot(live_tab):
    fake = FakeSnapshots(CH)
    live_tab.set_provider(fake, classes=["left", "right"])
    live_tab.refresh()  # the channel list fills from the first snapshot
    live_tab.select_channels(["C3", "Cz", "C4"])
    live_tab.refresh()
    assert fake.calls[-1] == ["C3", "C4", "Cz"]  # in stream order
    snap = live_tab.last_snapshot
    x, y = live_tab.trace_curve.getData()
    # min/max decimation to about one point per pixel column, never more points than sent
    n = x.size // 3
    assert x.size == 3 * n and 100 < n <= snap.raw.times.size
    # one row per channel, stacked from the top, newest sample at the right near 0 s
    rows = np.round(y.reshape(3, -1).mean(axis=1))
    np.testing.assert_array_equal(rows, [2, 1, 0])
    assert -0.1 < x.max() <= 0
    decisions = [d for d in snap.decisions]
    t, p = live_tab.proba_curves["right"].getData()
    np.testing.assert_allclose(t, [d["window_end"] - snap.time for d in decisions])
    np.testing.assert_allclose(p, [d["proba"]["right"] for d in decisions])
    t, p = live_tab.smoothed_curves["right"].getData()  # the evidence, beside the raw
    np.testing.assert_allclose(p, [d["proba_smoothed"]["right"] for d in decisions])
    (trial,) = live_tab.trial_points.data
    assert trial["data"] == "right"
    assert trial["y"] == pytest.approx(0.8)
    status = live_tab.status.text()
    for text in ("Fake-EEG", "20.0 decisions/s", "40 µs", "2.0 ms", "gaps 1", "dropped windows 3"):
        assert text in status
    assert live_tab.banner.isHidden()
    assert not live_tab.stream_lost


def test_windows_mostly_before_a_cue_are_shaded_and_explained(live_tab):
    fake = FakeSnapshots(CH)
    live_tab.set_provider(fake, classes=["left", "right"], window=(0.5, 3.5))
    live_tab.refresh()
    snap = live_tab.last_snapshot
    ((cue, _),) = snap.cues
    (region,) = [r for r in live_tab._precue_regions if r.isVisible()]
    # sliding windows of 3 s ending within 1.5 s of the cue hold mostly pre-cue EEG
    np.testing.assert_allclose(region.getRegion(), (cue - snap.time, cue - snap.time + 1.5))
    note = live_tab.window_note.text()
    assert "3 s window" in note and "2.5 s of EEG from before the cue" in note
    assert live_tab.timeline.toolTip() == note
    live_tab.set_provider(fake, classes=["left", "right"])  # no model window: no shading
    live_tab.refresh()
    assert not any(r.isVisible() for r in live_tab._precue_regions)


def test_the_legend_lies_outside_the_timeline(live_tab):
    live_tab.set_provider(FakeSnapshots(CH), classes=["left", "right"])
    live_tab.refresh()
    # over the timeline, the legend covered the first cue's label
    timeline = live_tab.timeline.sceneBoundingRect()
    legend = live_tab.legend.sceneBoundingRect()
    assert legend.height() > 0 and not timeline.intersects(legend)
    names = [label.text for _, label in live_tab.legend.items]
    assert names == ["p(left)", "smoothed p(left)", "p(right)", "smoothed p(right)"]


def test_a_vanished_stream_is_shown(live_tab):
    fake = FakeSnapshots(CH, connected=False)
    live_tab.set_provider(fake)
    live_tab.refresh()
    assert live_tab.stream_lost
    assert not live_tab.banner.isHidden()
    assert "vanished" in live_tab.banner.text()
    assert "<b>lost</b>" in live_tab.status.text()
    # the time since the last sample is shaded as a gap
    shown = [r for r in live_tab._gap_regions if r.isVisible()]
    assert any(r.getRegion()[1] == 0.0 for r in shown)
    fake.connected = True
    live_tab.refresh()
    assert live_tab.banner.isHidden()


class _StreamState(FakeSnapshots):
    """FakeSnapshots whose stream carries the given state fields."""

    def __init__(self, ch_names, **stream):
        super().__init__(ch_names)
        self.stream = stream

    def snapshot(self, channels=None, *, n_decisions=None):
        snap = super().snapshot(channels, n_decisions=n_decisions)
        return dataclasses.replace(snap, stream=dataclasses.replace(snap.stream, **self.stream))


@pytest.mark.parametrize(
    ("stream", "shown"),
    [
        ({"state": "stalled"}, "<b>stalled</b>"),
        ({"state": "lost", "connected": False}, "<b>lost</b>"),
        (
            {"rate_far_off": True, "rate_ok": False, "effective_sfreq": 80.0},
            "<b>rate far off (80 Hz measured, 100 declared)</b>",
        ),
    ],
)
def test_the_status_line_tells_the_stream_state(live_tab, stream, shown):
    live_tab.set_provider(_StreamState(CH, **stream))
    live_tab.refresh()
    status = live_tab.status.text()
    assert shown in status and "connected" not in status
    assert "#1a9641" not in status  # not the green dot of a healthy stream
    if stream.get("state") == "stalled":
        assert "silent" in live_tab.banner.text() and not live_tab.banner.isHidden()


def test_a_healthy_stream_says_streaming(live_tab):
    live_tab.set_provider(_StreamState(CH, state="streaming", rate_ok=True))
    live_tab.refresh()
    status = live_tab.status.text()
    assert "Fake-EEG</b> streaming" in status and "#1a9641" in status


def test_a_failed_loop_is_shown_and_polling_stops(live_tab):
    class Broken:
        def snapshot(self, channels=None):
            raise RuntimeError("worker died: boom")

    live_tab.set_provider(Broken())
    live_tab.refresh()
    assert "boom" in live_tab.banner.text()
    assert not live_tab.timer.isActive()


def test_redraw_of_118_channels_is_measured(live_tab):
    """Not a timing assertion: the frame time is recorded for the benchmark figures."""
    names = [f"E{i}" for i in range(118)]
    fake = FakeSnapshots(names)
    live_tab.set_provider(fake)
    live_tab.refresh()
    live_tab.select_channels(names)
    for _ in range(3):
        live_tab.refresh()
    x, _ = live_tab.trace_curve.getData()
    assert x.size % 118 == 0 and x.size >= 118 * 200
    assert len(live_tab.frame_times) == 4


@pytest.mark.lsl
@pytest.mark.slow
def test_timeline_receives_decisions_from_a_live_loop(qtbot, live_tab, sim_model, source_id):
    from sblr_rt.online import OnlineLoop

    from .conftest import start_simulator

    name = f"GuiSim-{source_id[-12:]}"
    player = start_simulator(name, source_id)
    loop = OnlineLoop.from_lsl(
        sim_model,
        stream=name,
        source_id=source_id,
        mode="trial",
        marker_stream=f"{name}-Markers",
        marker_source_id=f"{source_id}-markers",
        hop=0.05,
        outlet=False,
        timeout=10.0,
    )
    try:
        loop.start()
        live_tab.set_provider(loop, classes=sim_model.classes)
        qtbot.waitUntil(
            lambda: bool(live_tab.last_snapshot is not None and live_tab.last_snapshot.trials),
            timeout=20_000,
        )
        snap = live_tab.last_snapshot
        assert snap.stream.name == name and snap.stream.connected
        for label in sim_model.classes:
            t, p = live_tab.proba_curves[label].getData()
            assert t.size > 0 and np.all((p >= 0) & (p <= 1))
        assert len(live_tab.trial_points.data) >= 1
        assert any(line.isVisible() for line in live_tab._cue_lines)
        assert "decisions/s" in live_tab.status.text()

        # the stream vanishes: the tab says so
        player.stop()
        qtbot.waitUntil(lambda: live_tab.stream_lost, timeout=20_000)
        assert "vanished" in live_tab.banner.text()
    finally:
        live_tab.set_provider(None)
        loop.stop()
        player.stop()


@pytest.mark.lsl
def test_traces_without_a_model_and_a_recording_of_the_stream(
    qtbot, live_tab, source_id, tmp_path
):
    """No model: the Live tab shows the bare stream; the recorder keeps samples and cues."""
    from sblr_rt.gui.providers import SourceProvider
    from sblr_rt.gui.stream_recorder import StreamRecorder

    from sblr_rt.playback.simulator import run_simulator

    name = f"GuiRec-{source_id[-12:]}"
    player = run_simulator(
        name=name,
        source_id=source_id,
        sfreq=100.0,
        n_channels=8,
        first_cue=0.3,
        trial_duration=0.5,
        iti=(0.3, 0.4),
        background=True,
    )
    provider = SourceProvider(name=name, source_id=source_id, timeout=10.0)
    recorder = StreamRecorder(
        tmp_path / "rec_raw.fif",
        name=name,
        source_id=source_id,
        marker_name=f"{name}-Markers",
        marker_source_id=f"{source_id}-markers",
        timeout=10.0,
    )
    try:
        provider.start()
        recorder.start()
        live_tab.set_provider(provider)
        qtbot.waitUntil(
            lambda: (
                live_tab.trace_curve.getData()[0] is not None
                and live_tab.trace_curve.getData()[0].size > 50
            ),
            timeout=10_000,
        )
        assert live_tab.last_snapshot.stream.n_channels == 8
        assert "dropped" not in live_tab.status.text()  # no loop, no decision statistics
        qtbot.waitUntil(lambda: recorder.poll()["n_markers"] >= 3, timeout=15_000)
        # markers can overtake the EEG: let the samples of the last cue arrive too
        last_cue = recorder.last_marker_timestamp
        qtbot.waitUntil(lambda: recorder.last_timestamp > last_cue, timeout=5_000)
        recording = recorder.stop()
    finally:
        live_tab.set_provider(None)
        provider.stop()
        player.stop()
    assert recording.data.shape[0] == 8 and recording.sfreq == 100.0
    assert len(recording.marker_values) >= 3
    assert set(recording.marker_values) <= {"left", "right"}
    # the simulator stamps each cue with its sample's timestamp: markers fall on samples
    samples = recording.marker_times * recording.sfreq
    np.testing.assert_allclose(samples, np.round(samples), atol=0.05)


def test_the_status_line_names_the_model_version_and_a_failed_refit(live_tab):
    fake = FakeSnapshots(CH)
    live_tab.set_provider(fake, classes=["left", "right"])
    live_tab.refresh()
    assert "model v0" in live_tab.status.text() and "adapting" not in live_tab.status.text()
    base = fake.snapshot

    def adapting(channels=None, n_decisions=None):
        return dataclasses.replace(
            base(channels, n_decisions=n_decisions),
            model_version=3,
            adaptation={"n_trials": 12, "refit": "failed", "n_failures": 1, "n_unlabelled": 2,
                        "last_error": "v4: too few trials of a class <right>"},
        )  # fmt: skip

    fake.snapshot = adapting
    live_tab.refresh()
    status = live_tab.status.text()
    assert "model v3 (adapting: 12 trials, refit failed" in status
    assert "1 failed</b>, last: v4: too few trials of a class &lt;right&gt;" in status
    assert "2 cue(s) naming no class left out" in status
    assert live_tab.banner.isHidden()  # the current model keeps deciding: no alarm

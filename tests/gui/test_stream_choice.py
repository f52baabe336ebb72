"""The dashboard's stream lists and the streams it connects to by name or by type."""

from __future__ import annotations

from sblr_rt.stream import StreamDescription


def _desc(name, stype, source_id, fmt, sfreq, n=1):
    return StreamDescription(name, stype, source_id, n, sfreq, fmt, "host", name)


STREAMS = [
    _desc("openvibe-signal", "signal", "ov", "float32", 512.0, 8),  # OpenViBE
    _desc("openvibe-stims", "marker", "ov-m", "int32", 0.0),
    _desc("MNE-LSL-Player", "eeg", "MNE-LSL", "double64", 160.0, 64),  # mne-lsl's player
    _desc("MNE-LSL-Player-annotations", "annotations", "MNE-LSL", "double64", 0.0, 3),
]


def _window(qtbot, monkeypatch, **kwargs):
    from sblr_rt.gui.app import MainWindow

    window = MainWindow(**kwargs)
    qtbot.addWidget(window)
    connected = []
    monkeypatch.setattr(
        window, "connect_to", lambda eeg, markers=None: connected.append((eeg, markers))
    )
    monkeypatch.setattr(window, "refresh_streams", lambda: None)
    return window, connected


def test_foreign_streams_are_sorted_into_signals_and_markers(qtbot, monkeypatch):
    window, _ = _window(qtbot, monkeypatch)
    window._streams_resolved(STREAMS)
    eeg = [window.stream_box.itemData(i).name for i in range(window.stream_box.count())]
    markers = [window.marker_box.itemData(i) for i in range(window.marker_box.count())]
    assert eeg == ["openvibe-signal", "MNE-LSL-Player"]
    assert [d.name for d in markers if d is not None] == [
        "openvibe-stims",
        "MNE-LSL-Player-annotations",
    ]


def test_streams_given_by_type_in_any_case_are_connected(qtbot, monkeypatch):
    window, connected = _window(qtbot, monkeypatch, stream_type="SIGNAL", marker_type="Marker")
    window._streams_resolved(STREAMS)
    ((eeg, markers),) = connected
    assert (eeg.name, markers.name) == ("openvibe-signal", "openvibe-stims")


def test_streams_given_by_name_are_connected_whatever_their_type(qtbot, monkeypatch):
    window, connected = _window(
        qtbot, monkeypatch, stream="MNE-LSL-Player", markers="MNE-LSL-Player-annotations"
    )
    window._streams_resolved(STREAMS)
    ((eeg, markers),) = connected
    assert (eeg.stype, markers.stype) == ("eeg", "annotations")


def test_a_type_that_names_two_streams_waits(qtbot, monkeypatch):
    window, connected = _window(qtbot, monkeypatch, stream_type="eeg")
    window._streams_resolved([*STREAMS, _desc("other", "EEG", "amp", "float32", 250.0, 8)])
    assert not connected
    assert "Waiting for LSL stream(s) of type 'eeg'" in window.statusBar().currentMessage()


def test_connections_open_one_after_another_and_closing_stops_one_still_opening(
    qtbot, monkeypatch
):
    """A new loop opens after the previous one stopped (their outlets share names)."""
    import threading
    import time

    from sblr_rt.gui import providers
    from sblr_rt.gui.app import MainWindow

    events, opened = [], []
    lock = threading.Lock()

    class Provider:
        def __init__(self, n):
            self.n = n

        def stop(self):
            time.sleep(0.1)
            with lock:
                events.append(("stop", self.n))

    def open_provider(desc, markers, model, **kwargs):
        with lock:
            n = len(opened)
            opened.append(n)
        time.sleep(0.2)  # resolving and opening inlets take time
        with lock:
            events.append(("open", n))
        return Provider(n)

    monkeypatch.setattr(providers, "open_provider", open_provider)
    window = MainWindow()
    qtbot.addWidget(window)
    monkeypatch.setattr(window.live_tab, "set_provider", lambda *args, **kwargs: None)
    stream = STREAMS[0]
    window.connect_to(stream)
    qtbot.waitUntil(lambda: window.provider is not None, timeout=10_000)
    window.connect_to(stream)  # a new model: the same stream again
    window.connect_to(stream)  # twice, before the second opened
    qtbot.waitUntil(lambda: window.provider is not None, timeout=10_000)
    assert window.provider.n == 1  # the superseded second never opened
    window.connect_to(stream)
    window.close()  # while the fourth connection waits for the third to stop
    assert events[:4] == [("open", 0), ("stop", 0), ("open", 1), ("stop", 1)]
    # superseded by the close before it opened, or (a slow GUI thread) opened and stopped
    assert events[4:] in ([], [("open", 2), ("stop", 2)])

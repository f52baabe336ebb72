"""Recording: replay -> record -> FIF equals the file; markers reach the disk with their EEG."""

from __future__ import annotations

import json
import time

import mne
import numpy as np
import pytest

from sblr_rt.io import read_recording
from sblr_rt.playback.stream_player import RecordingReader, StreamPlayer, replay
from sblr_rt.recorder import Recorder, read_sidecar, sidecar_path
from sblr_rt.stream import local_clock

SFREQ = 250.0


@pytest.mark.lsl
def test_replay_record_round_trip(tmp_path, source_id, indexed_recording, wait):
    rec = indexed_recording(1500, 200)
    player = StreamPlayer(RecordingReader(rec), name="rt-replay", source_id=source_id,
                          speed=4.0, dtype="float64", wait_for_consumers=60.0)  # fmt: skip
    out = tmp_path / "session_raw.fif"
    recorder = Recorder(out, source_id=source_id, marker_source_id=source_id + "-markers")
    try:
        recorder.start()
        player.start()
        wait(lambda: recorder.n_samples >= 1500 and recorder.n_markers >= len(rec.marker_values),
             "the recorded samples", 60)  # fmt: skip
        assert recorder.sidecar.is_dir()
        assert recorder.stop() == out
    finally:
        player.stop()
    assert not sidecar_path(out).exists()
    raw = mne.io.read_raw_fif(out, preload=True, verbose="error")
    assert raw.ch_names == rec.ch_names and raw.info["sfreq"] == SFREQ
    description = json.loads(raw.info["description"])
    assert description["source_id"] == source_id
    assert description["effective_sfreq"] == pytest.approx(4 * SFREQ, rel=0.01)
    back = read_recording(out)
    np.testing.assert_array_equal(back.data, rec.data)
    np.testing.assert_array_equal(back.marker_samples, rec.marker_samples)
    assert back.marker_values == rec.marker_values
    # and the recorded file replays (a second pass through LSL) to the same thing again
    again_out = tmp_path / "again_raw.fif"
    player = replay(out, source_id=source_id + "-2", speed=8.0, dtype="float64",
                    wait_for_consumers=60.0)  # fmt: skip
    recorder = Recorder(again_out, source_id=source_id + "-2",
                        marker_source_id=source_id + "-2-markers")  # fmt: skip
    try:
        recorder.start()
        player.start()
        wait(lambda: recorder.n_samples >= 1500 and recorder.n_markers >= len(rec.marker_values),
             "the recorded samples of the second pass", 60)  # fmt: skip
        recorder.stop()
    finally:
        player.stop()
    again = read_recording(again_out)
    np.testing.assert_array_equal(again.data, rec.data)
    assert list(zip(again.marker_samples, again.marker_values, strict=True)) == list(
        zip(rec.marker_samples, rec.marker_values, strict=True)
    )


def _indexed_source(name, source_id, stop, *, sfreq, n_channels, marker_every, flood=0):
    """EEG whose channel 0 is the sample index; a marker (the index) every few samples.

    Each marker is pushed before the chunk holding its sample. With ``flood``, that many
    markers are sent at once first.
    """
    from sblr_rt.stream import EEGOutlet, MarkerOutlet

    eeg = EEGOutlet(name=name, ch_names=[f"ch{i}" for i in range(n_channels)], sfreq=sfreq,
                    source_id=source_id, dtype="float64")  # fmt: skip
    mk = MarkerOutlet(name=name + "-Markers", source_id=source_id + "-markers")
    try:
        eeg.wait_for_consumers(20.0)
        mk.wait_for_consumers(20.0)
        t0 = local_clock()
        for i in range(flood):
            mk.push(f"flood{i}", t0)
        n_sent = 0
        while not stop.is_set():
            n_due = int((local_clock() - t0) * sfreq)
            if n_due > n_sent:
                index = np.arange(n_sent, n_due)
                stamps = t0 + index / sfreq
                for i in index[index % marker_every == 0]:
                    mk.push(str(int(i)), float(stamps[i - n_sent]))
                chunk = np.zeros((len(index), n_channels))
                chunk[:, 0] = index
                eeg.push_chunk(chunk, stamps)
                n_sent = n_due
            time.sleep(0.01)
    finally:
        mk.close()
        eeg.close()


def _run_source(tmp_path, source_id, **kwargs):
    import threading

    stop = threading.Event()
    name = f"idx-{source_id[-12:]}"
    thread = threading.Thread(target=_indexed_source, args=(name, source_id, stop),
                              kwargs=kwargs, daemon=True)  # fmt: skip
    thread.start()
    return stop, thread


@pytest.mark.lsl
def test_markers_reach_the_disk_with_their_eeg(tmp_path, source_id):
    """What a kill would leave (the sidecar at any instant) never has EEG without its cues."""
    stop, thread = _run_source(tmp_path, source_id, sfreq=500.0, n_channels=16, marker_every=25)
    recorder = Recorder(tmp_path / "m_raw.fif", source_id=source_id,
                        marker_source_id=source_id + "-markers", flush_seconds=1.0)  # fmt: skip
    checked = 0
    try:
        recorder.start()
        deadline = time.monotonic() + 60
        while checked < 30 and time.monotonic() < deadline:
            time.sleep(0.1)
            on_disk = read_sidecar(recorder.sidecar)
            ts, index = on_disk["timestamps"], on_disk["data"][:, 0]
            if len(ts) < 500:
                continue
            # a marker may trail its sample by a moment, never by half a second
            settled = index[(index % 25 == 0) & (ts <= ts[-1] - 0.5)].astype(int)
            got = {int(v) for _, v in on_disk["markers"]}
            missing = sorted(set(settled.tolist()) - got)
            assert not missing, f"EEG on disk without its markers {missing[:5]}..."
            checked += 1
    finally:
        try:
            recorder.stop()  # the inlets close before their outlets
        finally:
            stop.set()
            thread.join(10)
    assert checked == 30


@pytest.mark.lsl
def test_a_marker_flood_is_drained_while_recording(tmp_path, source_id):
    n_flood = 3000  # under the LSL inlet buffer of a marker stream (3600 samples)
    stop, thread = _run_source(tmp_path, source_id, sfreq=100.0, n_channels=2,
                               marker_every=10, flood=n_flood)  # fmt: skip
    recorder = Recorder(tmp_path / "f_raw.fif", source_id=source_id,
                        marker_source_id=source_id + "-markers")  # fmt: skip
    pending = []
    try:
        recorder.start()
        deadline = time.monotonic() + 60
        while recorder.n_markers < n_flood + 5:
            assert time.monotonic() < deadline, f"only {recorder.n_markers} markers written"
            pending.append(recorder.status()["markers"]["n_pending"])
            time.sleep(0.05)
        pending.append(recorder.status()["markers"]["n_pending"])
    finally:
        try:
            out = recorder.stop()  # the inlets close before their outlets
        finally:
            stop.set()
            thread.join(10)
    assert pending[-1] < 50  # the marker source's queue is emptied as markers arrive
    assert max(pending) < n_flood
    got = read_recording(out)
    index = got.data[0]
    np.testing.assert_array_equal(np.diff(index), 1)  # no EEG lost or doubled by the flood
    expected = [str(int(i)) for i in index if i % 10 == 0]
    assert [v for v in got.marker_values if not v.startswith("flood")] == expected


def test_the_default_marker_stream_is_never_our_decision_outlet(tmp_path, monkeypatch):
    # record and live calibration pick "the only stream of type Markers" through the
    # recorder: sblr-rt's own decision outlets never count, and several others refuse.
    import sblr_rt.stream as stream
    from sblr_rt.stream import StreamDescription, decision_source_id

    def desc(name, sid):
        return StreamDescription(name, "Markers", sid, 1, 0.0, "string", "h", "u")

    opened = []

    class FakeMarkers:
        def __init__(self, *, name, source_id, timeout, stype=None):
            opened.append((name, source_id))

        def start(self):
            return self

    ours = [desc("SBLR-Predictions", "x"), desc("Feedback", decision_source_id("Feedback"))]
    visible = []
    monkeypatch.setattr(stream, "resolve_streams", lambda **kwargs: list(visible))
    recorder = Recorder(tmp_path / "r_raw.fif", name="EEG", timeout=0.1)
    visible[:] = ours
    assert recorder._open_markers(FakeMarkers, "EEG") is None  # only ours: no markers
    visible[:] = [*ours, desc("cues", "cue-id")]
    recorder._open_markers(FakeMarkers, "EEG")
    assert opened == [("cues", "cue-id")]
    visible[:] = [*ours, desc("cues", "cue-id"), desc("other", "other-id")]
    with pytest.raises(RuntimeError, match="--marker-stream NAME or --marker-source-id ID"):
        recorder._open_markers(FakeMarkers, "EEG")


def test_the_eeg_streams_own_marker_stream_is_preferred_whatever_its_type(tmp_path, monkeypatch):
    # mne-lsl's player names its annotations <EEG>-annotations, of type "annotations"
    import sblr_rt.stream as stream
    from sblr_rt.stream import StreamDescription

    def desc(name, stype, sid):
        return StreamDescription(name, stype, sid, 2, 0.0, "double64", "h", "u")

    opened = []

    class FakeMarkers:
        def __init__(self, *, name, source_id, timeout, stype=None):
            opened.append((name, stype))

        def start(self):
            return self

    visible = [desc("Player-annotations", "annotations", "MNE-LSL"), desc("cues", "Markers", "c")]
    monkeypatch.setattr(stream, "resolve_streams", lambda **kwargs: list(visible))
    recorder = Recorder(tmp_path / "r_raw.fif", name="Player", timeout=0.1)
    recorder._open_markers(FakeMarkers, "Player")
    assert opened == [("Player-annotations", None)]
    # a marker type asked for: the streams of that type only
    typed = Recorder(tmp_path / "t_raw.fif", name="Player", marker_stype="markers", timeout=0.1)
    typed._open_markers(FakeMarkers, "Player")
    assert opened[-1] == ("cues", "markers")


@pytest.mark.lsl
def test_a_full_disk_gives_one_line_and_the_recover_hint(
    tmp_path, source_id, indexed_recording, wait, caplog
):
    import errno
    import logging

    rec = indexed_recording(1500, 200)
    player = StreamPlayer(RecordingReader(rec), name="rt-full", source_id=source_id,
                          speed=4.0, dtype="float64", wait_for_consumers=60.0)  # fmt: skip
    out = tmp_path / "full_raw.fif"
    recorder = Recorder(out, source_id=source_id, marker_source_id=source_id + "-markers")
    try:
        recorder.start()
        player.start()
        wait(lambda: recorder.n_samples >= 500, "samples", 60)

        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")

        recorder._sink.flush = full  # the disk fills while recording
        with caplog.at_level(logging.ERROR, logger="sblr_rt"):
            with pytest.raises(RuntimeError, match="record --recover"):
                recorder.stop()
    finally:
        player.stop()
    lines = [r for r in caplog.records if "stopped writing" in r.getMessage()]
    assert lines and lines[0].exc_info is None  # one line, no traceback
    assert "No space left on device" in lines[0].getMessage()

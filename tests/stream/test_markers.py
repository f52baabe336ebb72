"""MarkerSource against real pylsl outlets, and align_markers."""

from __future__ import annotations

import numpy as np
import pylsl
import pytest

from sblr_rt.stream import AlignedMarker, LSLSource, MarkerSource, RingBuffer, align_markers

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


@pytest.mark.lsl
@pytest.mark.parametrize(
    ("fmt", "values"),
    [("string", ["left", "right", "rest"]), ("int32", [1, 2, 3]), ("float32", [0.5, 1.5, 2.5])],
)
def test_marker_source_pops_markers_with_timestamps(source_id, fmt, values, wait):
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo("cues", "Markers", 1, 0, fmt, source_id))
    with MarkerSource(source_id=source_id, timeout=5.0) as markers:
        seen = []
        markers.add_listener(lambda t, v: seen.append(v))
        assert outlet.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        for k, value in enumerate(values):
            outlet.push_sample([value], t0 + k)
        got = []
        wait(lambda: got.extend(markers.pop()) or len(got) >= 3, "3 markers")
        assert [v for _, v in got] == values
        assert [type(v) for _, v in got] == [type(v) for v in values]
        assert np.allclose([t for t, _ in got], t0 + np.arange(3), atol=1e-3)
        assert seen == values
        assert markers.status()["n_markers"] == 3
        assert markers.pop() == []
    del outlet


@pytest.mark.lsl
def test_marker_source_survives_a_vanished_stream(source_id, wait):
    def outlet():
        return pylsl.StreamOutlet(pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id))

    cues = outlet()
    markers = MarkerSource(source_id=source_id, timeout=5.0).start()
    try:
        assert cues.wait_for_consumers(DEADLINE)
        cues.push_sample(["before"])
        got = []
        wait(lambda: got.extend(markers.pop()) or got, "the first marker")
        del cues
        wait(lambda: not markers.status()["connected"], "the loss to be noticed")
        cues = outlet()
        assert cues.wait_for_consumers(DEADLINE)
        cues.push_sample(["after"])
        wait(lambda: got.extend(markers.pop()) or len(got) >= 2, "the second marker")
        assert [v for _, v in got] == ["before", "after"]
        assert markers.status()["n_reconnects"] == 1
    finally:
        markers.stop()
        del cues


@pytest.mark.lsl
def test_markers_align_with_eegsamples(source_id, eeg_outlet, samples, wait, wait_consumer):
    sfreq = 100.0
    eeg = eeg_outlet(source_id, n_channels=2, sfreq=sfreq)
    cues = pylsl.StreamOutlet(
        pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id + "-m")
    )
    with (
        LSLSource(source_id=source_id, timeout=5.0) as source,
        MarkerSource(source_id=source_id + "-m", timeout=5.0) as markers,
    ):
        wait_consumer(eeg)
        assert cues.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        eeg.push_chunk(samples(0, 300, 2), t0 + 299 / sfreq)
        for k in (50, 120, 250):
            cues.push_sample([f"cue{k}"], t0 + k / sfreq + 0.002)  # 2 ms after sample k
        cues.push_sample(["future"], t0 + 10.0)
        wait(lambda: source.buffer.n_pushed >= 300, "300 samples")
        got = []
        wait(lambda: got.extend(markers.pop()) or len(got) >= 4, "4 markers")
        aligned, pending = align_markers(got, source.buffer)
        assert [(m.index, m.value) for m in aligned] == [
            (50, "cue50"),
            (120, "cue120"),
            (250, "cue250"),
        ]
        window, _ = source.buffer.get(aligned[1].index, aligned[1].index + 1)
        assert window[0, 0] == 120
        assert [v for _, v in pending] == ["future"]
    del eeg, cues


def test_align_markers_without_lsl(caplog):
    buffer = RingBuffer(1, 10)
    assert align_markers([(1.0, "a")], buffer) == ([], [(1.0, "a")])
    buffer.push(np.arange(30.0)[:, None], np.arange(30) / 10.0)  # holds 20..29
    aligned, pending = align_markers(
        [(0.5, "old"), (2.04, "a"), (2.06, "b"), (2.9, "edge"), (3.5, "later")], buffer
    )
    assert aligned == [AlignedMarker(20, 2.04, "a"), AlignedMarker(21, 2.06, "b")]
    assert pending == [(2.9, "edge"), (3.5, "later")]
    assert "precedes the oldest EEG sample" in caplog.text


@pytest.mark.lsl
def test_marker_source_never_picks_a_decision_outlet(source_id, wait):
    """'The only stream of type Markers' leaves sblr-rt's decision outlets out.

    A type unique to this test stands in for ``Markers``, so that streams of other tests
    running on the machine cannot make the choice ambiguous.
    """
    from sblr_rt.stream import MarkerOutlet, decision_source_id

    stype = f"Markers-{source_id}"
    by_name = MarkerOutlet(name="SBLR-Predictions", source_id=source_id + "-p", stype=stype)
    by_id = MarkerOutlet(name="Feedback", source_id=decision_source_id(source_id), stype=stype)
    with pytest.raises(TimeoutError, match="No LSL marker stream"):  # only ours: none
        MarkerSource(stype=stype, timeout=2.0).start()
    cues = MarkerOutlet(name="cues", source_id=source_id + "-cues", stype=stype)
    try:
        with MarkerSource(stype=stype, timeout=5.0) as markers:
            assert markers.source_id == source_id + "-cues"
        # named, a decision outlet is read like any stream
        with MarkerSource(name="SBLR-Predictions", stype=stype, timeout=5.0) as markers:
            assert markers.source_id == source_id + "-p"
    finally:
        cues.close()
        by_name.close()
        by_id.close()

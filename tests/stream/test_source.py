"""LSLSource, MarkerSource, resolve_streams and align_markers against real pylsl outlets.

Outlets live in this process; every stream has a unique ``source_id`` (fixture); data is
waited for with deadlines; sources (inlets) are stopped before their outlets are deleted.
Channel 0 of every EEG outlet carries the sample index, so the tests prove that what
arrives equals what was sent, sample for sample.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pylsl
import pytest
from numpy.testing import assert_array_equal

from sblr_rt.stream import (
    AlignedMarker,
    LSLSource,
    MarkerSource,
    RingBuffer,
    StreamDescription,
    align_markers,
    resolve_streams,
)

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


def _eeg_outlet(source_id, *, name=None, n_channels=4, sfreq=250.0, fmt="float32", labels=None):
    name = name or f"EEG-{source_id}"
    info = pylsl.StreamInfo(name, "EEG", n_channels, sfreq, fmt, source_id)
    labels = labels or ["index"] + [f"C{k}" for k in range(1, n_channels)]
    channels = info.desc().append_child("channels")
    for label in labels:
        channel = channels.append_child("channel")
        channel.append_child_value("label", label)
        channel.append_child_value("unit", "microvolts")
    return pylsl.StreamOutlet(info, 8)


def _samples(start, n, n_channels, dtype=np.float32):
    data = np.empty((n, n_channels), dtype=dtype)
    data[:, 0] = np.arange(start, start + n)
    data[:, 1:] = (np.arange(start, start + n)[:, None] % 97) - 48
    return data


def _wait(predicate, what, deadline=DEADLINE, push=None):
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline} s waiting for {what}")
        if push is not None:
            push()
        time.sleep(0.01)


def _wait_consumer(outlet):
    assert outlet.wait_for_consumers(DEADLINE), "the source never connected"


# -- resolution ----------------------------------------------------------------------------
@pytest.mark.lsl
def test_resolve_streams_lists_the_outlet(source_id):
    outlet = _eeg_outlet(source_id, n_channels=3, sfreq=100.0)
    try:
        found = resolve_streams(source_id=source_id, timeout=1.0)
        assert len(found) == 1
        (desc,) = found
        assert isinstance(desc, StreamDescription)
        assert desc.name == f"EEG-{source_id}"
        assert (desc.stype, desc.source_id, desc.n_channels, desc.sfreq) == (
            "EEG",
            source_id,
            3,
            100.0,
        )
        assert desc.channel_format == "float32"
        assert desc.hostname
        assert source_id in str(desc)
        assert resolve_streams(source_id=source_id + "-nope", timeout=0.3) == []
    finally:
        del outlet


@pytest.mark.lsl
def test_no_stream_is_a_clear_timeout(source_id):
    source = LSLSource(source_id=source_id, timeout=0.3)
    with pytest.raises(
        TimeoutError,
        match=f"No LSL EEG stream with stype='EEG', source_id='{source_id}' found within 0.3 s",
    ):
        source.start()
    with pytest.raises(RuntimeError, match=r"call LSLSource.start\(\) first"):
        _ = source.ch_names


@pytest.mark.lsl
def test_two_matching_streams_are_refused_and_named(source_id):
    name = f"twin-{source_id}"
    outlets = [_eeg_outlet(f"{source_id}-{k}", name=name) for k in range(2)]
    try:
        with pytest.raises(RuntimeError, match="2 LSL streams match") as info:
            LSLSource(name=name, timeout=3.0).start()
        assert f"{source_id}-0" in str(info.value) and f"{source_id}-1" in str(info.value)
        # a source_id resolves the ambiguity
        with LSLSource(name=name, source_id=f"{source_id}-1", timeout=3.0) as source:
            assert source.source_id == f"{source_id}-1"
    finally:
        del outlets


@pytest.mark.lsl
def test_string_and_irregular_streams_are_refused(source_id):
    strings = pylsl.StreamOutlet(pylsl.StreamInfo("s", "EEG", 1, 100, "string", source_id))
    irregular = pylsl.StreamOutlet(
        pylsl.StreamInfo("i", "EEG", 2, 0, "float32", source_id + "-irr")
    )
    try:
        with pytest.raises(TypeError, match="Use MarkerSource for strings"):
            LSLSource(source_id=source_id, timeout=3.0).start()
        with pytest.raises(ValueError, match="irregular rate"):
            LSLSource(source_id=source_id + "-irr", timeout=3.0).start()
    finally:
        del strings, irregular


# -- data ----------------------------------------------------------------------------------
@pytest.mark.lsl
@pytest.mark.parametrize(
    ("fmt", "dtype"),
    [("float32", np.float32), ("double64", np.float64), ("int16", np.int16), ("int32", np.int32)],
)
def test_data_arrive_exactly_in_the_streams_dtype(source_id, fmt, dtype):
    n_channels, sfreq = 5, 500.0
    outlet = _eeg_outlet(source_id, n_channels=n_channels, sfreq=sfreq, fmt=fmt)
    source = LSLSource(source_id=source_id, timeout=5.0, buffer_seconds=2.0)
    chunks = []
    try:
        source.start()
        assert source.ch_names == ["index", "C1", "C2", "C3", "C4"]
        assert source.ch_units == ["microvolts"] * 5
        assert source.ch_types == [""] * 5
        assert (source.sfreq, source.n_channels, source.dtype) == (sfreq, 5, np.dtype(dtype))
        assert source.buffer.dtype == np.dtype(dtype)
        assert source.buffer.capacity == 1000
        source.add_listener(lambda chunk, ts: chunks.append((chunk, ts)))
        _wait_consumer(outlet)
        rng = np.random.default_rng(0)
        sent, t0 = 0, pylsl.local_clock()
        while sent < 1400:  # more than the buffer: wrap-around through LSL too
            n = int(rng.integers(1, 60))  # irregular chunk sizes
            data = _samples(sent, n, n_channels, dtype)
            outlet.push_chunk(data, t0 + (sent + n - 1) / sfreq)
            sent += n
        _wait(lambda: source.buffer.n_pushed >= sent, f"{sent} samples")
        status = source.status()
        assert status["n_samples"] == sent
        assert status["connected"] and status["n_gaps"] == 0 and status["n_nan_samples"] == 0
        window, timestamps = source.buffer.latest(1000)
        assert window.dtype == np.dtype(dtype)
        assert_array_equal(window.T, _samples(sent - 1000, 1000, n_channels, dtype))
        assert np.all(np.diff(timestamps) > 0)
        # listeners saw every sample, in order, as arrays they may keep
        got = np.concatenate([c for c, _ in chunks])
        assert_array_equal(got, _samples(0, sent, n_channels, dtype))
        assert sum(ts.size for _, ts in chunks) == sent
    finally:
        source.stop()
        del outlet


@pytest.mark.lsl
def test_nan_samples_are_counted_and_kept(source_id):
    outlet = _eeg_outlet(source_id, n_channels=3, sfreq=200.0)
    with LSLSource(source_id=source_id, timeout=5.0) as source:
        _wait_consumer(outlet)
        data = _samples(0, 50, 3)
        data[[3, 7, 7 + 20], 1] = np.nan
        data[7, 2] = np.nan
        data[40, :] = np.nan
        outlet.push_chunk(data)
        _wait(lambda: source.buffer.n_pushed >= 50, "50 samples")
        assert source.status()["n_nan_samples"] == 4
        window, _ = source.buffer.latest(50)
        assert_array_equal(np.isnan(window.T), np.isnan(data))
    del outlet


@pytest.mark.lsl
def test_effective_rate_differs_from_nominal(source_id):
    outlet = _eeg_outlet(source_id, n_channels=2, sfreq=500.0)
    with LSLSource(source_id=source_id, timeout=5.0) as source:
        _wait_consumer(outlet)
        t0 = pylsl.local_clock()
        true_rate = 400.0  # the device is slower than it claims
        for start in range(0, 2000, 20):
            stamps = t0 + np.arange(start, start + 20) / true_rate
            outlet.push_chunk(_samples(start, 20, 2), stamps.tolist())
        _wait(lambda: source.buffer.n_pushed >= 2000, "2000 samples")
        status = source.status()
        assert status["sfreq"] == 500.0
        assert status["effective_sfreq"] == pytest.approx(true_rate, rel=0.02)
        assert status["n_gaps"] == 0
    del outlet


@pytest.mark.lsl
def test_paused_stream_gives_one_clean_gap(source_id):
    sfreq = 100.0
    outlet = _eeg_outlet(source_id, n_channels=2, sfreq=sfreq)
    with LSLSource(source_id=source_id, timeout=5.0, stall_timeout=0.3) as source:
        _wait_consumer(outlet)
        t0 = pylsl.local_clock()
        outlet.push_chunk(_samples(0, 50, 2), (t0 + np.arange(50) / sfreq).tolist())
        _wait(lambda: source.buffer.n_pushed >= 50, "50 samples")
        _wait(lambda: source.status()["n_stalls"] == 1, "the inlet to be reopened")
        t1 = t0 + 2.0  # the device paused for 1.5 s
        outlet.push_chunk(_samples(50, 100, 2), (t1 + np.arange(100) / sfreq).tolist())
        _wait(lambda: source.buffer.n_pushed >= 150, "150 samples")
        status = source.status()
        assert status["connected"] and status["n_reconnects"] == 0
        window, timestamps = source.buffer.latest(150)
        assert_array_equal(window[0], np.arange(150))
        assert status["gaps"] == [(timestamps[49], timestamps[50])]
        assert timestamps[50] - timestamps[49] == pytest.approx(1.51, abs=1e-3)
        # without a fresh inlet, liblsl's dejitter would spread the pause over these
        assert np.allclose(np.diff(timestamps[50:]), 1 / sfreq, atol=1e-4)
    del outlet


# -- vanishing streams ---------------------------------------------------------------------
@pytest.mark.lsl
def test_vanished_stream_keeps_data_reports_gap_and_resumes(source_id, caplog):
    caplog.set_level(logging.WARNING, logger="sblr_rt")
    n_channels, sfreq = 3, 250.0
    outlet = _eeg_outlet(source_id, n_channels=n_channels, sfreq=sfreq)
    source = LSLSource(source_id=source_id, timeout=5.0, buffer_seconds=10.0)
    try:
        source.start()
        _wait_consumer(outlet)
        outlet.push_chunk(_samples(0, 100, n_channels))
        _wait(lambda: source.buffer.n_pushed >= 100, "100 samples")
        before = source.buffer.timestamp_at(99)

        del outlet  # the amplifier's program dies
        _wait(lambda: not source.status()["connected"], "the loss to be noticed")
        status = source.status()
        assert status["lost_since"] is not None
        assert status["n_samples"] == 100
        assert_array_equal(source.buffer.latest(100)[0].T, _samples(0, 100, n_channels))
        assert "was lost" in caplog.text

        time.sleep(0.3)  # a real outage, so that the gap shows in the timestamps
        returned = _eeg_outlet(source_id, n_channels=n_channels, sfreq=sfreq)
        outlet = returned
        sent = [1000]

        def push():  # samples sent before the new inlet subscribes are lost, as in life
            returned.push_chunk(_samples(sent[0], 5, n_channels))
            sent[0] += 5

        _wait(lambda: source.buffer.n_pushed > 100, "data after the return", push=push)
        for _ in range(10):
            push()
        _wait(lambda: source.buffer.n_pushed >= 100 + 50, "more data after the return")
        status = source.status()
        assert status["connected"] and status["lost_since"] is None
        assert status["n_reconnects"] == 1
        ((lost_at, back_at),) = status["outages"]
        assert lost_at < back_at
        assert status["n_gaps"] == 1
        (t_start, t_stop) = status["gaps"][0]
        assert t_start == before
        assert t_stop > t_start + 0.3
        window, timestamps = source.buffer.latest(source.buffer.n_available)
        index = window[0]
        assert_array_equal(index[:100], np.arange(100))
        assert index[100] >= 1000
        assert_array_equal(np.diff(index[100:]), 1)  # contiguous after the return
        assert timestamps[100] == t_stop
        assert "is back" in caplog.text
    finally:
        source.stop()
        del outlet


@pytest.mark.lsl
def test_stream_returning_with_other_channels_is_refused(source_id, caplog):
    caplog.set_level(logging.ERROR, logger="sblr_rt")
    outlet = _eeg_outlet(source_id, n_channels=3)
    source = LSLSource(source_id=source_id, timeout=5.0)
    try:
        source.start()
        _wait_consumer(outlet)
        outlet.push_chunk(_samples(0, 20, 3))
        _wait(lambda: source.buffer.n_pushed >= 20, "20 samples")
        del outlet
        _wait(lambda: not source.status()["connected"], "the loss to be noticed")
        outlet = _eeg_outlet(source_id, n_channels=4)
        _wait(lambda: source.status()["refused"] is not None, "the refusal")
        status = source.status()
        assert "4 channels instead of 3" in status["refused"]
        assert not status["connected"]
        assert "came back with a different layout and is refused" in caplog.text
        assert source.buffer.n_pushed == 20
        assert_array_equal(source.buffer.latest(20)[0].T, _samples(0, 20, 3))
        # relabelled channels are refused too
        del outlet
        outlet = _eeg_outlet(source_id, n_channels=3, labels=["index", "Cz", "Pz"])
        _wait(lambda: "labels changed" in (source.status()["refused"] or ""), "the label refusal")
    finally:
        source.stop()
        del outlet


@pytest.mark.lsl
def test_reader_errors_are_reraised(source_id, caplog):
    outlet = _eeg_outlet(source_id, n_channels=2)
    source = LSLSource(source_id=source_id, timeout=5.0).start()

    def broken(chunk, timestamps):
        raise ZeroDivisionError("listener bug")

    source.add_listener(broken)
    _wait_consumer(outlet)
    outlet.push_chunk(_samples(0, 10, 2))
    _wait(lambda: not source.connected, "the reader to stop")
    with pytest.raises(RuntimeError, match="stopped on ZeroDivisionError: listener bug"):
        source.status()
    assert "reader of" in caplog.text
    with pytest.raises(RuntimeError, match="listener bug") as info:
        source.stop()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    source.stop()  # the error is reported once; stopping again is fine
    n = source.buffer.n_pushed  # the first chunk read (maybe part of the push) is kept
    assert 1 <= n <= 10
    assert_array_equal(source.buffer.latest(n)[0].T, _samples(0, n, 2))
    del outlet


# -- markers -------------------------------------------------------------------------------
@pytest.mark.lsl
@pytest.mark.parametrize(
    ("fmt", "values"),
    [("string", ["left", "right", "rest"]), ("int32", [1, 2, 3]), ("float32", [0.5, 1.5, 2.5])],
)
def test_marker_source_pops_markers_with_timestamps(source_id, fmt, values):
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo("cues", "Markers", 1, 0, fmt, source_id))
    with MarkerSource(source_id=source_id, timeout=5.0) as markers:
        seen = []
        markers.add_listener(lambda t, v: seen.append(v))
        assert outlet.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        for k, value in enumerate(values):
            outlet.push_sample([value], t0 + k)
        got = []
        _wait(lambda: got.extend(markers.pop()) or len(got) >= 3, "3 markers")
        assert [v for _, v in got] == values
        assert [type(v) for _, v in got] == [type(v) for v in values]
        assert np.allclose([t for t, _ in got], t0 + np.arange(3), atol=1e-3)
        assert seen == values
        assert markers.status()["n_markers"] == 3
        assert markers.pop() == []
    del outlet


@pytest.mark.lsl
def test_marker_source_survives_a_vanished_stream(source_id):
    def outlet():
        return pylsl.StreamOutlet(pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id))

    cues = outlet()
    markers = MarkerSource(source_id=source_id, timeout=5.0).start()
    try:
        assert cues.wait_for_consumers(DEADLINE)
        cues.push_sample(["before"])
        got = []
        _wait(lambda: got.extend(markers.pop()) or got, "the first marker")
        del cues
        _wait(lambda: not markers.status()["connected"], "the loss to be noticed")
        cues = outlet()
        assert cues.wait_for_consumers(DEADLINE)
        cues.push_sample(["after"])
        _wait(lambda: got.extend(markers.pop()) or len(got) >= 2, "the second marker")
        assert [v for _, v in got] == ["before", "after"]
        assert markers.status()["n_reconnects"] == 1
    finally:
        markers.stop()
        del cues


@pytest.mark.lsl
def test_markers_align_with_eeg_samples(source_id):
    sfreq = 100.0
    eeg = _eeg_outlet(source_id, n_channels=2, sfreq=sfreq)
    cues = pylsl.StreamOutlet(
        pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id + "-m")
    )
    with (
        LSLSource(source_id=source_id, timeout=5.0) as source,
        MarkerSource(source_id=source_id + "-m", timeout=5.0) as markers,
    ):
        _wait_consumer(eeg)
        assert cues.wait_for_consumers(DEADLINE)
        t0 = pylsl.local_clock()
        eeg.push_chunk(_samples(0, 300, 2), t0 + 299 / sfreq)
        for k in (50, 120, 250):
            cues.push_sample([f"cue{k}"], t0 + k / sfreq + 0.002)  # 2 ms after sample k
        cues.push_sample(["future"], t0 + 10.0)
        _wait(lambda: source.buffer.n_pushed >= 300, "300 samples")
        got = []
        _wait(lambda: got.extend(markers.pop()) or len(got) >= 4, "4 markers")
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


def test_parameters_are_checked():
    with pytest.raises(TypeError, match="'name' must be a str or None, got int"):
        LSLSource(name=3)
    with pytest.raises(ValueError, match="'buffer_seconds' must be a positive finite number"):
        LSLSource(buffer_seconds=0)
    with pytest.raises(TypeError, match="'timeout' must be a number"):
        MarkerSource(timeout="5")
    with pytest.raises(TypeError, match="must be a str or None"):
        resolve_streams(source_id=1)
    with pytest.raises(RuntimeError, match=r"call MarkerSource.start\(\) first"):
        MarkerSource().status()


@pytest.mark.lsl
def test_project_outlets_feed_the_sources(source_id):
    """The outlets of ``sblr_rt.stream.outlets`` and these sources agree on conventions."""
    import json

    from sblr_rt.stream import EEGOutlet, MarkerOutlet, PredictionOutlet

    ch_names = ["C3", "Cz", "C4"]
    eeg = EEGOutlet(name=f"EEG-{source_id}", ch_names=ch_names, sfreq=100.0, source_id=source_id)
    cues = MarkerOutlet(name=f"cues-{source_id}", source_id=source_id + "-m")
    predictions = PredictionOutlet(source_id=source_id + "-p")
    with (
        LSLSource(source_id=source_id, timeout=5.0) as source,
        MarkerSource(source_id=source_id + "-m", timeout=5.0) as markers,
        MarkerSource(source_id=source_id + "-p", timeout=5.0) as decisions,
    ):
        assert source.ch_names == ch_names
        assert source.ch_units == ["volts"] * 3 and source.ch_types == ["EEG"] * 3
        assert decisions.name == "SBLR-Predictions"
        assert eeg.wait_for_consumers(DEADLINE) and cues.wait_for_consumers(DEADLINE)
        assert predictions.wait_for_consumers(DEADLINE)
        eeg.push_chunk(_samples(0, 30, 3))
        cues.push("left")
        predictions.push({"label": "left", "proba": {"left": 0.9, "right": 0.1}})
        _wait(lambda: source.buffer.n_pushed >= 30, "30 samples")
        assert_array_equal(source.buffer.latest(30)[0].T, _samples(0, 30, 3))
        got, decided = [], []
        _wait(lambda: got.extend(markers.pop()) or got, "the cue")
        _wait(lambda: decided.extend(decisions.pop()) or decided, "the decision")
        assert got[0][1] == "left"
        assert json.loads(decided[0][1])["proba"] == {"left": 0.9, "right": 0.1}
    for outlet in (eeg, cues, predictions):
        outlet.close()

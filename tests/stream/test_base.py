"""The inlet life cycle (resolution, errors, release) through LSLSource against real outlets."""

from __future__ import annotations

import pylsl
import pytest
from numpy.testing import assert_array_equal

from sblr_rt.stream import LSLSource, MarkerSource, resolve_streams

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


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
def test_two_matching_streams_are_refused_and_named(source_id, eeg_outlet):
    name = f"twin-{source_id}"
    outlets = [eeg_outlet(f"{source_id}-{k}", name=name) for k in range(2)]
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
def test_reader_errors_are_reraised(source_id, caplog, eeg_outlet, samples, wait, wait_consumer):
    outlet = eeg_outlet(source_id, n_channels=2)
    source = LSLSource(source_id=source_id, timeout=5.0).start()

    def broken(chunk, timestamps):
        raise ZeroDivisionError("listener bug")

    source.add_listener(broken)
    wait_consumer(outlet)
    outlet.push_chunk(samples(0, 10, 2))
    wait(lambda: not source.connected, "the reader to stop")
    with pytest.raises(RuntimeError, match="stopped on ZeroDivisionError: listener bug"):
        source.status()
    assert "reader of" in caplog.text
    with pytest.raises(RuntimeError, match="listener bug") as info:
        source.stop()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    source.stop()  # the error is reported once; stopping again is fine
    n = source.buffer.n_pushed  # the first chunk read (maybe part of the push) is kept
    assert 1 <= n <= 10
    assert_array_equal(source.buffer.latest(n)[0].T, samples(0, n, 2))
    del outlet


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
def test_stopping_releases_the_inlet(source_id, eeg_outlet, wait, wait_consumer):
    """The inlet is closed and destroyed with pylsl's public API: the outlet sees it go."""
    outlet = eeg_outlet(source_id, n_channels=2)
    markers = pylsl.StreamOutlet(
        pylsl.StreamInfo("cues", "Markers", 1, 0, "string", source_id + "-m")
    )
    source = LSLSource(source_id=source_id, timeout=5.0).start()
    cues = MarkerSource(source_id=source_id + "-m", timeout=5.0).start()
    wait_consumer(outlet)
    wait_consumer(markers)
    source.stop()
    cues.stop()
    wait(lambda: not outlet.have_consumers(), "the EEG inlet to be released")
    wait(lambda: not markers.have_consumers(), "the marker inlet to be released")
    assert source.status()["state"] == "lost"


# -- a stream of the same name with a new source_id (issue 37, item 11) --------------------
@pytest.mark.lsl
def test_a_stream_taken_by_name_is_followed_to_a_new_source_id(
    source_id, caplog, eeg_outlet, samples, wait, wait_consumer
):
    caplog.set_level("WARNING", logger="sblr_rt")
    name = f"EEG-{source_id}"
    outlets = {"a": eeg_outlet(source_id + "-a", name=name, n_channels=3)}
    source = LSLSource(name=name, timeout=5.0)
    try:
        source.start()
        assert source.source_id == source_id + "-a"
        wait_consumer(outlets["a"])
        outlets["a"].push_chunk(samples(0, 20, 3))
        wait(lambda: source.buffer.n_pushed >= 20, "20 samples")
        del outlets["a"]
        wait(lambda: not source.status()["connected"], "the loss to be noticed")
        # the amplifier's program restarts with a new source_id, same name and layout
        outlets["b"] = eeg_outlet(source_id + "-b", name=name, n_channels=3)
        sent = [100]

        def push():
            outlets["b"].push_chunk(samples(sent[0], 5, 3))
            sent[0] += 5

        wait(lambda: source.buffer.n_pushed > 20, "data from the new source_id", push=push)
        status = source.status()
        assert status["connected"] and status["source_id"] == source_id + "-b"
        assert status["n_reconnects"] == 1 and status["refused"] is None
        assert f"did not come back with source_id '{source_id}-a'" in caplog.text
        assert f"with source_id '{source_id}-b': taking it" in caplog.text
    finally:
        source.stop()
        outlets.clear()


@pytest.mark.lsl
def test_a_new_source_id_is_refused_with_the_reason_when_one_was_given_or_layouts_differ(
    source_id, eeg_outlet, samples, wait
):
    name = f"EEG-{source_id}"
    outlets = {"a": eeg_outlet(source_id + "-a", name=name, n_channels=3)}
    given = LSLSource(source_id=source_id + "-a", timeout=5.0)
    by_name = LSLSource(name=name, timeout=5.0)
    try:
        given.start()
        by_name.start()
        push = lambda: outlets["a"].push_chunk(samples(0, 1, 3))  # noqa: E731
        wait(lambda: min(s.buffer.n_pushed for s in (given, by_name)) > 0, "data", push=push)
        del outlets["a"]
        wait(lambda: not (given.connected or by_name.connected), "the losses to be noticed")
        outlets["b"] = eeg_outlet(source_id + "-b", name=name, n_channels=4)
        wait(lambda: given.status()["refused"] is not None, "the refusal (source_id given)")
        assert (
            f"follows source_id '{source_id}-a' only (it was given)" in (given.status()["refused"])
        )
        wait(lambda: by_name.status()["refused"] is not None, "the refusal (layout)")
        assert "4 channels instead of 3" in by_name.status()["refused"]
        assert not given.connected and not by_name.connected
        assert given.source_id == by_name.source_id == source_id + "-a"
    finally:
        given.stop()
        by_name.stop()
        outlets.clear()

"""Streams by name whatever their type, types in any case, numeric marker values."""

from __future__ import annotations

import numpy as np
import pylsl
import pytest

from sblr_rt.stream import LSLSource, MarkerSource, StreamDescription, is_marker_stream
from sblr_rt.stream.markers import marker_value

from .conftest import DEADLINE


def _marker_outlet(name, source_id, stype, fmt, labels=("Marker",)):
    info = pylsl.StreamInfo(name, stype, len(labels), pylsl.IRREGULAR_RATE, fmt, source_id)
    channels = info.desc().append_child("channels")
    for label in labels:
        channels.append_child("channel").append_child_value("label", label)
    return pylsl.StreamOutlet(info)


def _pop_until(markers, n):
    got = []
    deadline = pylsl.local_clock() + DEADLINE
    while len(got) < n and pylsl.local_clock() < deadline:
        got += [value for _, value in markers.pop()]
    return got


@pytest.mark.lsl
def test_a_named_stream_is_taken_whatever_its_type(source_id):
    """OpenViBE's EEG is of type 'signal': its name alone finds it."""
    name = f"ov-{source_id[-12:]}"
    info = pylsl.StreamInfo(name, "signal", 2, 100.0, "float32", source_id)
    outlet = pylsl.StreamOutlet(info)
    try:
        with LSLSource(name=name, timeout=DEADLINE) as source:
            assert source.description.stype == "signal"
        with LSLSource(source_id=source_id, stype="SIGNAL", timeout=DEADLINE) as source:
            assert source.description.name == name
        # a source_id alone keeps the default type: mne-lsl's player gives its EEG and
        # its annotations the same source_id
        with pytest.raises(TimeoutError, match="stype='EEG'"):
            LSLSource(source_id=source_id, timeout=0.5).start()
        # a type given as well must match (in any case)
        with pytest.raises(TimeoutError, match="stype='EEG'"):
            LSLSource(name=name, stype="EEG", timeout=0.5).start()
    finally:
        del outlet


@pytest.mark.lsl
def test_the_type_matches_in_any_case(source_id):
    stype = f"Signal-{source_id[-12:]}"  # unique: other streams on this machine never match
    outlet = pylsl.StreamOutlet(
        pylsl.StreamInfo("any-case", stype, 2, 100.0, "float32", source_id)
    )
    try:
        with LSLSource(stype=stype.upper(), timeout=DEADLINE) as source:
            assert source.description.source_id == source_id
        with MarkerSource(stype=stype.lower(), timeout=DEADLINE) as markers:
            assert markers.description.stype == stype
    finally:
        del outlet


@pytest.mark.lsl
@pytest.mark.parametrize(
    ("fmt", "sent", "expected"),
    [("int32", [1, 2, 3], [1, 2, 3]), ("float32", [1.0, 2.5, 3.0], [1, 2.5, 3])],
)
def test_numeric_markers_arrive_as_numbers(source_id, fmt, sent, expected):
    """OpenViBE's int32 'marker' stream: integral values come as int, so '1' is class 1."""
    name = f"ov-markers-{source_id[-12:]}"
    outlet = _marker_outlet(name, source_id, "marker", fmt)
    try:
        with MarkerSource(name=name, timeout=DEADLINE) as markers:
            assert outlet.wait_for_consumers(DEADLINE)
            for value in sent:
                outlet.push_sample([value])
            got = _pop_until(markers, len(sent))
        del markers
    finally:
        del outlet
    assert got == expected
    assert [type(v) for v in got] == [type(v) for v in expected]
    assert [str(v) for v in got] == [str(v) for v in expected]


@pytest.mark.lsl
def test_one_hot_annotations_arrive_as_their_description(source_id):
    """mne-lsl's player: one float64 channel per description, the value its duration."""
    name = f"player-annotations-{source_id[-12:]}"
    outlet = _marker_outlet(name, source_id, "annotations", "double64", ("left", "right"))
    try:
        with MarkerSource(name=name, timeout=DEADLINE) as markers:
            assert outlet.wait_for_consumers(DEADLINE)
            for sample in ([-1.0, 0.0], [0.0, 0.5], [1.0, 1.0]):
                outlet.push_sample(sample)
            got = _pop_until(markers, 3)
        del markers
    finally:
        del outlet
    assert got == ["left", "right", (1.0, 1.0)]  # two hot channels: not one description


def test_marker_value_without_lsl():
    assert marker_value([np.int32(7)]) == 7
    assert marker_value([np.float32(7.0)]) == 7
    assert marker_value([float("nan")]) != marker_value([float("nan")])  # NaN kept as NaN
    assert marker_value(["S  1"]) == "S  1"
    assert marker_value([0.0, 0.0], ["a", "b"]) == (0.0, 0.0)
    assert marker_value([0.0, 2.0], None) == (0.0, 2.0)


@pytest.mark.parametrize(
    ("stype", "fmt", "sfreq", "events"),
    [
        ("EEG", "float32", 250.0, False),
        ("signal", "float32", 512.0, False),  # OpenViBE
        ("eeg", "double64", 160.0, False),  # mne-lsl's player
        ("Markers", "string", 0.0, True),
        ("marker", "int32", 0.0, True),  # OpenViBE
        ("annotations", "double64", 0.0, True),  # mne-lsl's player
        ("whatever", "float32", 0.0, True),  # irregular: events
    ],
)
def test_is_marker_stream(stype, fmt, sfreq, events):
    desc = StreamDescription("s", stype, "id", 1, sfreq, fmt, "host", "uid")
    assert is_marker_stream(desc) is events


@pytest.mark.lsl
def test_channel_info_of_one_of_two_streams_sharing_a_source_id(source_id):
    """mne-lsl's player: its EEG and its annotations have the same source_id."""
    from sblr_rt.stream import stream_channel_info

    eeg = _marker_outlet("shared-eeg", source_id, "eeg", "float32", ("C3", "Cz", "C4"))
    notes = _marker_outlet(
        "shared-eeg-annotations", source_id, "annotations", "double64", ("a", "b")
    )
    try:
        for name, labels in (
            ("shared-eeg", ["C3", "Cz", "C4"]),
            ("shared-eeg-annotations", ["a", "b"]),
        ):
            info = stream_channel_info(source_id=source_id, name=name, timeout=DEADLINE)
            assert [c["label"] for c in info] == labels
        with pytest.raises(TimeoutError, match="and name 'nobody'"):
            stream_channel_info(source_id=source_id, name="nobody", timeout=0.5)
    finally:
        del eeg, notes

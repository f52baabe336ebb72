"""The loop's LSL collaborators: the decision outlets are unique on the network."""

from __future__ import annotations

import pylsl
import pytest

from sblr_rt.online.lsl import LSLDecisionSink
from sblr_rt.stream import PredictionOutlet, resolve_streams


@pytest.mark.lsl
@pytest.mark.parametrize("taken", ["json", "numeric"])
def test_a_second_session_publishing_the_same_outlet_is_refused(source_id, taken):
    name = f"Decisions-{source_id}"
    first = LSLDecisionSink(name, classes=["left", "right"])
    first.open()
    second = LSLDecisionSink(name if taken == "json" else name + "-x", classes=["a", "b"])
    if taken == "numeric":  # only its numeric outlet is the same
        second.numeric_name, second.numeric_source_id = first.numeric_name, first.numeric_source_id
    try:
        expected = rf"an outlet named '{name}(-Numeric)?' with source_id .* is already on the"
        with pytest.raises(RuntimeError, match=expected):
            second.open()
        assert second._outlet is None and second._numeric is None  # nothing created
        names = [s.name for s in resolve_streams(timeout=2.0) if s.name.startswith(name)]
        assert sorted(names) == [name, f"{name}-Numeric"]  # the first session's only
    finally:
        second.close()
        first.close()


@pytest.mark.lsl
def test_the_same_name_with_another_source_id_is_published_with_a_warning(source_id, caplog):
    name = f"Decisions-{source_id}"
    first = LSLDecisionSink(name, classes=None)
    first.open()
    second = LSLDecisionSink(name, source_id=source_id + "-own", classes=None)
    try:
        with caplog.at_level("WARNING", logger="sblr_rt.stream"):
            second.open()
        assert f"Another outlet named '{name}' is on the network" in caplog.text
        assert "choose this session's decisions by source_id" in caplog.text
    finally:
        second.close()
        first.close()


def _published(name, n):
    """The names of the streams on the network whose name starts with ``name``.

    Returns once ``n`` of them answered (within a generous deadline); with ``n == 0``
    after listening 2 s, long enough for LSL to hear from every outlet on this machine.
    """
    if n == 0:
        return [s.name for s in resolve_streams(timeout=2.0) if s.name.startswith(name)]
    infos = pylsl.resolve_bypred(f"starts-with(name,'{name}')", n, 20.0)
    return sorted(info.name() for info in infos)


@pytest.mark.lsl
def test_a_free_name_is_published_and_freed_on_close(source_id):
    name = f"Decisions-{source_id}"
    sink = LSLDecisionSink(name, classes=["left", "right"])
    sink.open()
    try:
        assert _published(name, 2) == [name, f"{name}-Numeric"]  # both outlets are visible
    finally:
        sink.close()
    assert _published(name, 0) == []  # close() took both off the network
    again = LSLDecisionSink(name, classes=None)
    again.open()  # the name was freed by close() (open() refuses a name in use)
    try:
        assert _published(name, 1) == [name]  # the JSON outlet only, without classes
    finally:
        again.close()
    other = PredictionOutlet(name=name + "-other", source_id=source_id)
    alike = LSLDecisionSink(name, classes=None)
    try:
        alike.open()  # a name that only starts alike is free
        assert _published(name, 2) == [name, f"{name}-other"]
    finally:
        alike.close()
        other.close()

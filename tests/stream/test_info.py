"""resolve_streams and StreamDescription against real pylsl outlets."""

from __future__ import annotations

import pytest

from sblr_rt.stream import StreamDescription, resolve_streams

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


@pytest.mark.lsl
def test_resolve_streams_lists_the_outlet(source_id, eeg_outlet):
    outlet = eeg_outlet(source_id, n_channels=3, sfreq=100.0)
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

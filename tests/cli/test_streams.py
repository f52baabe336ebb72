"""``sblr-rt streams`` lists what LSL shows, with the channels' unit."""

from __future__ import annotations

import pytest
from sblr_rt.cli import main


@pytest.mark.lsl
def test_streams_lists_an_eeg_outlet_with_its_unit(source_id, capsys):
    from sblr_rt.stream import EEGOutlet

    outlet = EEGOutlet(
        name="SBLR-Test-Streams",
        source_id=source_id,
        ch_names=["C3", "C4"],
        sfreq=250.0,
        unit="microvolts",
    )
    try:
        found = ""
        for _ in range(10):  # discovery can take a moment on a busy machine
            if main(["streams", "--type", "EEG", "--timeout", "1.0"]) == 0:
                found = capsys.readouterr().out
                if source_id in found:
                    break
        line = next(row for row in found.splitlines() if source_id in row)
        assert "SBLR-Test-Streams" in line and "250 Hz" in line
        assert line.split()[2] == "2"
        assert line.split()[-1] == "microvolts"
    finally:
        outlet.close()


def test_streams_says_when_nothing_is_in_sight(capsys):
    assert main(["streams", "--type", "NoSuchType-d41d8cd9", "--timeout", "0.2"]) == 1
    assert "no LSL stream in sight of type 'NoSuchType-d41d8cd9'" in capsys.readouterr().out

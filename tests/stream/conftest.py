"""LSL helpers for the stream tests: outlets that number their samples, consumer waits.

Channel 0 of every EEG outlet made here carries the sample index, so a test proves that
what arrives equals what was sent, sample for sample.
"""

from __future__ import annotations

import numpy as np
import pylsl
import pytest

DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


def _eeg_outlet(
    source_id,
    *,
    name=None,
    n_channels=4,
    sfreq=250.0,
    fmt="float32",
    labels=None,
    unit="microvolts",
    max_buffered=360,
):
    name = name or f"EEG-{source_id}"
    info = pylsl.StreamInfo(name, "EEG", n_channels, sfreq, fmt, source_id)
    labels = labels or ["index"] + [f"C{k}" for k in range(1, n_channels)]
    channels = info.desc().append_child("channels")
    for label in labels:
        channel = channels.append_child("channel")
        channel.append_child_value("label", label)
        channel.append_child_value("unit", unit)
    return pylsl.StreamOutlet(info, 8, max_buffered)


def _samples(start, n, n_channels, dtype=np.float32):
    data = np.empty((n, n_channels), dtype=dtype)
    data[:, 0] = np.arange(start, start + n)
    data[:, 1:] = (np.arange(start, start + n)[:, None] % 97) - 48
    return data


def _wait_consumer(outlet):
    assert outlet.wait_for_consumers(DEADLINE), "the source never connected"


@pytest.fixture
def eeg_outlet():
    """Return ``eeg_outlet(source_id, *, name, n_channels, sfreq, fmt, labels, unit, ...)``."""
    return _eeg_outlet


@pytest.fixture
def samples():
    """Return ``samples(start, n, n_channels, dtype)``: channel 0 is the sample index."""
    return _samples


@pytest.fixture
def wait_consumer():
    """Return ``wait_consumer(outlet)``: fail unless an inlet connects in time."""
    return _wait_consumer

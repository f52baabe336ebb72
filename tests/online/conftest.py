"""Fixtures for the online tests: small trained models, in-memory loop collaborators."""

from __future__ import annotations

import types

import numpy as np
import pytest

from sblr_rt.io.jsonable import dumps
from sblr_rt.stream.ring_buffer import RingBuffer
from tests.models import fit_model


def _make_model(
    *,
    features="waveform",
    rank=1,
    n_classes=2,
    multi_class="ovr",
    n_channels=6,
    sfreq=100.0,
    tmin=0.0,
    tmax=1.0,
    l_freq=None,
    h_freq=None,
    baseline=None,
    scaling="channel",
    picks=None,
    n_times=None,
    seed=0,
    n_epochs=30,
    bands=((8.0, 13.0), (13.0, 30.0)),
):
    from sblr_rt.bci_model import EnsembleModel

    if features == "ensemble":  # a waveform and a band-power member: different warm-ups
        common = {"rank": rank, "n_classes": n_classes, "multi_class": multi_class,
                  "n_channels": n_channels, "sfreq": sfreq, "tmin": tmin, "tmax": tmax,
                  "picks": picks, "seed": seed, "n_epochs": n_epochs}  # fmt: skip
        return EnsembleModel(
            [
                _make_model(features="waveform", **common),
                _make_model(features="bandpower", **common),
            ]
        )
    ch_names = [f"EEG{i:03d}" for i in range(n_channels)]
    extra = {"bands": bands} if features == "bandpower" else {}
    model, _, _ = fit_model(
        ch_names, sfreq=sfreq, tmin=tmin, tmax=tmax, n_classes=n_classes, informative=ch_names,
        n_epochs=n_epochs, seed=seed, features=features, picks=picks, l_freq=l_freq,
        h_freq=h_freq, baseline=baseline, scaling=scaling, n_times=n_times, **extra,
        estimator={"rank": rank, "multi_class": multi_class, "max_iter": 50},
    )  # fmt: skip
    return model


@pytest.fixture(scope="session")
def make_model():
    """Return a factory ``make_model(**options) -> BCIModel`` (cached per options)."""
    cache = {}

    def factory(**options):
        key = tuple(sorted((k, repr(v)) for k, v in options.items()))
        if key not in cache:
            cache[key] = _make_model(**options)
        return cache[key]

    return factory


#: Model options of the cases every ``case_model`` test runs on.
CASES = {
    "wave-r1": {},
    "wave-r3-filter-baseline": {
        "rank": 3,
        "l_freq": 1.0,
        "h_freq": 20.0,
        "baseline": (0.0, 0.2),
        "scaling": "channel_time",
        "picks": ["EEG004", "EEG001", "EEG002"],
    },
    "wave-3class-ovr": {"n_classes": 3, "rank": 2},
    "wave-3class-multinomial": {"n_classes": 3, "multi_class": "multinomial", "rank": 2},
    "bandpower-r2": {"features": "bandpower", "rank": 2},
    "bandpower-3class": {"features": "bandpower", "n_classes": 3, "picks": ["EEG003", "EEG000"]},
    "covariance-r2": {"features": "covariance", "rank": 2},
    "ensemble-r2": {"features": "ensemble", "rank": 2},
}


def pytest_generate_tests(metafunc):
    """Run every test taking ``case_model`` once per entry of ``CASES``."""
    if "case_model" in metafunc.fixturenames:
        metafunc.parametrize("case", list(CASES))


@pytest.fixture
def case_model(make_model, case):
    """The model of one entry of ``CASES``."""
    return make_model(**CASES[case])


# In-memory collaborators of the online loop: no LSL, no thread.
class FakeSource:
    """An EEG source serving chunks of a numpy array with their timestamps.

    Parameters
    ----------
    data : ndarray, shape (n_samples, n_channels)
        What the stream will carry.
    timestamps : ndarray, shape (n_samples,)
        Their timestamps.
    ch_names : list of str
        Channel labels.
    sfreq : float
        Declared rate.
    """

    def __init__(self, data, timestamps, ch_names, sfreq, *, capacity=None):
        self.data = np.asarray(data, dtype=np.float64)
        self.timestamps = np.asarray(timestamps, dtype=np.float64)
        self.ch_names = list(ch_names)
        self.sfreq = float(sfreq)
        self.n_channels = len(self.ch_names)
        self.name = "fake-eeg"
        self.source_id = "fake"
        self.buffer = RingBuffer(self.n_channels, capacity or len(self.data))
        self.sent = 0
        self.extra_status = {}

    def send(self, n):
        """Make the next ``n`` samples available, as one chunk."""
        stop = min(self.sent + n, len(self.data))
        self.buffer.push(self.data[self.sent : stop], self.timestamps[self.sent : stop])
        self.sent = stop

    def status(self):
        return {"connected": True, "effective_sfreq": self.sfreq, **self.extra_status}


class FakeMarkers:
    """A marker source: ``add(t, value)``, then the loop's ``pop()`` takes them."""

    def __init__(self):
        self.queue = []

    def add(self, t, value):
        self.queue.append((t, value))

    def pop(self):
        out, self.queue = self.queue, []
        return out


class FakeSink:
    """A decision sink keeping what a JSON outlet would send (strict JSON)."""

    def __init__(self):
        self.sent = []

    def push(self, decision):
        self.sent.append(dumps(decision))


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, t=0.0):
        self.t = float(t)

    def __call__(self):
        return self.t


@pytest.fixture
def fakes():
    """The in-memory collaborators: ``Source``, ``Markers``, ``Sink``, ``Clock``."""
    return types.SimpleNamespace(
        Source=FakeSource, Markers=FakeMarkers, Sink=FakeSink, Clock=FakeClock
    )

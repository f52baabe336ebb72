"""Fixtures of the dashboard tests: a real model fitted on simulated EEG, fake snapshots."""

from __future__ import annotations

import time

import numpy as np
import pytest

from sblr_rt.io.model_file import save_model
from sblr_rt.online.decision import Decision
from sblr_rt.online.telemetry import Dropped, RawTraces, Stats, StreamTelemetry, Telemetry

SIM_CLASSES = ("left", "right")


def start_simulator(name, source_id):
    """The 16-channel simulator at 100 Hz in the background, a cue every 2-2.5 s."""
    from sblr_rt.playback.simulator import run_simulator

    return run_simulator(
        name=name,
        source_id=source_id,
        sfreq=100.0,
        n_channels=16,
        classes=SIM_CLASSES,
        first_cue=0.5,
        trial_duration=1.5,
        iti=(0.5, 1.0),
        background=True,
    )


def simulated_model(
    *,
    n_channels=16,
    sfreq=100.0,
    tmin=0.5,
    tmax=1.5,
    features="waveform",
    rank=2,
    seed=0,
    prior=False,
):
    """A BCIModel fitted on epochs of the project's simulator (no LSL, about 1 s).

    ``prior=True`` gives it a pool of its training features (two made-up people), as a
    prior across people carries.
    """
    from sblr_rt.bci_model import SingleModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.playback.simulator import Simulator
    from sblr_rt.preprocessing import Preprocessor

    sim = Simulator(
        sfreq=sfreq,
        n_channels=n_channels,
        classes=SIM_CLASSES,
        seed=seed,
        first_cue=0.5,
        trial_duration=1.5,
        iti=(0.5, 1.0),
    )
    data, markers = sim.read(int(120 * sfreq))
    pre = Preprocessor(ch_names=sim.ch_names, sfreq=sfreq, tmin=tmin, tmax=tmax, features=features)
    start, stop = round(tmin * sfreq) - pre.n_pad, round(tmax * sfreq)
    keep = [(s, c) for s, c in markers if s + start >= 0 and s + stop <= len(data)]
    raw = np.stack([data[s + start : s + stop].T for s, _ in keep])
    y = np.array([SIM_CLASSES.index(c) for _, c in keep])
    Z = pre.fit(raw).transform(raw)
    est = SparseBilinearLogisticRegression(
        rank=rank, mu1=0.0005, nu1=0.0005, random_state=0, max_iter=300, tol=1e-2
    ).fit(Z, y)
    # the Model tab's tests check every component's plots: none may have collapsed
    assert np.all(np.abs(est.spatial_).sum(axis=0) > 0), "a component of the fixture is empty"
    metadata = {
        "selection": {
            "rank": rank,
            "ranks": [{"rank": r, "mean": 0.7 + 0.05 * r, "std": 0.05} for r in (1, 2)],
            "grid": [
                {
                    "mu1_fraction": a,
                    "mu2": 0.0,
                    "nu1_fraction": b,
                    "nu2": 0.0,
                    "mean": 0.8 - a - b,
                    "std": 0.05,
                }
                for a in (0.0, 0.05, 0.1)
                for b in (0.0, 0.02, 0.05, 0.1)
            ],
            "best": {
                "mu1_fraction": 0.0,
                "mu2": 0.0,
                "nu1_fraction": 0.0,
                "nu2": 0.0,
                "mean": 0.8,
                "std": 0.05,
            },
        },
        "objective": np.asarray(est.objective_).tolist(),
    }
    pool = None
    if prior:
        from sblr_rt.model.prior_pool import PriorPool

        pool = PriorPool(Z, y, np.arange(y.size) % 2)
    return SingleModel(
        preprocessor=pre,
        estimator=est,
        classes=list(SIM_CLASSES),
        metadata=metadata,
        pool=pool,
    )


#: The members of :func:`simulated_ensemble` and their weights in the decision.
ENSEMBLE_MEMBERS = (
    ({"features": "waveform", "rank": 2}, 0.5),
    ({"features": "bandpower", "rank": 1, "seed": 1}, 0.3),
    ({"features": "waveform", "rank": 1, "seed": 2, "prior": True}, 0.2),
)


def simulated_ensemble():
    """An ensemble of three simulated models: waveform, band power, and a prior (weight 0.2)."""
    from sblr_rt.bci_model import EnsembleModel

    members = [simulated_model(**kwargs) for kwargs, _ in ENSEMBLE_MEMBERS]
    metadata = members[0].metadata
    for m in members:  # as calibration writes them: the selection is the ensemble's
        m.metadata = {}
    return EnsembleModel(members, metadata=metadata, weights=[w for _, w in ENSEMBLE_MEMBERS])


@pytest.fixture(scope="session")
def sim_model():
    return simulated_model()


@pytest.fixture(scope="session")
def sim_model_file(tmp_path_factory, sim_model):
    path = tmp_path_factory.mktemp("models") / "sim.sblr.npz"
    save_model(sim_model, path)
    return path


@pytest.fixture(scope="session")
def sim_ensemble_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "ensemble.sblr.npz"
    save_model(simulated_ensemble(), path)
    return path


class FakeSnapshots:
    """A stand-in for OnlineLoop.snapshot(): a Telemetry with synthetic content."""

    def __init__(self, ch_names, *, classes=SIM_CLASSES, connected=True, seconds=10.0):
        self.ch_names = list(ch_names)
        self.classes = list(classes)
        self.connected = connected
        self.seconds = seconds
        self.calls = []
        self.rng = np.random.default_rng(0)

    def snapshot(self, channels=None, *, n_decisions=None):
        self.calls.append(channels)
        now = time.monotonic()
        names = list(channels) if channels is not None else self.ch_names
        n = int(self.seconds * 100)
        last = now - (3.0 if not self.connected else 0.01)
        times = last - np.arange(n)[::-1] / 100.0
        data = self.rng.normal(size=(len(names), n)).astype(np.float32) * 1e-5
        decisions = []
        for t in np.arange(now - self.seconds, last, 0.05):
            p = 1 / (1 + np.exp(-np.sin(t)))
            decisions.append(
                Decision(
                    label=self.classes[int(p > 0.5)],
                    proba={self.classes[0]: 1 - p, self.classes[1]: p},
                    score=0.0,
                    window_end=float(t),
                    # the evidence over the trial: pulled towards chance here
                    proba_smoothed={
                        self.classes[0]: 0.5 - (p - 0.5) / 2,
                        self.classes[1]: 0.5 + (p - 0.5) / 2,
                    },
                )
            )
        cue_t = now - 4.0
        trials = [
            Decision(
                label="right",
                proba={"left": 0.2, "right": 0.8},
                score=1.4,
                window_end=cue_t + 1.5,
                trial=True,
                cue="right",
            )
        ]
        return Telemetry(
            time=now,
            running=True,
            mode="trial",
            stream=StreamTelemetry(
                name="Fake-EEG",
                sfreq=100.0,
                n_channels=len(self.ch_names),
                ch_names=tuple(self.ch_names),
                connected=self.connected,
                buffer_fill=0.5,
                effective_sfreq=100.0,
            ),
            raw=RawTraces(data, times, tuple(names)),
            decisions=tuple(decisions),
            trials=tuple(trials),
            cues=((cue_t, "right"),),
            step_time=Stats(p50=4e-5, p99=9e-5),
            latency=Stats(p50=1e-3, p99=2e-3),
            decisions_per_second=20.0,
            gaps=((now - 6.0, now - 5.5),),
            n_gaps=1,
            dropped=Dropped(gap=3),
        )

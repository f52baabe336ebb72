"""A real recording replayed through LSL into the online loop gives the offline decisions.

PhysioNet S001 run 6 (imagined both fists / both feet, 64 channels at 160 Hz) is played by
:mod:`sblr_rt.playback.stream_player` at 4 x real time into three loops at once, one per feature
path, each with a spatial stage (so every feature path and every stage is covered), in trial
mode. Each trial decision must sit where the offline epoching puts the cue's window and
equal the offline :class:`~sblr_rt.bci_model.BCIModel` on the same samples. A fourth loop
runs a covariance model calibrated on run 10 with run centring, a fifth the default
calibration on run 10 (an ensemble of four candidates, each member on its own fast form),
a sixth a prior built from runs 5 and 9 (as if two people), a seventh that prior refined
with run 10 as the weighted member of an ensemble, and an eighth with that member at weight
0 (evidence worse than chance keeps it in the model): their trial decisions adapt to run 6 as
they come, and must equal :meth:`BCIModel.decision_function_run` offline.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sblr_rt.calibration import adapt_prior, build_prior, calibrate

from sblr_rt.bci_model import EnsembleModel, SingleModel
from sblr_rt.io.reading import read_recording
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.online import OnlineLoop
from sblr_rt.playback.stream_player import replay
from sblr_rt.preprocessing import Preprocessor

DEADLINE = 60.0
SPEED = 4.0
DURATION = 64.0  # seconds of data streamed (about 7 classified cues)
CLASSES = ["T1", "T2"]


def _epochs(rec, pre):
    """Offline epochs by the BCIModel convention; returns (epochs, onsets, labels)."""
    off = round(pre.tmin * pre.sfreq) - pre.n_pad
    onsets, labels = [], []
    for t, value in zip(rec.marker_times, rec.marker_values, strict=True):
        onset = round(float(t) * rec.sfreq)
        if (
            value in CLASSES
            and onset + off >= 0
            and onset + off + pre.n_times_raw <= rec.n_samples
        ):
            onsets.append(onset)
            labels.append(CLASSES.index(value))
    rows = [rec.ch_names.index(c) for c in pre.ch_names]  # the model's channels, its order
    epochs = np.stack([rec.data[rows, o + off : o + off + pre.n_times_raw] for o in onsets])
    return epochs, np.array(onsets), np.array(labels)


#: (feature path, spatial stage) of the three loops.
FORMS = {"waveform": "car", "bandpower": "csd", "spectral": "car"}


def _train(rec, features):
    kwargs = {"l_freq": 1.0, "h_freq": 30.0} if features == "waveform" else {}
    pre = Preprocessor(
        ch_names=rec.ch_names,
        sfreq=rec.sfreq,
        tmin=0.5,
        tmax=2.5,
        features=features,
        spatial=FORMS[features],
        **kwargs,
    )
    epochs, _, y = _epochs(rec, pre)
    X = pre.fit(epochs).transform(epochs)
    est = SparseBilinearLogisticRegression(rank=2, mu2=1e-2, nu2=1e-2, max_iter=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return SingleModel(preprocessor=pre, estimator=est, classes=CLASSES)


@pytest.mark.lsl
@pytest.mark.slow
def test_replayed_recording_gives_the_offline_trial_decisions(physionet_dir, source_id):
    rec = read_recording(physionet_dir / "S001R06.edf")
    models = {f: _train(rec, f) for f in FORMS}
    models["covariance"] = calibrate(
        physionet_dir / "S001R10.edf",
        classes=CLASSES,
        tmin=0.5,
        tmax=2.5,
        features="covariance",
        n_jobs=1,
    )
    assert models["covariance"].run_centring is not None
    # the default: an ensemble, each member on its fast incremental form (30 trials: on run 10's 15
    # alone three of the four are not above chance in their own CV and are left out)
    models["auto"] = calibrate(
        [physionet_dir / "S001R09.edf", physionet_dir / "S001R10.edf"],
        classes=CLASSES, tmin=0.5, tmax=2.5, n_jobs=1,
    )  # fmt: skip
    assert models["auto"].is_ensemble and len(models["auto"].members) == 4
    # a prior of two other runs (as if two people), and a weighted ensemble with it
    models["prior"] = build_prior(
        [physionet_dir / "S001R05.edf", physionet_dir / "S001R09.edf"],
        people=["A", "B"],
        classes=CLASSES,
        tmin=0.5,
        tmax=2.5,
        lopo=False,
    )
    adapted = adapt_prior(models["prior"], [physionet_dir / "S001R10.edf"])
    models["weighted"] = EnsembleModel(
        [*models["auto"].members, adapted], weights=[0.15, 0.15, 0.15, 0.15, 0.4]
    )
    # a member whose evidence was worse than chance stays in the model at weight 0
    models["prior dropped"] = EnsembleModel(
        [*models["auto"].members, adapted], weights=[0.25, 0.25, 0.25, 0.25, 0.0]
    )
    player = replay(
        rec,
        name="exact-replay",
        source_id=source_id,
        speed=SPEED,
        duration=DURATION,
        dtype="float64",
        wait_for_consumers=DEADLINE,
    )
    loops = {
        f: OnlineLoop.from_lsl(
            m,
            source_id=source_id,
            mode="trial",
            hop=1.0,
            marker_source_id=f"{source_id}-markers",
            outlet_source_id=f"{source_id}-{f}-pred",
            timeout=DEADLINE,
        )
        for f, m in models.items()
    }
    n_streamed = round(DURATION * rec.sfreq)
    # the trials each loop must decide: every cue whose window ends inside the stream
    want = {
        f: int(np.sum(_epochs(rec, m)[1] + round(m.tmax * m.sfreq) <= n_streamed))
        for f, m in models.items()
    }
    try:
        for loop in loops.values():
            loop.start()
        player.start()
        assert player.wait(DEADLINE + DURATION / SPEED), "the replay did not finish"
        deadline = time.monotonic() + DEADLINE
        decisions = {f: [] for f in loops}

        def short() -> dict:  # the loops still short of samples or trial decisions
            return {
                f: (s.stream.n_samples, s.n_trial_decisions, s.dropped.trials, want[f])
                for f, s in snaps.items()
                if s.stream.n_samples < n_streamed
                or s.n_trial_decisions + s.dropped.trials < want[f]
            }

        while True:
            for f, loop in loops.items():
                decisions[f].extend(loop.pop_decisions())
            snaps = {f: loop.snapshot() for f, loop in loops.items()}
            if not short():
                break
            # (samples, trial decisions, trials dropped, trials wanted) of each late loop
            assert time.monotonic() < deadline, (n_streamed, short())
            time.sleep(0.05)
        for f, loop in loops.items():
            decisions[f].extend(loop.pop_decisions())
            snaps[f] = loop.snapshot()
    finally:
        for loop in loops.values():
            loop.stop()
        player.stop()

    for f, model in models.items():
        pre = model  # what every member reads: channels, rate, window, warm-up
        epochs, onsets, _ = _epochs(rec, pre)
        stop_offset = round(pre.tmax * pre.sfreq)
        inside = onsets + stop_offset <= n_streamed
        trials = [d for d in decisions[f] if d["trial"]]
        assert snaps[f].n_gaps == 0 and snaps[f].dropped.trials == 0, snaps[f]
        assert len(trials) == int(inside.sum()) >= 6, (f, len(trials))
        if model.run_centring is None:
            offline = model.decision_function(epochs[inside])
        else:  # the trials adapt the run's mean in order, online as offline
            offline = model.decision_function_run(epochs[inside])
            static = model.decision_function(epochs[inside])
            assert not np.allclose(offline, static), "run centring changed nothing"
        rate = rec.sfreq * SPEED
        for d, onset, score in zip(trials, onsets[inside], offline, strict=True):
            # The window is where offline epoching puts it ...
            stop = round((d["window_end"] - player.t_start) * rate) + 1
            assert stop == onset + stop_offset, (f, stop, onset)
            assert d["cue"] in CLASSES
            # ... and the score equals the offline model on those samples.
            np.testing.assert_allclose(d["score"], score, rtol=1e-7, atol=1e-9)
        labels = model.labels_from_scores(offline)[0].tolist()
        assert [d["label"] for d in trials] == labels
        cues = [
            v
            for t, v in zip(rec.marker_times, rec.marker_values, strict=True)
            if v in CLASSES and round(t * rec.sfreq) + stop_offset <= n_streamed
        ]
        assert [d["cue"] for d in trials] == cues

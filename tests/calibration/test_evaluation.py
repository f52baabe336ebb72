"""Scoring a model on labelled recordings: the decisions ``run`` makes, the figures."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.evaluation import evaluate_model

from sblr_rt.io.recording import Recording

SFREQ = 100.0
CH = [f"EEG{i:03d}" for i in range(5)]


def _recording(n_trials, *, seed, shift=0.0):
    """Noise with a class bump after each cue (channel 0 for A, 1 for B), offset ``shift``."""
    rng = np.random.default_rng(seed)
    n = int((2.0 + 2.0 * n_trials + 2.0) * SFREQ)
    data = rng.standard_normal((len(CH), n)) + shift
    onsets = [int((2.0 + 2.0 * k) * SFREQ) for k in range(n_trials)]
    values = ["A" if rng.random() < 0.5 else "B" for _ in range(n_trials)]
    bump = np.sin(np.linspace(0, np.pi, int(SFREQ)))
    for i, v in zip(onsets, values, strict=True):
        data[0 if v == "A" else 1, i : i + bump.size] += 1.5 * bump
    return Recording(data=data, sfreq=SFREQ, ch_names=CH, marker_times=np.array(onsets) / SFREQ,
                     marker_values=values, source=f"run{seed}", unit="uV")  # fmt: skip


@pytest.fixture(scope="module")
def model():
    return calibrate(_recording(40, seed=0), classes={"A": "left", "B": "right"},
                     features="waveform", tmin=0.0, tmax=1.0, search="none", ranks=(1,), cv=3,
                     n_jobs=1, recentre=True)  # fmt: skip


def _raw(rec, model):
    """The raw epochs of every cue, in the model's channel order, and their classes."""
    start = round(model.tmin * SFREQ) - model.n_pad
    order = [rec.ch_names.index(c) for c in model.ch_names]
    on = np.round(rec.marker_times * SFREQ).astype(int) + start
    X = np.stack([rec.data[order, i : i + model.n_times_raw] for i in on])
    return X, np.array(["left" if v == "A" else "right" for v in rec.marker_values])


def test_each_recording_is_decided_as_a_run_centred_in_time_order(model):
    runs = [_recording(16, seed=1, shift=3.0), _recording(12, seed=2, shift=-2.0)]
    result = evaluate_model(model, runs)
    assert result.run_centred and model.run_centring is not None
    expected, truth = [], []
    for rec in runs:  # each run from the calibration reference, its own running mean
        X, y = _raw(rec, model)
        expected += model.predict_run(X).tolist()
        truth += y.tolist()
    assert [t.label for t in result.trials] == expected
    assert [t.true for t in result.trials] == truth
    assert result.score.n_correct == sum(np.array(expected) == np.array(truth))
    assert [t.index for t in result.trials] == [*range(1, 17), *range(1, 13)]
    assert list(result.per_recording) == ["run1", "run2"]
    assert result.per_recording["run2"].n_trials == 12
    assert result.score.seconds_per_trial == pytest.approx(2.0)
    static = evaluate_model(model, runs, static=True)
    assert [t.label for t in static.trials] == [
        lab for rec in runs for lab in model.predict(_raw(rec, model)[0])
    ]
    rows = result.to_dict()["trials"]
    assert rows[0].keys() >= {"recording", "index", "time", "marker", "true", "label", "correct"}


def test_another_channel_order_and_unit_are_read_as_the_model_would(model):
    rec = _recording(10, seed=3)
    shuffled = dataclasses.replace(
        rec,
        data=rec.data[::-1] * 1e-6,
        ch_names=CH[::-1],
        unit="V",  # same samples in V
    )
    a, b = evaluate_model(model, [rec]), evaluate_model(model, [shuffled])
    assert [t.label for t in a.trials] == [t.label for t in b.trials]
    np.testing.assert_allclose([t.proba["left"] for t in a.trials],
                               [t.proba["left"] for t in b.trials], rtol=1e-6)  # fmt: skip


def test_a_recording_without_a_channel_the_model_reads_is_refused(model):
    rec = _recording(6, seed=4)
    short = dataclasses.replace(rec, data=rec.data[1:], ch_names=CH[1:])
    with pytest.raises(ValueError, match=r"must hold the channels the model reads, got none "
                       r"named \['EEG000'\] \(run4\)"):  # fmt: skip
        evaluate_model(model, [short])


def test_epochs_the_loop_would_refuse_are_counted_and_left_out(model):
    rec = _recording(8, seed=5)
    data = rec.data.copy()
    i = round(rec.marker_times[2] * SFREQ)
    data[0, i + 10] = np.nan  # a gap in the third trial's window
    result = evaluate_model(model, [dataclasses.replace(rec, data=data)])
    assert result.score.n_trials == 7 and result.rejected["nan"] == 1
    assert rec.marker_times[2] not in [t.time for t in result.trials]

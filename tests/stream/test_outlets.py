"""The LSL outlets publish what they are given, with metadata, to a real inlet."""

from __future__ import annotations

import json
import time

import numpy as np
import pylsl
import pytest

from sblr_rt.stream import EEGOutlet, MarkerOutlet, PredictionOutlet


def _resolve(source_id, timeout=10.0):
    streams = pylsl.resolve_byprop("source_id", source_id, 1, timeout)
    assert streams, f"stream {source_id} not found"
    return streams[0]


def _pull_until(inlet, n, *, timeout=10.0, strings=False):
    samples, stamps = [], []
    deadline = time.monotonic() + timeout
    while len(stamps) < n and time.monotonic() < deadline:
        chunk, ts = inlet.pull_chunk(timeout=0.2)
        samples.extend(chunk)
        stamps.extend(ts)
    assert len(stamps) >= n, f"received {len(stamps)} of {n} samples"
    return (samples if strings else np.asarray(samples)), np.asarray(stamps)


@pytest.mark.lsl
def test_eeg_outlet_metadata_and_samples(source_id):
    ch_names = ["C3", "Cz", "C4"]
    outlet = EEGOutlet(
        name="test-eeg", ch_names=ch_names, sfreq=250.0, source_id=source_id, dtype="float64"
    )
    info = _resolve(source_id)
    inlet = pylsl.StreamInlet(info)
    try:
        full = inlet.info(timeout=5.0)
        assert full.get_channel_labels() == ch_names
        assert full.get_channel_units() == ["volts"] * 3
        assert full.nominal_srate() == 250.0
        assert full.type() == "EEG"
        inlet.open_stream(timeout=5.0)
        assert outlet.wait_for_consumers(5.0)
        assert outlet.have_consumers()
        data = np.arange(30, dtype=float).reshape(10, 3)
        stamps = 1000.0 + np.arange(10) / 250.0
        outlet.push_chunk(data, stamps)
        outlet.push_chunk(data[:5] + 100, 2000.0)  # last-sample stamp, others deduced
        got, ts = _pull_until(inlet, 15)
        np.testing.assert_array_equal(got, np.vstack([data, data[:5] + 100]))
        np.testing.assert_allclose(ts[:10], stamps)
        np.testing.assert_allclose(ts[10:], 2000.0 - np.arange(4, -1, -1) / 250.0)
    finally:
        del inlet
        outlet.close()
    with pytest.raises(RuntimeError, match="closed"):
        outlet.push_chunk(np.zeros((1, 3)))
    outlet.close()


@pytest.mark.lsl
def test_marker_and_prediction_outlets(source_id):
    markers = MarkerOutlet(name="test-markers", source_id=source_id + "-m")
    preds = PredictionOutlet(source_id=source_id + "-p")
    m_inlet = pylsl.StreamInlet(_resolve(source_id + "-m"))
    p_inlet = pylsl.StreamInlet(_resolve(source_id + "-p"))
    try:
        assert p_inlet.info(timeout=5.0).name() == "SBLR-Predictions"
        assert p_inlet.info().type() == "Markers"
        m_inlet.open_stream(timeout=5.0)
        p_inlet.open_stream(timeout=5.0)
        markers.push("left", 123.5)
        decision = {
            "label": "left",
            "proba": {"left": np.float64(0.75), "right": 0.25},
            "window_end": 122.0,
            "trial": True,
            "cue": None,
        }
        preds.push(decision)
        got, ts = _pull_until(m_inlet, 1, strings=True)
        assert got == [["left"]] and ts[0] == 123.5
        got, ts = _pull_until(p_inlet, 1, strings=True)
        assert json.loads(got[0][0]) == {**decision, "proba": {"left": 0.75, "right": 0.25}}
    finally:
        del m_inlet, p_inlet
        markers.close()
        preds.close()


def test_outlet_argument_errors(source_id):
    with pytest.raises(ValueError, match="'sfreq'"):
        EEGOutlet(name="x", ch_names=["a"], sfreq=0, source_id=source_id)
    with pytest.raises(ValueError, match="'dtype'"):
        EEGOutlet(name="x", ch_names=["a"], sfreq=10, source_id=source_id, dtype="complex")
    with pytest.raises(TypeError, match="'ch_names'"):
        EEGOutlet(name="x", ch_names="abc", sfreq=10, source_id=source_id)
    with EEGOutlet(name="x", ch_names=["a", "b"], sfreq=10, source_id=source_id) as outlet:
        with pytest.raises(ValueError, match=r"\(n_samples, 2\)"):
            outlet.push_chunk(np.zeros((3, 3)))
        with pytest.raises(ValueError, match="'timestamps'"):
            outlet.push_chunk(np.zeros((3, 2)), [1.0, 2.0])
        outlet.push_chunk(np.zeros((0, 2)))  # empty chunk: nothing sent
    with MarkerOutlet(name="m", source_id=source_id + "-m") as markers:
        with pytest.raises(TypeError, match="'value'"):
            markers.push(3)
    with PredictionOutlet(source_id=source_id + "-p") as preds:
        with pytest.raises(TypeError, match="'decision'"):
            preds.push("left")


def test_probability_outlet_sample_layout(source_id):
    from sblr_rt.stream import ProbabilityOutlet

    with ProbabilityOutlet(["left", "right"], source_id=source_id) as out:
        assert out.ch_names == [
            "left",
            "right",
            "left_smoothed",
            "right_smoothed",
            "trial",
            "early",
            "model_version",
        ]
        raw = out.sample({"proba": {"left": 0.75, "right": 0.25}, "trial": True})
        np.testing.assert_array_equal(raw, np.float32([0.75, 0.25, 0.75, 0.25, 1, 0, 0]))
        smooth = out.sample(
            {
                "proba": {"left": 0.75, "right": 0.25},
                "proba_smoothed": {"left": 0.5, "right": 0.5},
                "early": True,
                "model_version": 3,
            }
        )
        np.testing.assert_array_equal(smooth, np.float32([0.75, 0.25, 0.5, 0.5, 0, 1, 3]))
        assert smooth.dtype == np.float32
        with pytest.raises(ValueError, match="every class"):
            out.sample({"proba": {"left": 1.0}})
        with pytest.raises(TypeError, match="'decision'"):
            out.push("left")
    with pytest.raises(ValueError, match="distinct"):
        ProbabilityOutlet(["a", "a"], source_id=source_id)


def test_decision_outlets_default_source_ids_are_recognised():
    from sblr_rt.stream import StreamDescription, decision_source_id, is_decision_stream

    def desc(name, sid):
        return StreamDescription(name, "Markers", sid, 1, 0.0, "string", "h", "u")

    assert decision_source_id("Feedback").startswith("sblr-rt-decisions")
    assert is_decision_stream(desc("Feedback", decision_source_id("Feedback")))
    assert is_decision_stream(desc("SBLR-Predictions", "anything"))
    assert is_decision_stream(desc("SBLR-Predictions-demo", "x"))
    assert not is_decision_stream(desc("SBLR-Sim-Markers", "sblr-sim-markers"))
    assert not is_decision_stream(desc("cues", "sblr-rt-cues"))


@pytest.mark.lsl
def test_mne_lsl_reads_the_numeric_decision_outlet(source_id):
    """A consumer that is not ours: mne-lsl's StreamLSL, as a feedback program would."""
    mne_lsl_stream = pytest.importorskip("mne_lsl.stream")
    from sblr_rt.stream import ProbabilityOutlet, local_clock

    out = ProbabilityOutlet(["left", "right"], source_id=source_id)
    stream = mne_lsl_stream.StreamLSL(bufsize=10, source_id=source_id)
    try:
        stream.connect(acquisition_delay=0.01, timeout=10.0)
        assert stream.ch_names == out.ch_names
        assert stream.info["sfreq"] == 0  # irregular: one sample per decision
        assert out.wait_for_consumers(10.0)
        t0 = local_clock() - 5.0
        decisions = [
            {
                "proba": {"left": p, "right": 1 - p},
                "proba_smoothed": {"left": 0.5 + (p - 0.5) / 2, "right": 0.5 - (p - 0.5) / 2},
                "window_end": t0 + 0.25 * k,
                "trial": k == 2,
                "early": False,
                "model_version": k,
            }
            for k, p in enumerate((0.9, 0.6, 0.2))
        ]
        for decision in decisions:
            out.push(decision)
        deadline = time.monotonic() + 10.0
        while stream.n_new_samples < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert stream.n_new_samples >= 3
        data, ts = stream.get_data(winsize=3)  # (n_channels, n_samples)
        np.testing.assert_allclose(data[0], [0.9, 0.6, 0.2], rtol=1e-6)
        np.testing.assert_allclose(data[1], [0.1, 0.4, 0.8], rtol=1e-6)
        np.testing.assert_allclose(data[2], [0.7, 0.55, 0.35], rtol=1e-6)
        np.testing.assert_array_equal(data[4], [0, 0, 1])
        np.testing.assert_array_equal(data[6], [0, 1, 2])  # the deciding model's version
        # each sample is stamped with its decision's window_end
        np.testing.assert_allclose(ts, [d["window_end"] for d in decisions], atol=1e-6)
    finally:
        stream.disconnect()
        del stream
        out.close()

"""Units: the stream's declared unit against the model's, rescaled once at ingest or refused.

Also the stream state and the reasons for refused windows the loop reports, and the
status line of ``sblr-rt run`` (tests/cli/test_run.py is another engineer's file).
"""

from __future__ import annotations

import copy
import logging
import time

import numpy as np
import pylsl
import pytest
from sblr_rt.cli import main
from sblr_rt.cli.run import _status_line

from sblr_rt.io.model_file import save_model
from sblr_rt.online import OnlineClassifier, OnlineLoop
from sblr_rt.online.stream_units import check_stream_units, normalize_unit, unit_factor
from sblr_rt.stream import EEGOutlet, MarkerOutlet

SFREQ = 100.0
DEADLINE = 20.0  # generous: the machine may be loaded; tests never assert timings


# ---------------------------------------------------------------------------- normalising
@pytest.mark.parametrize(
    ("spelling", "unit"),
    [
        ("V", "V"),
        ("volts", "V"),
        (" Volt ", "V"),
        ("mV", "mV"),
        ("millivolts", "mV"),
        ("uV", "uV"),
        ("µV", "uV"),  # micro sign
        ("μV", "uV"),  # Greek mu
        ("microvolts", "uV"),
        ("MICROVOLTS", "uV"),
        ("nV", "nV"),
        ("nanovolts", "nV"),
        ("", None),
        ("unknown", None),
        ("a.u.", None),
        ("degC", None),
        (None, None),
    ],
)
def test_normalize_unit_reads_every_spelling(spelling, unit):
    assert normalize_unit(spelling) == unit


def test_unit_factor_converts_between_voltages():
    assert unit_factor("microvolts", "V") == pytest.approx(1e-6)
    assert unit_factor("V", "uV") == pytest.approx(1e6)
    assert unit_factor("mV", "µV") == pytest.approx(1e3)
    assert unit_factor("nanovolts", "microvolts") == pytest.approx(1e-3)
    assert unit_factor("volts", "V") == 1.0
    with pytest.raises(ValueError, match=r"'unit_from' must be a voltage unit.*'unknown'"):
        unit_factor("unknown", "V")
    with pytest.raises(TypeError, match="'unit' must be a str"):
        normalize_unit(1e-6)


def test_check_stream_units_decides_rescale_refuse_or_warn(caplog):
    caplog.set_level(logging.INFO, logger="sblr_rt.online")
    assert check_stream_units("V", ["volts", "V"]) is None  # the same unit, spelled twice
    assert check_stream_units("V", ["microvolts"] * 3, stream="amp") == pytest.approx(1e-6)
    assert "amp is in microvolts, the model in V" in caplog.text and "1e-06" in caplog.text
    mixed = check_stream_units("uV", ["V", "mV", "uV"])
    np.testing.assert_allclose(mixed, [1e6, 1e3, 1.0])
    with pytest.raises(ValueError, match=r"amp is in microvolts but the model.* in V;"):
        check_stream_units("V", ["microvolts"], unit_mismatch="refuse", stream="amp")
    assert check_stream_units("V", ["V"], unit_mismatch="refuse") is None
    with pytest.raises(ValueError, match="'unit_mismatch' must be 'rescale' or 'refuse', got"):
        check_stream_units("V", ["V"], unit_mismatch="ignore")
    caplog.clear()
    # Unknown on either side: a warning, and the samples are used as they come (even
    # in refuse mode: nothing is known to differ).
    assert check_stream_units("V", ["", "microvolts"], unit_mismatch="refuse") is None
    assert check_stream_units("V", None) is None
    assert check_stream_units("unknown", ["microvolts"], unit_mismatch="refuse") is None
    assert check_stream_units("V", ["a.u."]) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 4
    assert "['']" in warnings[0] and "no units" in warnings[1]
    assert "'unknown'" in warnings[2] and "['a.u.']" in warnings[3]


# ---------------------------------------------------------------------- in-memory loop
def _fake_loop(fakes, model, data, ts, *, units=None, unit_mismatch="rescale", hop=0.1):
    names = list(model.preprocessor.ch_names)
    source = fakes.Source(data, ts, names, SFREQ)
    if units is not None:
        source.ch_units = list(units)
    clock = fakes.Clock(float(ts[0]))
    loop = OnlineLoop(
        model, source, sink=fakes.Sink(), clock=clock, hop=hop, unit_mismatch=unit_mismatch
    )
    return loop, source, clock


def _drive(loop, source, clock, *, chunk=5, until=None):
    until = len(source.data) if until is None else until
    while source.sent < until:
        source.send(min(chunk, until - source.sent))
        clock.t = source.timestamps[source.sent - 1] + 0.001
        loop.step_once()


def _model_in(make_model, unit):
    model = copy.copy(make_model())
    model.metadata = {**model.metadata, "unit": unit}
    return model


def test_a_microvolt_stream_gives_a_volt_model_the_decisions_of_volts(make_model, fakes, caplog):
    model = _model_in(make_model, "V")
    n = model.n_times_raw
    rng = np.random.default_rng(1)
    volts = 1e-5 * rng.standard_normal((3 * n, len(model.preprocessor.ch_names)))  # 10 µV
    ts = 10.0 + np.arange(3 * n) / SFREQ
    caplog.set_level(logging.INFO, logger="sblr_rt.online")
    scores = {}
    for unit, data in (("volts", volts), ("microvolts", volts * 1e6), ("", volts)):
        loop, source, clock = _fake_loop(fakes, model, data, ts, units=[unit] * len(data[0]))
        loop.start(thread=False)
        _drive(loop, source, clock)
        scores[unit] = {d["window_stop_index"]: d["score"] for d in loop.pop_decisions()}
        loop.stop()
    assert len(scores["volts"]) > 10 and scores["microvolts"].keys() == scores["volts"].keys()
    for stop, score in scores["volts"].items():
        np.testing.assert_allclose(scores["microvolts"][stop], score, rtol=1e-9, atol=1e-12)
    assert "multiplied by 1e-06" in caplog.text
    assert any(r.levelno == logging.WARNING and "['']" in r.getMessage() for r in caplog.records)


def test_refuse_mode_refuses_at_start(make_model, fakes):
    model = _model_in(make_model, "uV")
    data = np.zeros((10, 6))
    loop, *_ = _fake_loop(
        fakes, model, data, np.arange(10.0), units=["V"] * 6, unit_mismatch="refuse"
    )
    with pytest.raises(ValueError, match=r"is in V but the model was calibrated in uV"):
        loop.start(thread=False)
    assert not loop.running
    with pytest.raises(ValueError, match="'unit_mismatch' must be 'rescale' or 'refuse', got"):
        _fake_loop(fakes, model, data, np.arange(10.0), unit_mismatch="warn")


# ------------------------------------------------------------------ refilling after a gap
def test_hops_while_the_window_refills_after_a_gap_are_refilling(make_model, fakes):
    model = make_model()
    n = model.n_times_raw
    ts = 50.0 + np.arange(4 * n) / SFREQ
    ts[n + 20 :] += 2.0  # a gap of 2 s before sample n + 20
    data = np.random.default_rng(2).standard_normal((4 * n, 6))
    loop, source, clock = _fake_loop(fakes, model, data, ts, hop=0.1)
    loop.start(thread=False)
    _drive(loop, source, clock, chunk=10, until=n + 20)
    assert loop.snapshot().dropped.total == 0
    source.send(45)  # after the gap, four and a half hops arrive at once
    clock.t = ts[source.sent - 1]
    loop.step_once()
    dropped = loop.snapshot().dropped
    # The three skipped hops and the one decided all straddle the gap: refilling.
    assert (dropped.refilling, dropped.behind, dropped.gap) == (4, 0, 0)
    _drive(loop, source, clock, chunk=10, until=2 * n + 30)
    refilling = loop.snapshot().dropped.refilling
    # Decided at n + 75, 85, ... (chunks of 10 from n + 65): refused until a stop of
    # 2 n + 20, a full window past the gap.
    assert refilling == 4 + len(range(n + 75, 2 * n + 20, 10))
    assert loop.pop_decisions()[-1]["window_stop_index"] >= 2 * n + 20
    source.send(45)  # past the refill, hops skipped in a burst are behind
    clock.t = ts[source.sent - 1]
    loop.step_once()
    dropped = loop.snapshot().dropped
    assert (dropped.refilling, dropped.behind) == (refilling, 3)  # 2 n + 35, 45, 55
    assert dropped.total == refilling + 3


# ------------------------------------------------------------------ stream state told
@pytest.mark.parametrize(
    ("status", "summary"),
    [
        ({}, "streaming"),
        ({"state": "stalled"}, "stalled"),
        ({"state": "lost", "connected": False}, "lost"),
        (
            {"rate_far_off": True, "rate_ok": False, "effective_sfreq": 83.0},
            "rate far off (83 Hz measured, 100 declared)",
        ),
    ],
)
def test_the_snapshot_and_the_run_status_line_tell_the_stream_state(
    make_model, fakes, status, summary
):
    model = make_model()
    n = model.n_times_raw
    loop, source, clock = _fake_loop(fakes, model, np.zeros((2 * n, 6)), np.arange(2 * n) / SFREQ)
    loop.start(thread=False)
    _drive(loop, source, clock, until=n + 10)
    source.extra_status = status
    clock.t += 1.0  # the loop reads the status every 0.1 s of clock
    _drive(loop, source, clock)
    snap = loop.snapshot()
    assert snap.stream.state == status.get("state", "streaming")
    assert snap.stream.rate_far_off is bool(status.get("rate_far_off"))
    assert snap.stream.rate_ok == status.get("rate_ok")
    assert snap.stream.summary == summary
    line = _status_line(snap)
    assert line.startswith(f"[{summary}]") and "connected" not in line
    assert "refilling 0" in line and "halted" in line


# --------------------------------------------------------------------------- real LSL
class _Sender:
    """Push ``data`` in chunks at 4x real time, with markers at sample indices."""

    def __init__(self, outlet, data, markers, marker_outlet):
        self.outlet, self.data, self.rate = outlet, data, 4 * SFREQ
        self.markers, self.marker_outlet = markers, marker_outlet
        self.t0 = pylsl.local_clock()
        self.n = 0

    def push_until(self, stop, chunk=7):
        while self.n < stop:
            k = min(chunk, stop - self.n)
            self.outlet.push_chunk(
                self.data[self.n : self.n + k], self.t0 + np.arange(self.n, self.n + k) / self.rate
            )
            for index, value in self.markers:
                if self.n <= index < self.n + k:
                    self.marker_outlet.push(value, self.t0 + index / self.rate)
            self.n += k
            time.sleep(max(0.0, self.t0 + self.n / self.rate - pylsl.local_clock()))


def _trial_scores_over_lsl(model, data, unit, source_id, onsets):
    names = list(model.preprocessor.ch_names)
    eeg = EEGOutlet(
        name="units-eeg",
        ch_names=names,
        sfreq=SFREQ,
        source_id=source_id,
        dtype="float64",
        unit=unit,
    )
    cues = MarkerOutlet(name="units-cues", source_id=f"{source_id}-cues")
    markers = [(i, model.classes[k % 2]) for k, i in enumerate(onsets)]
    loop = OnlineLoop.from_lsl(
        model,
        source_id=source_id,
        mode="trial",
        hop=0.0,
        marker_source_id=f"{source_id}-cues",
        outlet=False,
        timeout=DEADLINE,
    )
    try:
        loop.start()
        _Sender(eeg, data, markers, cues).push_until(len(data))
        trials = loop.wait_for_decisions(len(onsets), DEADLINE, trial=True)
    finally:
        loop.stop()
    del eeg, cues
    return {(d["cue"], d["window_stop_index"]): d["score"] for d in trials if d["trial"]}


@pytest.mark.lsl
def test_over_lsl_microvolts_to_a_volt_model_equal_volts(make_model, source_id, caplog):
    """The same data sent in volts and in microvolts: the same trial decisions."""
    model = _model_in(make_model, "V")
    n = model.n_times_raw
    rng = np.random.default_rng(3)
    volts = 1e-5 * rng.standard_normal((4 * n, len(model.preprocessor.ch_names)))  # 10 µV
    onsets = [n + 3, 2 * n + 17, 3 * n - 40]
    caplog.set_level(logging.INFO, logger="sblr_rt.online")
    in_volts = _trial_scores_over_lsl(model, volts, "volts", f"{source_id}-v", onsets)
    in_micro = _trial_scores_over_lsl(model, volts * 1e6, "microvolts", f"{source_id}-uv", onsets)
    assert len(in_volts) == len(onsets) and in_micro.keys() == in_volts.keys()
    for key, score in in_volts.items():
        np.testing.assert_allclose(in_micro[key], score, rtol=1e-9, atol=1e-12)
    # And they are the offline model's decisions on the volts.
    clf = OnlineClassifier(model)
    for (_, stop), score in in_micro.items():
        np.testing.assert_allclose(
            score, clf.decision_function(volts[stop - n : stop].T), rtol=1e-8
        )
    assert "is in microvolts, the model in V: samples are multiplied by 1e-06" in caplog.text


@pytest.mark.lsl
def test_over_lsl_refuse_mode_fails_with_both_units(make_model, source_id, tmp_path, capsys):
    model = _model_in(make_model, "V")
    path = tmp_path / "model.npz"
    save_model(model, path)
    names = list(model.preprocessor.ch_names)
    eeg = EEGOutlet(
        name="units-refuse", ch_names=names, sfreq=SFREQ, source_id=source_id, unit="microvolts"
    )
    argv = ["run", "--model", str(path), "--source-id", source_id, "--timeout", str(DEADLINE)]
    argv += ["--outlet-name", f"units-refuse-{source_id}-Pred"]
    assert main([*argv, "--unit-mismatch", "refuse", "--duration", "5"]) == 1
    err = capsys.readouterr().err
    assert "sblr-rt run: error:" in err
    assert "is in microvolts but the model was calibrated in V" in err
    loop = OnlineLoop.from_lsl(
        model, source_id=source_id, unit_mismatch="refuse", outlet=False, timeout=DEADLINE
    )
    with pytest.raises(ValueError, match="microvolts but the model was calibrated in V"):
        loop.start()
    loop.stop()
    del eeg


def test_a_halt_is_logged_once_while_its_measured_rate_moves(make_model, fakes, caplog):
    model = make_model()
    n = model.n_times_raw
    loop, source, clock = _fake_loop(fakes, model, np.zeros((4 * n, 6)), np.arange(4 * n) / SFREQ)
    loop.start(thread=False)
    caplog.set_level(logging.INFO, logger="sblr_rt.online")
    _drive(loop, source, clock, until=n)
    for k, rate in enumerate((79.0, 78.5, 78.0)):
        source.extra_status = {"rate_far_off": True, "effective_sfreq": rate}
        _drive(loop, source, clock, until=n + 50 * (k + 1))  # 0.5 s: the status is read
        assert f"({rate:g} Hz)" in loop.snapshot().halted  # the text follows the measure
    source.extra_status = {}
    _drive(loop, source, clock)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "79 Hz" in errors[0].getMessage()
    assert caplog.text.count("the rate is back to normal") == 1

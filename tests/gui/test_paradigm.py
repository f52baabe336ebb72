"""The cue paradigm: the trial sequence, its markers and their timing, against the config."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from sblr_rt.gui.schedule import (
    ParadigmConfig,
    TrialScheduler,
    build_schedule,
    load_paradigm_config,
)

pytestmark = pytest.mark.gui

CONFIG = ParadigmConfig(
    classes=("left", "right", "feet"),
    n_trials_per_class=6,
    fixation=1.0,
    cue=1.25,
    imagery=3.0,
    rest_min=1.5,
    rest_max=2.5,
    lead_in=2.0,
    max_repeat=2,
    seed=3,
)


def _check_sequence_and_timing(values, times, config, events):
    """Markers and their onsets relative to the first ("start") as the config says."""
    assert values[0] == "start" and values[-1] == "end"
    trials = values[1:-1]
    assert len(trials) == 4 * config.n_trials
    cues = trials[1::4]
    assert trials[0::4] == ["fixation"] * config.n_trials
    assert trials[2::4] == ["imagery"] * config.n_trials
    assert trials[3::4] == ["rest"] * config.n_trials
    assert Counter(cues) == dict.fromkeys(config.classes, config.n_trials_per_class)
    assert cues == [e.label for e in events if e.kind == "cue"]
    t = np.asarray(times) - times[0]
    onsets = np.array([e.time for e in events])
    return t, onsets


def test_schedule_is_balanced_randomised_and_timed_as_configured():
    events = build_schedule(CONFIG)
    values = [e.value for e in events]
    times = [e.time for e in events]
    t, _ = _check_sequence_and_timing(values, times, CONFIG, events)
    assert t[1] == CONFIG.lead_in
    for k in range(CONFIG.n_trials):
        fixation, cue, imagery, rest = events[1 + 4 * k : 5 + 4 * k]
        assert cue.time - fixation.time == pytest.approx(CONFIG.fixation)
        assert imagery.time - cue.time == pytest.approx(CONFIG.cue)
        assert rest.time - imagery.time == pytest.approx(CONFIG.imagery)
        assert CONFIG.rest_min <= rest.duration <= CONFIG.rest_max
        assert events[5 + 4 * k].time - rest.time == pytest.approx(rest.duration)
    cues = [e.label for e in events if e.kind == "cue"]
    runs = max(len(list(g)) for _, g in itertools.groupby(cues))
    assert runs <= CONFIG.max_repeat
    # jittered, seeded: another seed gives another order and other rests
    other = build_schedule(CONFIG.replace(seed=4))
    assert [e.label for e in other] != [e.label for e in events]
    assert build_schedule(CONFIG) == events


def test_scheduler_hands_out_events_on_a_fake_clock():
    events = build_schedule(CONFIG)
    sched = TrialScheduler(events)
    with pytest.raises(RuntimeError, match=r"TrialScheduler\.start"):
        sched.due(0.0)
    sched.start(1000.0)
    got = []
    now = 1000.0
    while not sched.finished:
        wait = sched.time_to_next(now)
        now += wait
        due = sched.due(now)
        assert due, "time_to_next() pointed at a time with nothing due"
        got += [(e, now) for e in due]
    assert [e for e, _ in got] == events
    np.testing.assert_allclose([t - 1000.0 for _, t in got], [e.time for e in events])


def test_config_is_checked_and_loads_from_toml(tmp_path):
    with pytest.raises(ValueError, match="phase markers"):
        ParadigmConfig(classes=("left", "rest"))
    with pytest.raises(ValueError, match="'rest_max' must be >= 'rest_min'"):
        ParadigmConfig(rest_min=3.0, rest_max=2.0)
    path = tmp_path / "paradigm.toml"
    path.write_text('[paradigm]\nclasses = ["left", "right"]\nimagery = 4.0\nseed = 1\n')
    config = load_paradigm_config(path)
    assert config.imagery == 4.0 and config.classes == ("left", "right")
    path.write_text("[paradigm]\nimagry = 4.0\n")
    with pytest.raises(ValueError, match="unknown paradigm keys"):
        load_paradigm_config(path)


def test_window_shows_each_phase_and_logs_flip_times(qtbot):
    from sblr_rt.gui.paradigm import ParadigmWindow

    config = ParadigmConfig(
        classes=("left", "right"),
        n_trials_per_class=2,
        fixation=0.03,
        cue=0.03,
        imagery=0.03,
        rest_min=0.02,
        rest_max=0.04,
        lead_in=0.02,
        seed=0,
    )
    window = ParadigmWindow(config, publish=False)
    qtbot.addWidget(window)
    window.show()
    phases = []
    window.marker_sent.connect(lambda value, t: phases.append(window.phase.kind))
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.start()
    values = [v for v, _ in window.log]
    times = [t for _, t in window.log]
    _, onsets = _check_sequence_and_timing(values, times, config, window.events)
    assert phases == [e.kind for e in window.events]
    # a flip never precedes its scheduled time
    assert np.all(np.asarray(times) - window.t0 >= onsets)


@pytest.mark.lsl
def test_markers_on_lsl_carry_the_flip_times(qtbot, source_id):
    from sblr_rt.gui.paradigm import ParadigmWindow

    from sblr_rt.stream import MarkerSource

    config = ParadigmConfig(
        classes=("left", "right"),
        n_trials_per_class=2,
        fixation=0.05,
        cue=0.05,
        imagery=0.05,
        rest_min=0.03,
        rest_max=0.06,
        lead_in=1.0,
        seed=1,
    )
    window = ParadigmWindow(config, marker_name="SBLR-Paradigm-test", marker_source_id=source_id)
    qtbot.addWidget(window)
    window.show()
    # open the outlet first so the inlet is connected before the run starts
    window.start(config.replace(n_trials_per_class=1))
    with qtbot.waitSignal(window.finished, timeout=10_000):
        pass
    markers = MarkerSource(name="SBLR-Paradigm-test", source_id=source_id, timeout=5.0)
    markers.start()
    try:
        with qtbot.waitSignal(window.finished, timeout=10_000):
            window.start(config)
        received = []
        qtbot.waitUntil(
            lambda: received.extend(markers.pop()) or (received and received[-1][1] == "end"),
            timeout=5_000,
        )
    finally:
        markers.stop()
        window.close()
    assert [v for _, v in received] == [v for v, _ in window.log]
    np.testing.assert_allclose([t for t, _ in received], [t for _, t in window.log], atol=1e-3)
    _, onsets = _check_sequence_and_timing(
        [v for _, v in received], [t for t, _ in received], config, window.events
    )
    # each marker's timestamp is its flip, never before the time the configuration sets
    assert np.all(np.array([t for t, _ in received]) - window.t0 >= onsets - 1e-3)

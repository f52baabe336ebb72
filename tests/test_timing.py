"""One set of defaults: the trial timing and the window agree across the tree."""

from __future__ import annotations

import argparse

from sblr_rt.timing import DEFAULT_TIMING, DEFAULT_WINDOW


def test_simulator_and_cue_paradigm_share_the_trial_timing():
    from sblr_rt.gui.schedule import ParadigmConfig

    from sblr_rt.playback.simulator import Simulator

    paradigm = ParadigmConfig()
    sim = Simulator(sfreq=100.0, n_channels=8)
    assert sim.trial_duration == paradigm.cue + paradigm.imagery == DEFAULT_TIMING.task
    assert sim.iti == (
        paradigm.rest_min + paradigm.fixation,
        paradigm.rest_max + paradigm.fixation,
    )


def test_simulate_command_defaults_are_the_simulators():
    from sblr_rt.cli import simulate

    parser = argparse.ArgumentParser()
    simulate.add_parser(parser.add_subparsers())
    args = parser.parse_args(["simulate"])
    assert args.trial_duration == DEFAULT_TIMING.task
    assert tuple(args.iti) == DEFAULT_TIMING.gap


def test_calibration_window_is_the_default_and_inside_the_task():
    from sblr_rt.calibration.config import CalibrationConfig
    from sblr_rt.calibration.core import default_window

    class Continuous:
        epoch_length = None

    assert default_window(CalibrationConfig(), Continuous()) == DEFAULT_WINDOW
    assert 0 <= DEFAULT_WINDOW[0] < DEFAULT_WINDOW[1] <= DEFAULT_TIMING.task

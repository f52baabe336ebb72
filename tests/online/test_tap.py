"""A kept trial places its cue by samples, as the loop placed its window."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online.tap import LabelledTrial


def _trial(timestamps, t_cue, sfreq=160.0):
    return LabelledTrial(
        data=np.zeros((2, len(timestamps))),
        timestamps=np.asarray(timestamps),
        ch_names=["C3", "C4"],
        sfreq=sfreq,
        t_cue=t_cue,
        cue="T1",
        label="left",
        predicted="left",
        model_version=0,
    )


@pytest.mark.parametrize("speed", [1.0, 10.0])
def test_the_cue_offset_counts_samples_whatever_the_clock_speed(speed):
    # a replay at 10x stamps 160 Hz samples 1/1600 s apart: the cue is still sample 40
    ts = 100.0 + np.arange(400) / (160.0 * speed)
    assert _trial(ts, ts[40] + 0.3 / (160.0 * speed)).cue_offset == 40 / 160.0
    assert _trial(ts, ts[40] - 0.45 / (160.0 * speed)).cue_offset == 40 / 160.0
    assert _trial(ts, ts[40] + 0.7 / (160.0 * speed)).cue_offset == 41 / 160.0
    assert _trial(ts, ts[0] - 1.0).cue_offset == 0.0
    assert _trial(ts, ts[-1] + 1.0).cue_offset == 399 / 160.0

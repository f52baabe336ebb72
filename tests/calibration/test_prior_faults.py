"""The prior's surfaces against a clumsy or hostile world (issue 44, third red-team round).

Each test names the cause it covers; every refusal is one line saying what was expected and
what was got.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sblr_rt.calibration import build_prior
from sblr_rt.calibration.prior import PriorSettings, first_trials, person_of

from tests.calibration.test_prior import CLASSES, KW, _run


def _named(rec, name: str):
    return dataclasses.replace(rec, source=name)


# -- cause 4: the person comes from the file name, never a folder above ---------------------


def test_a_sub_folder_above_the_file_is_not_a_person():
    assert person_of("sub-study/eeg/sub-02_task-mi_eeg.edf") == "sub-02"
    assert person_of("sub-labA/S003R04.edf") == "S003"
    with pytest.raises(ValueError, match="person of a recording must be in its file name"):
        person_of("sub-labA/run1.fif")


def test_recordings_under_one_sub_folder_are_their_files_people():
    runs = [
        _named(_run(1, 1), "data/sub-study/S001R04.edf"),
        _named(_run(2, 1), "data/sub-study/S002R04.edf"),
    ]
    prior = build_prior(runs, lopo=False, **KW)
    assert prior.metadata["prior"]["people"] == ["S001", "S002"]


# -- cause 5: duplicate channel labels ------------------------------------------------------


def test_a_prior_refuses_a_recording_with_one_label_twice():
    twice = _run(2, 1)
    names = list(twice.ch_names)
    names[names.index("C4")] = "C3"
    twice = dataclasses.replace(twice, ch_names=names)
    with pytest.raises(ValueError, match=r"its own label, got \['C3'\] twice in synthetic/S002"):
        build_prior([_run(1, 1), twice], **KW)


# -- cause 10: arguments of the Python API --------------------------------------------------


def test_people_as_one_string_is_refused_not_split_into_characters():
    with pytest.raises(TypeError, match="'people' must be a list of channel names, got a str"):
        build_prior([_run(1, 1), _run(2, 1)], people="AB", **KW)
    with pytest.raises(ValueError, match=r"'people' must name each person .* got ''"):
        build_prior([_run(1, 1), _run(2, 1)], people=["A", ""], **KW)


def test_too_few_picks_or_too_high_a_rank_is_refused_before_the_fit():
    runs = [_run(1, 1), _run(2, 1)]
    with pytest.raises(ValueError, match=r"'picks' must name at least 8 channels .* got 1"):
        build_prior(runs, picks=["C3"], **KW)
    with pytest.raises(TypeError, match="'picks' must be a list of channel names"):
        build_prior(runs, picks="C3", **KW)
    with pytest.raises(ValueError, match="'rank' must be an integer from 1 to 4096"):
        PriorSettings(rank=10**9)
    with pytest.raises(ValueError, match="'rank' must be at most the features' smaller side"):
        build_prior(runs, settings=PriorSettings(rank=100), lopo=False, **KW)


def test_numpy_integers_are_integers():
    assert PriorSettings(rank=np.int64(3)).rank == 3
    assert isinstance(PriorSettings(rank=np.int64(3)).rank, int)
    runs = [_run(9, 1, n_trials=6), _run(9, 2, n_trials=6)]
    assert len(first_trials(runs, CLASSES, np.int64(6))) == 1
    with pytest.raises(TypeError, match=r"'max_trials' must be an integer, got 6\.0"):
        first_trials(runs, CLASSES, 6.0)


def test_prior_settings_refuse_wrong_types_and_unknown_fields():
    with pytest.raises(TypeError, match="'sensorimotor' must be True or False, got 1"):
        PriorSettings(sensorimotor=1)
    with pytest.raises(ValueError, match="'l2' must be a number from 0 to 1e4, got 1e"):
        PriorSettings(l2=1e308)
    with pytest.raises(ValueError, match=r"must name only \[.*\], got \['speed'\]"):
        PriorSettings.from_dict({"rank": 2, "speed": 3})
    assert PriorSettings.from_dict({"rank": 2}).rank == 2


def test_member_weights_of_any_finite_size_are_normalised():
    from sblr_rt.bci_model import EnsembleModel
    from tests.models import fit_model

    a, b = fit_model(seed=0)[0], fit_model(seed=1)[0]
    both = EnsembleModel([a, b], weights=[1e308, 1e308])
    assert both.member_weights.tolist() == [0.5, 0.5]

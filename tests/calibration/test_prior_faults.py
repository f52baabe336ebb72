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
    with pytest.raises(TypeError, match=r"'people' must be a list of person .* got str 'AB'"):
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


def test_the_other_arguments_are_checked_before_any_work():
    runs = [_run(1, 1), _run(2, 1)]
    with pytest.raises(ValueError, match="'warmup' must be > 0, got 0"):
        build_prior(runs, warmup=0, **KW)
    with pytest.raises(TypeError, match="'lopo' must be True or False, got 'no'"):
        build_prior(runs, lopo="no", **KW)
    with pytest.raises(TypeError, match="'settings' must be a PriorSettings, got dict"):
        build_prior(runs, settings={"rank": 2}, **KW)


def test_numpy_integers_are_integers():
    assert PriorSettings(rank=np.int64(3)).rank == 3
    assert isinstance(PriorSettings(rank=np.int64(3)).rank, int)
    runs = [_run(9, 1, n_trials=6), _run(9, 2, n_trials=6)]
    assert len(first_trials(runs, CLASSES, np.int64(6))) == 1
    with pytest.raises(TypeError, match=r"'max_trials' must be an integer, got 6\.0"):
        first_trials(runs, CLASSES, 6.0)


def test_every_prior_setting_has_a_rule():
    from sblr_rt.calibration.prior.build import SETTINGS_CONSTRAINTS

    fields = {f.name for f in dataclasses.fields(PriorSettings)}
    assert fields - set(SETTINGS_CONSTRAINTS) == set(), "add a rule to SETTINGS_CONSTRAINTS"


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


@pytest.fixture(scope="module")
def small_prior():
    return build_prior([_run(p, 1) for p in (1, 2, 3)], lopo=False, **KW)


# -- cause 2: refining a prior compares units --------------------------------------------------


def test_a_recording_in_microvolts_refines_a_prior_in_volts_as_in_volts(small_prior):
    from sblr_rt.calibration import calibrate

    volts = _run(9, 1)
    micro = dataclasses.replace(volts, data=volts.data * 1e6, unit="uV")
    # fewer trials than auto_min_trials: the adapted prior alone, the first trials' model
    kw = {"prior": small_prior, "max_trials": 8, "n_jobs": 1, "classes": CLASSES}
    a, b = calibrate([volts], **kw), calibrate([micro], **kw)
    assert a.metadata["unit"] == b.metadata["unit"] == "V"
    idx = [volts.ch_names.index(c) for c in a.ch_names]
    epochs = np.stack([volts.data[idx, s : s + a.n_times_raw] for s in (0, 500, 1000)])
    np.testing.assert_allclose(b.decision_function(epochs), a.decision_function(epochs))


def test_a_recording_at_another_rate_than_the_priors_is_refused(small_prior):
    from sblr_rt.calibration import calibrate

    kw = {"prior": small_prior, "max_trials": 10, "n_jobs": 1, "classes": CLASSES}
    with pytest.raises(ValueError, match="rate of the prior: expected 100 Hz, got 200 Hz"):
        calibrate([_run(9, 1, sfreq=200.0)], **kw)


# -- cause 1 (calibration's side): a prior's settings are checked before any work ------------


def test_a_prior_with_unknown_or_wrong_settings_is_refused_before_calibrating(small_prior):
    import copy

    from sblr_rt.calibration import calibrate
    from sblr_rt.calibration.prior import check_prior

    kw = {"max_trials": 10, "n_jobs": 1, "classes": CLASSES}
    for settings, match in [
        ({"rank": 8, "speed": 2}, r"settings that are not valid: .* got \['speed'\]"),
        ({"auto_min_trials": "20"}, "'auto_min_trials' must be an integer, got '20'"),
        ({"rank": 2.5}, "'rank' must be an integer, got 2.5"),
    ]:
        bad = copy.deepcopy(small_prior)
        bad.metadata["prior"]["settings"] = settings
        with pytest.raises(ValueError, match=match):
            calibrate([_run(9, 1)], prior=bad, **kw)
    own = calibrate([_run(9, 1)], n_jobs=1, features="covariance", **KW)
    with pytest.raises(ValueError, match="'prior' must be a prior built by build_prior"):
        check_prior(own)


# -- cause 3: solver settings are bounded, from a model file as from a configuration --------


def test_the_solvers_iterations_are_bounded_in_a_configuration_too():
    from sblr_rt.calibration.config import load_config

    with pytest.raises(ValueError, match="'max_iter' must be an integer from 1 to 2000"):
        load_config(None, max_iter=10**9)
    with pytest.raises(ValueError, match="'auto_max_iter' must be an integer from 1 to 2000"):
        load_config(None, auto_max_iter=10**9)
    assert load_config(None, max_iter=np.int64(2000)).fit_params()["max_iter"] == 2000


# -- fourth round (session 7): classes, and the arguments of the person's side --------------


def test_a_calibration_whose_classes_are_not_the_priors_is_refused_before_any_work(
    small_prior,
):
    from sblr_rt.calibration import calibrate

    kw = {"prior": small_prior, "max_trials": 8, "n_jobs": 1}
    # other labels for the same markers were a KeyError deep in the prior's evidence
    with pytest.raises(
        ValueError,
        match=r"must be those of 'prior', \['left', 'right'\]: "
        r"got \['a', 'b'\]; map the markers to them, as in --classes T1=left",
    ):
        calibrate([_run(9, 1)], classes={"T1": "a", "T2": "b"}, **kw)  # fmt: skip
    with pytest.raises(ValueError, match=r"got \['rest', 'left', 'right'\]"):
        calibrate([_run(9, 1)], classes={"T0": "rest", **CLASSES}, **kw)
    with pytest.raises(TypeError, match=r"'prior' must be a prior .* or the path of its file"):
        calibrate([_run(9, 1)], classes=CLASSES, prior=5, max_trials=8)


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"trial_weight": -1}, ValueError, "'trial_weight' must be a number > 0"),
        ({"trial_weight": float("nan")}, ValueError, "'trial_weight' must be a finite number"),
        ({"trial_weight": 1e300}, ValueError, "'trial_weight' must be a number > 0 and <= 1e6"),
        ({"trial_weight": "x"}, TypeError, "'trial_weight' must be a number"),
        ({"min_per_class": 0}, ValueError, "'min_per_class' must be a positive integer"),
    ],
)
def test_adapting_a_prior_checks_its_arguments_by_the_settings_rules(small_prior, kw, error,
                                                                     match):  # fmt: skip
    from sblr_rt.calibration.prior import adapt_prior

    with pytest.raises(error, match=match):
        adapt_prior(small_prior, [_run(9, 1)], **kw)


def test_the_weights_rule_refuses_a_count_that_is_not_one():
    from sblr_rt.calibration.member_evidence import MemberEvidence, weigh_prior

    ev = MemberEvidence(10, 7)
    assert weigh_prior(20, 20.0, ev, ev).weight == 0.5
    for n, error in [(-5, ValueError), (float("nan"), TypeError), ("3", TypeError)]:
        with pytest.raises(error, match="'n_trials' must be an integer"):
            weigh_prior(n, 20.0, ev, ev)
    with pytest.raises(ValueError, match="'half_trials' must be a number > 0"):
        weigh_prior(20, 0, ev, ev)

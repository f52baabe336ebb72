"""A prior across people: built, saved, refined by a person's trials, refused when wrong.

The people are synthetic: on every person's sensorimotor strip a 10 Hz rhythm weakens over
the hemisphere opposite the imagined hand (C4 for the left hand, C3 for the right), under
person-specific channel gains and run-specific drifts; the eye and occipital channels hold
noise only. A prior of other people must then decide a new person's run from its first
trial, which a model whose factors collapsed to zero cannot.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sblr_rt.calibration import build_prior, calibrate
from sblr_rt.calibration.prior import PriorSettings, adapt_prior, first_trials, person_of
from scipy.signal import butter, lfilter

from sblr_rt.io import load_model, save_model
from sblr_rt.io.recording import Recording

CHANNELS = ["Fp1", "FC3", "FCz", "FC4", "C3", "C1", "Cz", "C2", "C4", "CP3", "CPz", "CP4", "O1"]
CLASSES = {"T1": "left", "T2": "right"}
SFREQ = 100.0
KW = {"classes": CLASSES, "tmin": 0.5, "tmax": 2.5}


def _run(person: int, run: int, n_trials: int = 20, *, sfreq=SFREQ, unit="V") -> Recording:
    rng = np.random.default_rng(100 * person + run)
    gains = np.random.default_rng(person).uniform(0.6, 1.6, len(CHANNELS))
    gains *= rng.uniform(0.9, 1.1, len(CHANNELS))  # this run's electrode contact
    n = int((n_trials * 4 + 3) * sfreq)
    data = rng.standard_normal((len(CHANNELS), n))
    mu = np.ones((len(CHANNELS), n))
    times, values = [], []
    for k in range(n_trials):
        onset = int((2 + 4 * k) * sfreq)
        side = int(rng.integers(2)) if k >= 2 else k  # both classes among the first two
        weak = CHANNELS.index("C4" if side == 0 else "C3")
        mu[weak, onset : onset + int(3 * sfreq)] = 0.25
        times.append(onset / sfreq)
        values.append("T1" if side == 0 else "T2")
    # an independent 8-12 Hz rhythm on every channel of the strip
    b, a = butter(4, [8.0, 12.0], btype="bandpass", fs=sfreq)
    rhythm = lfilter(b, a, rng.standard_normal((len(CHANNELS), n)), axis=1)
    rhythm /= rhythm.std(axis=1, keepdims=True)
    for c, name in enumerate(CHANNELS):
        if name.startswith(("C", "FC", "CP")):
            data[c] += 3.0 * mu[c] * rhythm[c]
    return Recording(
        data=1e-5 * gains[:, None] * data,
        sfreq=sfreq,
        ch_names=CHANNELS,
        marker_times=times,
        marker_values=values,
        unit=unit,
        source=f"synthetic/S{person:03d}R{run:02d}.edf",
    )


@pytest.fixture(scope="module")
def prior():
    runs = [_run(p, r) for p in (1, 2, 3) for r in (1, 2)]
    return build_prior(runs, **KW)


@pytest.fixture(scope="module")
def own_model():
    """A model of person 9's first run alone (no prior), calibrated once for the module."""
    return calibrate(_run(9, 1), n_jobs=1, features="covariance", **KW)


def _accuracy(model, rec) -> float:
    order = [rec.ch_names.index(c) for c in model.ch_names]
    start = round(model.tmin * model.sfreq) - model.n_pad
    epochs, labels = [], []
    for t, v in zip(rec.marker_times, rec.marker_values, strict=True):
        lo = round(t * rec.sfreq) + start
        if lo >= 0 and lo + model.n_times_raw <= rec.n_samples:
            epochs.append(rec.data[order, lo : lo + model.n_times_raw])
            labels.append(CLASSES[v])
    return float(np.mean(model.predict_run(np.stack(epochs)) == np.array(labels)))


def test_a_prior_records_its_people_runs_and_channels_and_scores_each_left_out(prior):
    info = prior.metadata["prior"]
    assert info["kind"] == "prior"
    assert info["people"] == ["S001", "S002", "S003"]
    assert [r["source"] for r in info["runs"]][:2] == ["S001R01.edf", "S001R02.edf"]
    # the sensorimotor strip only: no eye or occipital channel
    assert info["channels"] == [c for c in CHANNELS if c not in ("Fp1", "O1")]
    assert prior.preprocessor.picks == info["channels"]
    lopo = info["lopo"]["per_person"]
    assert set(lopo) == {"S001", "S002", "S003"}
    assert min(lopo.values()) >= 0.75, lopo
    assert prior.pool is not None and prior.pool.n_groups == 3
    assert prior.pool.n_epochs == 6 * 20
    assert np.any(prior.estimator.spatial_) and np.any(prior.estimator.temporal_)
    assert "prior pool: 120 run-centred epochs of 3 people" in prior.summary()


def test_a_prior_decides_a_new_person_from_the_first_trial(prior, tmp_path):
    new = _run(9, 1)
    assert _accuracy(prior, new) >= 0.7
    again = load_model(save_model(prior, tmp_path / "prior.sblr.npz"))
    np.testing.assert_array_equal(again.pool.Z, prior.pool.Z)
    np.testing.assert_array_equal(again.pool.groups, prior.pool.groups)
    assert again.metadata["prior"]["people"] == ["S001", "S002", "S003"]
    assert _accuracy(again, new) == _accuracy(prior, new)


def test_a_persons_trials_refine_the_prior_and_the_prior_share_falls(prior):
    person = _run(9, 1)
    ten = adapt_prior(prior, first_trials([person], CLASSES, 10))
    twenty = adapt_prior(prior, [person])
    assert ten.metadata["prior"]["n_trials"] == 10
    assert 0 < twenty.metadata["prior"]["share"] < ten.metadata["prior"]["share"] < 1
    assert not np.allclose(ten.estimator.spatial_, prior.estimator.spatial_)
    assert ten.pool is prior.pool or np.array_equal(ten.pool.Z, prior.pool.Z)
    assert _accuracy(twenty, _run(9, 2)) >= 0.7


def test_calibrate_with_a_prior_keeps_the_prior_for_few_trials_and_weighs_it_for_many(
    prior, tmp_path
):
    runs = [_run(9, 1), _run(9, 2)]
    few = calibrate(runs, prior=prior, max_trials=8, n_jobs=1, classes=CLASSES)
    assert few.pool is not None and not few.is_ensemble
    assert few.metadata["prior"]["weight"] == 1.0
    assert few.metadata["prior"]["n_trials"] == 8
    assert (few.tmin, few.tmax) == (prior.tmin, prior.tmax)  # the prior's window
    many = calibrate(runs, prior=prior, n_jobs=1, classes=CLASSES, features="covariance")
    info = many.metadata["prior"]
    assert set(info["cv_log_loss"]) == {"0", "0.25", "0.5", "0.75", "1"}
    assert info["weight"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert info["cv_log_loss"][f"{info['weight']:g}"] == min(info["cv_log_loss"].values())
    if many.is_ensemble:
        assert many.member_weights[-1] == pytest.approx(info["weight"])
        assert many.members[-1].pool is not None
    again = load_model(save_model(many, tmp_path / "many.sblr.npz"))
    np.testing.assert_allclose(again.member_weights, many.member_weights)
    assert _accuracy(again, _run(9, 3)) == _accuracy(many, _run(9, 3)) >= 0.7


def test_max_trials_takes_the_first_cues_in_time_order():
    runs = [_run(9, 1, n_trials=6), _run(9, 2, n_trials=6)]
    kept = first_trials(runs, CLASSES, 8)
    assert [len(r.marker_values) for r in kept] == [6, 2]
    assert kept[1].marker_values == runs[1].marker_values[:2]
    assert first_trials(runs, CLASSES, 3)[0].marker_times.tolist() == [2.0, 6.0, 10.0]
    with pytest.raises(ValueError, match="'max_trials' must be a positive integer"):
        first_trials(runs, CLASSES, 0)


def test_a_prior_refuses_one_person_other_rates_units_and_missing_channels(prior, own_model):
    with pytest.raises(ValueError, match="at least two people, got 1"):
        build_prior([_run(1, 1), _run(1, 2)], **KW)
    with pytest.raises(ValueError, match="one sampling rate: expected 100 Hz"):
        build_prior([_run(1, 1), _run(2, 1, sfreq=200.0)], **KW)
    with pytest.raises(ValueError, match="one unit: expected 'V'"):
        build_prior([_run(1, 1), _run(2, 1, unit="uV")], **KW)
    few = dataclasses.replace(_run(9, 1), ch_names=[*CHANNELS[:-3], "X1", "X2", "X3"])
    with pytest.raises(ValueError, match=r"lacks channels of the prior: \['CPz', 'CP4'\]"):
        adapt_prior(prior, [few])
    with pytest.raises(ValueError, match="a prior"):
        adapt_prior(own_model, [_run(9, 2)])
    with pytest.raises(ValueError, match="'rank' must be a positive integer"):
        PriorSettings(rank=0)


def test_the_person_is_read_from_the_file_name():
    assert person_of("x/S012R04.edf") == "S012"
    assert person_of("root/sub-07/eeg/sub-07_task-mi_run-1_eeg.vhdr") == "sub-07"
    assert person_of("lab/alice/run1.fif") == "alice"


def test_adaptation_refits_a_prior_with_the_session_trials_and_keeps_its_pool(prior, tmp_path):
    from sblr_rt.calibration.refit import labelled_recording, refit_model, version_path

    trials = [labelled_recording(_run(9, 1, n_trials=12), CLASSES)]
    warm = refit_model(prior, trials, version=1, folder=tmp_path)
    assert warm.pool is not None and warm.metadata["prior"]["n_trials"] == 12
    assert warm.metadata["adaptation"]["version"] == 1
    assert 0 < warm.metadata["prior"]["share"] < 1
    assert not np.allclose(warm.estimator.spatial_, prior.estimator.spatial_)
    assert load_model(version_path(tmp_path, 1)).pool is not None
    # a re-selection keeps the prior: few trials, the adapted prior alone
    again = refit_model(warm, trials, version=2, reselect=True)
    assert again.pool is not None and again.metadata["prior"]["weight"] == 1.0
    assert _accuracy(again, _run(9, 2)) >= 0.7


def test_the_prior_share_of_a_prior_an_adapted_prior_and_an_ensemble(prior, own_model):
    from sblr_rt.bci_model import EnsembleModel

    assert prior.prior_share == 1.0
    adapted = adapt_prior(prior, [_run(9, 1)])
    assert adapted.prior_share == pytest.approx(adapted.pool.prior_share(20))
    own = own_model
    assert own.prior_share is None
    both = EnsembleModel([own, adapted], weights=[3, 1])
    assert both.prior_share == pytest.approx(0.25 * adapted.prior_share)


def test_a_prior_needs_only_its_own_channels_and_names_those_a_stream_lacks(prior):
    from sblr_rt.online import OnlineClassifier
    from sblr_rt.online._channels import match_stream

    strip = [c for c in CHANNELS if c not in ("Fp1", "O1")]
    assert prior.ch_names == strip  # not the eye and occipital channels of the runs
    clf = OnlineClassifier(prior)
    assert len(match_stream(clf, [*reversed(strip), "EOG"], SFREQ).pairs) == len(strip)
    with pytest.raises(ValueError, match=r"lacks 2 of the model's 11 channels: .*C3.*C4"):
        match_stream(clf, [c for c in strip if c not in ("C3", "C4")], SFREQ)


def test_with_too_few_trials_of_a_class_for_the_cv_the_adapted_prior_decides(prior):
    import copy

    early = copy.deepcopy(prior)  # the person's own model from 6 trials on
    early.metadata["prior"]["settings"]["auto_min_trials"] = 6
    # 8 cues hold fewer than 5 of a class: the person's 5-fold CV cannot run
    model = calibrate([_run(9, 1)], prior=early, max_trials=8, n_jobs=1, classes=CLASSES)
    assert model.pool is not None and model.metadata["prior"]["weight"] == 1.0
    assert "own model failed" in model.metadata["prior"]["reason"]

"""A prior across people: built, saved, refined by a person's trials, refused when wrong.

The people are synthetic: on every person's sensorimotor strip a 10 Hz rhythm weakens over
the hemisphere opposite the imagined hand (C4 for the left hand, C3 for the right), under
person-specific channel gains and run-specific drifts; the eye and occipital channels hold
noise only. A prior of other people must then decide a new person's run from its first
trial, which a model whose factors collapsed to zero cannot.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from sblr_rt.calibration import build_prior, calibrate
from sblr_rt.calibration.epochs import TooFewTrials
from sblr_rt.calibration.prior import PriorSettings, adapt_prior, first_trials, person_of
from scipy.signal import butter, lfilter

from sblr_rt.io import load_model, save_model
from sblr_rt.io.recording import Recording
from sblr_rt.model.link import ProbabilityCalibration

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
    assert prior.preprocessor.pick_names == info["channels"]
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


def test_a_priors_probabilities_are_calibrated_on_people_it_never_saw(prior, tmp_path):
    """Each person scored by the prior of the others, at every window end: one curve."""
    cal = prior.probability
    assert cal is not None and "of 3 people" in cal.how
    assert cal.ends[-1] == prior.tmax and cal.sharpness[0] == 0.0  # the cue: no evidence
    assert list(cal.sharpness) == sorted(cal.sharpness) and cal.trial > 0
    # the first trials of a new person decide with it; its adapted prior keeps it
    few = calibrate([_run(9, 1)], prior=prior, max_trials=8, n_jobs=1, classes=CLASSES)
    assert few.probability == cal
    again = load_model(save_model(prior, tmp_path / "prior.sblr.npz"))
    assert again.probability == cal
    # without the leave-one-person-out scores there is nothing to fit it on
    assert build_prior([_run(p, 1) for p in (1, 2)], **KW, lopo=False).probability is None


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
    info = few.metadata["prior"]
    assert info["weight"] == 1.0 and info["n_trials"] == 8
    # the prior never saw these 8 trials: its causal scores of them are its evidence
    assert info["evidence"]["prior"]["n_trials"] == 8
    assert info["evidence"]["prior"]["correct"] >= 6
    assert (few.tmin, few.tmax) == (prior.tmin, prior.tmax)  # the prior's window
    many = calibrate(runs, prior=prior, n_jobs=1, classes=CLASSES, features="covariance")
    info = many.metadata["prior"]
    assert info["n_trials"] == 40
    assert info["evidence"]["person"]["n_trials"] == 40  # every trial scored out of its block
    assert info["evidence"]["person"]["correct"] >= 30
    assert info["weight"] == pytest.approx(20 / (20 + 40))  # the schedule: both above chance
    assert many.member_weights[-1] == pytest.approx(info["weight"])
    assert many.members[-1].pool is not None
    # the combination's own probability calibration, the prior refitted without each block
    calibration = ProbabilityCalibration.from_dict(many.metadata["probability"])
    assert 0 < calibration.sharpness[-1] and "blocks" in calibration.how
    again = load_model(save_model(many, tmp_path / "many.sblr.npz"))
    np.testing.assert_allclose(again.member_weights, many.member_weights)
    assert again.metadata["prior"]["evidence"] == info["evidence"]
    assert _accuracy(again, _run(9, 3)) == _accuracy(many, _run(9, 3)) >= 0.7


def _swapped(rec: Recording) -> Recording:
    """The run with its two cues swapped: a person whose classes the prior reads reversed."""
    swap = {"T1": "T2", "T2": "T1"}
    return dataclasses.replace(rec, marker_values=[swap[v] for v in rec.marker_values])


def test_a_prior_worse_than_chance_on_the_person_loses_its_weight(prior):
    runs = [_swapped(_run(9, 1)), _swapped(_run(9, 2))]
    model = calibrate(runs, prior=prior, n_jobs=1, classes=CLASSES,
                      features="covariance")  # fmt: skip
    info = model.metadata["prior"]
    assert info["evidence"]["prior"]["correct"] <= 12  # of 40: worse than chance
    assert info["weight"] == 0.0 and "worse than chance" in info["reason"]
    assert model.member_weights[-1] == 0.0 and model.members[-1].pool is not None
    assert _accuracy(model, _swapped(_run(9, 3))) >= 0.7  # the person's own model decides


def test_the_prior_decides_alone_when_the_person_model_is_worse_than_chance():
    from sblr_rt.calibration.member_evidence import MemberEvidence, weigh_prior

    good, bad, coin = MemberEvidence(20, 16), MemberEvidence(20, 5), MemberEvidence(20, 9)
    assert weigh_prior(20, 20.0, good, bad).weight == 1.0
    assert weigh_prior(20, 20.0, bad, good).weight == 0.0
    assert weigh_prior(20, 20.0, good, coin).weight == 0.5  # 9 of 20 is no evidence of worse
    assert weigh_prior(60, 20.0, bad, bad).weight == 0.25  # both worse: the schedule
    assert weigh_prior(60, 20.0, good, None).weight == 1.0
    assert (MemberEvidence(3, 2, 1.5) + MemberEvidence(2, 1, 0.5)).log_loss == pytest.approx(0.4)
    with pytest.raises(ValueError, match="'correct' must be at most 'n_trials', got 3 of 2"):
        MemberEvidence(2, 3)
    # counts of the wrong kind or range are refused by the evidence's rules, naming the field
    with pytest.raises(TypeError, match=r"'n_trials' must be an integer, got 2\.0"):
        MemberEvidence(2.0, 1)
    with pytest.raises(TypeError, match="'correct' must be an integer, got True"):
        MemberEvidence(2, True)
    with pytest.raises(ValueError, match="'log_loss_sum' must be a finite number, got inf"):
        MemberEvidence(2, 1, float("inf"))
    with pytest.raises(ValueError, match="'n_classes' must be an integer >= 2, got 1"):
        MemberEvidence(2, 1, 0.5, 1)
    with pytest.raises(TypeError, match="evidence must be a mapping, got list"):
        MemberEvidence.from_dict([], 2)


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
    three = first_trials([_run(9, 1)], CLASSES, 3)  # both classes, neither three times
    with pytest.raises(TooFewTrials, match="need at least 3 per class") as short:
        adapt_prior(prior, three, min_per_class=3)  # a ValueError, and a session's wait
    assert isinstance(short.value, ValueError) and sum(short.value.counts.values()) == 3
    again = pickle.loads(pickle.dumps(short.value))  # raised in a refit process, read in ours
    assert (again.counts, again.min_per_class, str(again)) == (
        short.value.counts, 3, str(short.value))  # fmt: skip
    with pytest.raises(ValueError, match="'rank' must be an integer from 1 to 4096, got 0"):
        PriorSettings(rank=0)


def test_the_person_is_read_from_the_file_name():
    assert person_of("x/S012R04.edf") == "S012"
    assert person_of("root/sub-07/eeg/sub-07_task-mi_run-1_eeg.vhdr") == "sub-07"
    with pytest.raises(ValueError, match=r"must be in its file name .* got 'run1\.fif'"):
        person_of("lab/alice/run1.fif")  # a folder is never a person


def test_adaptation_refits_a_prior_with_the_session_trials_and_keeps_its_pool(prior, tmp_path):
    from sblr_rt.calibration.refit import labelled_recording, refit_model, version_path

    trials = [labelled_recording(_run(9, 1, n_trials=8), CLASSES)]
    warm = refit_model(prior, trials, version=1, folder=tmp_path)
    assert warm.pool is not None and warm.metadata["prior"]["n_trials"] == 8
    assert warm.metadata["adaptation"]["version"] == 1
    assert 0 < warm.metadata["prior"]["share"] < 1
    assert warm.metadata["prior"]["weight"] == 1.0  # fewer than auto_min_trials: prior alone
    assert not np.allclose(warm.estimator.spatial_, prior.estimator.spatial_)
    assert load_model(version_path(tmp_path, 1)).pool is not None
    assert _accuracy(warm, _run(9, 2)) >= 0.7


def _session(rec: Recording, n: int) -> list[Recording]:
    """The first ``n`` cues of ``rec`` as a session's single-trial recordings."""
    from sblr_rt.calibration.assembly import SESSION_TRIAL_SOURCE

    out = []
    for k in range(n):
        t = rec.marker_times[k]
        lo, hi = int((t - 1.5) * rec.sfreq), int((t + 3.5) * rec.sfreq)
        out.append(
            dataclasses.replace(
                rec,
                data=rec.data[:, lo:hi],
                marker_times=np.array([t - lo / rec.sfreq]),
                marker_values=[CLASSES[rec.marker_values[k]]],
                source=f"{SESSION_TRIAL_SOURCE} {k}",
            )
        )
    return out


def test_each_refit_tests_every_member_on_the_new_trials_before_training_on_them(prior):
    from sblr_rt.calibration.refit import refit_model

    trials = _session(_run(9, 1), 20)
    v1 = refit_model(prior, trials[:12], version=1)
    info = v1.metadata["prior"]
    # 12 trials, none seen by the prior before: all 12 are evidence; a person's model now
    assert info["evidence"]["prior"]["n_trials"] == 12 and info["evidence_seen"] == 12
    assert v1.is_ensemble and info["evidence"]["person"]["n_trials"] == 12
    # the person's model joined: the combination's probabilities calibrated, as calibrate
    # with a prior calibrates them
    assert v1.probability is not None and np.isfinite(v1.probability.trial)
    v2 = refit_model(v1, trials[:16], version=2)
    assert v2.probability == v1.probability  # a warm refit keeps them
    info2 = v2.metadata["prior"]
    # the 4 new trials were scored by v1's members, which never trained on them
    assert info2["evidence"]["prior"]["n_trials"] == 16
    assert info2["evidence"]["person"]["n_trials"] == 16
    assert info2["evidence_seen"] == 16 and info2["n_trials"] == 16
    assert info2["weight"] == pytest.approx(20 / 36)
    assert v2.member_weights[-1] == pytest.approx(20 / 36)
    assert np.isfinite(v2.member_weights).all() and np.isfinite(v2.predict_proba(
        np.stack([r.data[:, : v2.n_times_raw] for r in trials[16:]])
    )).all()  # fmt: skip
    assert _accuracy(v2, _run(9, 2)) >= 0.7


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


def test_a_model_calibrated_with_a_prior_reads_only_its_members_channels(prior, tmp_path):
    # The person's runs hold the eye and occipital channels too; the prior does not read
    # them, and neither does the model calibrated with it: a stream without them is taken.
    from sblr_rt.online import OnlineClassifier
    from sblr_rt.online._channels import match_stream

    runs = [_run(9, 1)]  # 8 trials: the adapted prior alone
    few = calibrate(runs, prior=prior, max_trials=8, n_jobs=1, classes=CLASSES)
    strip = [c for c in CHANNELS if c not in ("Fp1", "O1")]
    assert few.ch_names == few.picks == strip
    again = load_model(save_model(few, tmp_path / "few.sblr.npz"))
    assert again.ch_names == strip
    assert len(match_stream(OnlineClassifier(again), strip, SFREQ).pairs) == len(strip)
    assert _accuracy(again, _run(9, 2)) == _accuracy(few, _run(9, 2))


def test_with_too_few_trials_of_a_class_for_the_cv_the_adapted_prior_decides(prior):
    import copy

    early = copy.deepcopy(prior)  # the person's own model from 6 trials on
    early.metadata["prior"]["settings"]["auto_min_trials"] = 6
    # 8 cues hold fewer than 5 of a class: the person's 5-fold CV cannot run
    model = calibrate([_run(9, 1)], prior=early, max_trials=8, n_jobs=1, classes=CLASSES)
    assert model.pool is not None and model.metadata["prior"]["weight"] == 1.0
    assert "could not be calibrated" in model.metadata["prior"]["reason"]


def test_a_prior_based_model_is_described_by_its_weight_share_evidence_and_dates(prior, tmp_path):
    # The prior's description (metadata["prior"]) is printed key by key where present: the
    # weight and why, the pool's share, each member's evidence on held-out trials (the verdict's
    # figure), the leave-one-person-out accuracy per person; the dates are honest.
    prior = load_model(save_model(prior, tmp_path / "prior.sblr.npz"))  # dated
    model = calibrate([_run(9, 1)], prior=prior, max_trials=8, n_jobs=1, classes=CLASSES)
    assert model.metadata["prior"]["created"] == prior.metadata["created"]
    assert model.metadata["created"] >= prior.metadata["created"]
    text = model.summary()
    assert f"created {model.metadata['created']}" in text.splitlines()[0]
    # the prior never saw these 8 trials: its record on them is the verdict's figure
    assert "verdict: " in text and "accuracy of the prior member on the person's trials" in text
    assert "prior weight 1.00 of the decision (8 trials: no model of the person's own" in text
    assert "refined with 8 of the person's trials; " in text
    per_person = prior.metadata["prior"]["lopo"]["per_person"]
    assert "per person: " + ", ".join(f"{p} {a:.3f}" for p, a in per_person.items()) in text
    assert "mean over nothing" not in text and "rows x" not in text  # a power path's words
    model.metadata["prior"] |= {
        "weights": {"prior": 0.75, "own": 0.25},
        "evidence": {"prior": {"n_trials": 10, "correct": 9, "log_loss": 0.41},
                     "own": {"n_trials": 10, "correct": 6, "log_loss": 0.66}},
    }  # fmt: skip
    verdict = model.verdict()
    assert verdict.accuracy == 0.9 and verdict.n_trials == 10
    text = "\n".join(verdict.lines())
    assert "verdict: LIKELY USABLE: accuracy of the prior member on the person's trials" in text
    assert "member prior: weight 0.75; 9/10 right (0.900) on the person's trials it did" in text
    assert "member own: weight 0.25; 6/10 right (0.600) on the person's trials it did" in text
    model.metadata["prior"] = {"weight": 0.0, "reason": "the person's own model wins"}
    assert "prior weight 0: the prior was dropped, the person's own model decides (the " \
        "person's own model wins)" in model.summary()  # fmt: skip
    del model.metadata["prior"]
    assert model.verdict().lines()[0].startswith("verdict: ")  # the pool's own notes


def test_a_recording_with_other_labels_is_refused_naming_the_close_ones(prior):
    run = _run(9, 1)
    other = dataclasses.replace(run, ch_names=[f"EEG {c}-REF" for c in run.ch_names])
    with pytest.raises(ValueError, match=r"must hold the 11 channels the prior reads, got 11 "
                       r"missing from synthetic/S009R01.edf: FC3, .*; close labels: FC3 -> "
                       r"'EEG FC3-REF'; .*rename the channels"):  # fmt: skip
        calibrate([other], prior=prior, max_trials=10, n_jobs=1, classes=CLASSES)


def test_a_cap_with_other_labels_joins_the_prior_and_builds_one_with_the_renaming(prior):
    runs = [_run(9, 1), _run(8, 1), _run(7, 1)]
    cap = [dataclasses.replace(r, ch_names=[f"EEG {c}-REF" for c in r.ch_names]) for r in runs]
    rename = ",".join(f"EEG {c}-REF={c}" for c in CHANNELS)
    model = calibrate([cap[0]], prior=prior, max_trials=10, n_jobs=1, classes=CLASSES,
                      rename_channels=rename)  # fmt: skip
    assert set(prior.picks) <= set(model.picks) <= set(CHANNELS)  # the new labels
    assert model.metadata["config"]["rename_channels"]["EEG FC3-REF"] == "FC3"
    built = build_prior(cap, **KW, lopo=False, rename_channels=rename)
    assert built.picks == prior.picks
    # every recording must hold each old label (MNE's rule), the one that lacks it named
    with pytest.raises(ValueError, match=r"must name labels the recording synthetic/S007R01"
                       r".edf has, got 13 it lacks: 'EEG Fp1-REF', "):  # fmt: skip
        build_prior([*cap[:2], runs[2]], **KW, lopo=False, rename_channels=rename)

"""The model concept: one model and an ensemble answer the same interface, member by member."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.bci_model import BCIModel, EnsembleModel, SingleModel
from sblr_rt.io.model_file import load_model, read_header, save_model
from sblr_rt.online import OnlineClassifier
from tests.models import fit_ensemble, fit_model

CH = ["Fp1", "C3", "Cz", "C4", "Pz", "O1"]
SPECS = [
    {"features": "waveform", "metadata": {"name": "waveform/none", "train_accuracy": 0.9}},
    {"features": "bandpower", "seed": 1, "metadata": {"name": "bandpower/none"}},
    {"features": "covariance", "seed": 2, "informative": ["C3", "C4"]},
]  # fmt: skip


@pytest.fixture(scope="module")
def single():
    return fit_model(CH, informative=["C3", "C4"], classes=["left", "right"], signal="shift")


@pytest.fixture(scope="module")
def ensemble():
    return fit_ensemble(SPECS, weights=[0.5, 0.3, 0.2], metadata={"train_accuracy": 0.8},
                        ch_names=CH, informative=["C3", "C4"], classes=["left", "right"],
                        signal="shift")  # fmt: skip


def test_both_forms_are_the_concept_and_a_single_model_is_its_own_member(single, ensemble):
    model, _, _ = single
    ens, _, _ = ensemble
    assert isinstance(model, BCIModel) and isinstance(ens, BCIModel)
    assert model.members == (model,) and model.member_weights.tolist() == [1.0]
    assert not model.is_ensemble and ens.is_ensemble and ens.features == "ensemble"
    assert [m.features for m in ens.members] == ["waveform", "bandpower", "covariance"]
    np.testing.assert_allclose(ens.member_weights, [0.5, 0.3, 0.2])
    # no member leads: what only one model has, an ensemble reaches through its members
    assert not hasattr(ens, "preprocessor") and not hasattr(ens, "estimator")
    assert (ens.ch_names, ens.sfreq, ens.tmin, ens.tmax) == (CH, 100.0, 0.0, 1.0)
    assert ens.n_pad == max(m.n_pad for m in ens.members)


def test_scores_probabilities_and_labels_are_the_members_weighted(ensemble):
    ens, raw, y = ensemble
    per_member = ens.member_scores(raw)
    assert per_member.shape == (3, len(raw))
    expected = sum(
        w * m.decision_function(raw) for m, w in zip(ens.members, ens.member_weights, strict=True)
    )
    np.testing.assert_allclose(ens.decision_function(raw), expected, rtol=1e-12)
    proba = ens.predict_proba(raw)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    labels = ens.predict(raw)
    assert set(labels) <= {"left", "right"}
    assert np.mean(labels == np.asarray(ens.classes)[y]) > 0.7  # the class is learnt


def test_an_ensemble_weighing_one_member_is_that_member(ensemble):
    ens, raw, _ = ensemble
    a, b, _ = ens.members
    only_a = EnsembleModel([a, b], weights=[1.0, 0.0])
    np.testing.assert_allclose(only_a.decision_function(raw), a.decision_function(raw))
    np.testing.assert_array_equal(only_a.predict(raw), a.predict(raw))


def test_every_figure_is_given_for_the_whole_model_and_per_member(single, ensemble):
    model, _, _ = single
    ens, _, _ = ensemble
    assert ens.train_accuracy == 0.8 and ens.members[0].train_accuracy == 0.9
    assert len(ens.factors) == 3 and len(model.factors) == 1
    for m in ens.members:
        assert np.any(m.estimator.spatial_) and np.any(m.estimator.temporal_)
    text = ens.summary()
    for k, m in enumerate(ens.members):
        assert f"member {k}: {m.name}, weight {ens.member_weights[k]:.2f}" in text
    assert "training accuracy (optimistic): 0.800" in text and "training accuracy 0.900" in text
    assert "whole model weight by region" in text
    # the ensemble's region share is its members', weighted
    whole = ens.regions().channels
    parts = [m.regions().channels for m in ens.members]
    for ch in whole:
        expected = sum(w * p.get(ch, 0.0) for w, p in zip(ens.member_weights, parts, strict=True))
        assert whole[ch] == pytest.approx(expected)
    verdict = ens.verdict()
    assert [v.name for v in verdict.members] == [m.name for m in ens.members]
    assert "member" not in model.summary().split("weight by region")[0].split("classes")[1]


def test_both_forms_round_trip_through_the_model_file(tmp_path, single, ensemble):
    for model, raw, _ in (single, ensemble):
        path = save_model(model, tmp_path / f"{model.features}.sblr.npz")
        again = load_model(path)
        assert type(again) is type(model)
        np.testing.assert_allclose(again.decision_function(raw), model.decision_function(raw))
        np.testing.assert_allclose(again.member_weights, model.member_weights)
    ens = ensemble[0]
    header = read_header(tmp_path / "ensemble.sblr.npz")
    assert header["preprocessor"] is None and header["estimator"] is None  # none leads
    again = load_model(tmp_path / "ensemble.sblr.npz")
    assert [m.name for m in again.members] == [m.name for m in ens.members]
    assert again.members[0].train_accuracy == 0.9


def test_members_must_read_the_same_epochs_and_weights_must_be_weights(single, ensemble):
    model, _, _ = single
    ens, _, _ = ensemble
    other, _, _ = fit_model(CH, tmax=0.8, classes=["left", "right"])
    with pytest.raises(ValueError, match="same channels, rate and window"):
        EnsembleModel([model, other])
    with pytest.raises(ValueError, match="two or more SingleModel"):
        EnsembleModel([model, ens])  # no ensemble of ensembles
    with pytest.raises(ValueError, match="finite non-negative"):
        EnsembleModel([model, model], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="finite non-negative"):
        EnsembleModel([model, model], weights=[1.0])


def test_both_forms_rebuild_from_new_members(single, ensemble):
    for model, raw, _ in (single, ensemble):
        new = model.with_members(list(model.members), {"train_accuracy": 0.5})
        assert type(new) is type(model) and new.form == model.form
        assert len(new.member_labels) == len(new.members) == len(model.members)
        assert new.train_accuracy == 0.5
        np.testing.assert_allclose(new.decision_function(raw), model.decision_function(raw))
    assert single[0].member_labels == ("model",)
    assert ensemble[0].member_labels[1] == "member 1"
    with pytest.raises(ValueError, match="'members' must be"):
        ensemble[0].with_members(ensemble[0].members[:1])
    with pytest.raises(ValueError, match="'members' must be one SingleModel"):
        single[0].with_members(ensemble[0].members)


def test_both_forms_read_another_channel_order(single, ensemble):
    for model, raw, _ in (single, ensemble):
        order = [*reversed(model.ch_names), "EXTRA"]
        moved = model.for_channels(order)
        assert type(moved) is type(model)
        idx = [model.ch_names.index(c) for c in order[:-1]]
        shuffled = np.concatenate([raw[:, idx], np.zeros_like(raw[:, :1])], axis=1)
        np.testing.assert_allclose(moved.decision_function(shuffled), model.decision_function(raw))


def test_the_online_classifier_reads_the_concept(single, ensemble):
    for model, raw, _ in (single, ensemble):
        clf = OnlineClassifier(model)
        # An ensemble's members are scored each on its own; a single model has none to weigh.
        n_weighed = {"single": 0, "ensemble": len(model.members)}[model.form]
        assert clf.n_times_raw == model.n_times_raw and len(clf.scoring.members) == n_weighed
        window = raw[0, :, -model.n_times_raw :]
        np.testing.assert_allclose(
            clf.decision_function(window)[0], model.decision_function(window[None])[0]
        )
    with pytest.raises(TypeError, match="SingleModel or an EnsembleModel"):
        OnlineClassifier(object())


def test_the_channels_an_ensemble_reads_are_every_members(ensemble):
    ens, _, _ = ensemble
    assert set(ens.pick_indices) == set().union(
        *(set(m.preprocessor.pick_indices) for m in ens.members)
    )
    assert ens.prior_share is None and ens.prior_member is None
    assert isinstance(ens.members[0], SingleModel)

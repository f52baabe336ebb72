"""The typed record of a model's metadata: every field read, defaults, copies."""

from __future__ import annotations

from sblr_rt.bci_model.metadata import EpochCounts, ModelRecord, PriorRecord

METADATA = {
    "unit": "uV",
    "config": {"tmin": 0.5, "classes": {"T1": "left"}, "rename_channels": None},
    "epochs": {
        "found": 45,
        "used": 44,
        "per_class": {"left": 22},
        "rejected": {"flat": 1},
        "markers": {"T1": "left"},
    },
    "seconds": 12.5,
    "excluded_channels": {"Fp1": "flat"},
    "adaptation": {"version": 3, "parent": 2},
    "sources": ["a.edf", "b.edf"],
    "created": "2026-01-01T00:00:00+00:00",
    "prior": {
        "n_trials": 12,
        "settings": {"rank": 4},
        "person_weights": {"m": 1.0},
        "weight": 0.4,
    },
    "probability": {"method": "sigmoid"},
}


def test_every_field_reads_its_key():
    record = ModelRecord.from_metadata(METADATA)
    assert record.unit == "uV"
    assert record.config == METADATA["config"]
    assert record.epochs == EpochCounts(45, 44, {"left": 22}, {"flat": 1}, {"T1": "left"})
    assert record.epochs.to_dict() == METADATA["epochs"]
    assert record.seconds == 12.5
    assert record.excluded_channels == {"Fp1": "flat"}
    assert record.version == 3
    assert record.sources == ("a.edf", "b.edf")
    assert record.created == METADATA["created"]
    assert record.prior == PriorRecord(12, {"rank": 4}, {"m": 1.0})
    assert record.prior.to_dict() == METADATA["prior"]
    assert record.probability == {"method": "sigmoid"}


def test_what_is_missing_or_malformed_reads_as_the_default():
    assert ModelRecord.from_metadata(None) == ModelRecord()
    assert ModelRecord.from_metadata({}) == ModelRecord()
    bad = {"config": "bad", "adaptation": {"version": "x"}, "epochs": {}, "seconds": "1"}
    assert ModelRecord.from_metadata(bad) == ModelRecord()
    assert ModelRecord().prior.to_dict() == {}


def test_the_record_is_a_copy():
    record = ModelRecord.from_metadata(METADATA)
    record.config["tmin"] = 9.0
    record.epochs.per_class["left"] = 0
    record.prior.to_dict()["weight"] = 1.0
    assert METADATA["config"]["tmin"] == 0.5
    assert METADATA["epochs"]["per_class"]["left"] == 22
    assert METADATA["prior"]["weight"] == 0.4


def test_a_model_answers_with_its_record():
    from tests.models import fit_model

    model = fit_model()[0]
    model.metadata = dict(METADATA)
    assert model.record == ModelRecord.from_metadata(METADATA)
    model.metadata["adaptation"] = {"version": 4}
    assert model.record.version == 4

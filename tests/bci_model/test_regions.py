"""Where a model's weight lies: scalp regions of channels and the eye/visual warning."""

from __future__ import annotations

from sblr_rt.bci_model.regions import region_of, weight_regions
from tests.models import fit_model

CHANNELS = ["Fp1", "AF3", "F7", "T7", "C3", "Cz", "C4", "CP3", "FC4", "Pz", "PO8", "O1"]


def _model(loaded):
    """A waveform model whose class lives on the channels in ``loaded``."""
    model, _, _ = fit_model(
        CHANNELS, sfreq=50.0, n_times=10, n_epochs=60, classes=["l", "r"], informative=loaded,
        signal="shift", effect=2.0, estimator={"mu1": 0.05, "nu1": 0.01, "mu2": 0.0, "nu2": 0.0,
                                                "max_iter": 500, "tol": 1e-3},
    )  # fmt: skip
    return model


def test_regions_of_standard_labels():
    regions = [region_of(c) for c in CHANNELS]
    assert regions == ["eye"] * 4 + ["sensorimotor"] * 5 + ["other", "occipital", "occipital"]
    assert region_of("Fc5.") == "sensorimotor" and region_of("Iz") == "occipital"


def test_a_model_on_eye_channels_is_flagged_and_one_on_the_motor_strip_is_not():
    eye = weight_regions(_model(["Fp1", "F7", "PO8"]))
    assert eye.shares["eye"] + eye.shares["occipital"] > 0.5 and eye.warning is not None
    assert {"Fp1", "F7"} <= {ch for ch, _ in eye.leading}
    motor = weight_regions(_model(["C3", "C4"]))
    assert motor.shares["sensorimotor"] > 0.5 and motor.warning is None
    assert abs(sum(motor.shares.values()) - 1.0) < 1e-12
    text = _model(["Fp1", "F7", "PO8"]).summary()
    assert "weight by region" in text and "WARNING" in text

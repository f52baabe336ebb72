"""Where a model's weight lies: scalp regions of channels and the eye/visual warning."""

from __future__ import annotations

import numpy as np

from sblr_rt.bci_model import BCIModel
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.regions import region_of, weight_regions

CHANNELS = ["Fp1", "AF3", "F7", "T7", "C3", "Cz", "C4", "CP3", "FC4", "Pz", "PO8", "O1"]


def _model(loaded):
    """A waveform model whose class lives on the channels in ``loaded``."""
    rng = np.random.default_rng(0)
    pre = Preprocessor(ch_names=CHANNELS, sfreq=50.0, tmin=0.0, tmax=1.0, n_times=10)
    y = np.arange(60) % 2
    raw = rng.standard_normal((60, len(CHANNELS), pre.n_times_raw))
    for ch in loaded:
        raw[:, CHANNELS.index(ch)] += 2.0 * (2 * y[:, None] - 1)
    est = SparseBilinearLogisticRegression(mu1=0.05, nu1=0.01).fit(pre.fit(raw).transform(raw), y)
    return BCIModel(preprocessor=pre, estimator=est, classes=["l", "r"])


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

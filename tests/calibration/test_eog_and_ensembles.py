"""EOG regression (one matrix before the spatial stage) and ensembles, on synthetic runs."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate

from sblr_rt.bci_model.regions import weight_regions
from sblr_rt.io.recording import Recording

CHANNELS = ["Fp1", "Fp2", "FC3", "C3", "Cz", "C4", "CP4", "Pz"]


def _run(rng, n_trials=30, sfreq=100.0):
    """Continuous run: the class moves the eyes (Fp1) and leaks into C3 through them."""
    n = int(n_trials * 3 * sfreq)
    data = rng.standard_normal((len(CHANNELS), n))
    times, values = [], []
    for k in range(n_trials):
        onset = int((k * 3 + 0.5) * sfreq)
        side = k % 2
        eye = (2 * side - 1) * 6.0 * np.hanning(int(sfreq))
        data[0, onset : onset + len(eye)] += eye
        data[1, onset : onset + len(eye)] += 0.9 * eye
        data[3, onset : onset + len(eye)] += 0.5 * eye  # the eye signal seen at C3
        times.append(onset / sfreq)
        values.append("T1" if side == 0 else "T2")
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=CHANNELS,
        marker_times=times,
        marker_values=values,
        unit="uV",
    )


def test_a_model_with_eog_regression_reads_no_eye_channel_and_decides_online_alike():
    rng = np.random.default_rng(0)
    runs = [_run(rng), _run(rng)]
    kwargs = {"classes": ["T1", "T2"], "tmin": 0.0, "tmax": 1.0, "features": "waveform"}
    plain = calibrate(runs, n_jobs=1, **kwargs)
    cleaned = calibrate(runs, n_jobs=1, eog=["Fp1", "Fp2"], **kwargs)
    assert weight_regions(plain).shares["eye"] > 0.3  # the eyes carry the class
    assert weight_regions(cleaned).shares["eye"] < 1e-6  # Fp1/Fp2 are zero rows
    assert cleaned.preprocessor.spatial == "eog"
    # the regression is part of the saved spatial operator: the folded online form agrees
    from sblr_rt.online import OnlineClassifier

    clf = OnlineClassifier(cleaned)
    window = runs[0].data[:, 50 : 50 + clf.n_times_raw]
    np.testing.assert_allclose(
        clf.decision_function(window, form="folded"),
        clf.decision_function(window, form="plain"),
        rtol=1e-9,
        atol=1e-9,
    )


def test_eog_channels_must_be_model_channels():
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="'eog' must name channels of the model"):
        calibrate([_run(rng)], classes=["T1", "T2"], tmin=0.0, tmax=1.0, eog=["HEOG"], n_jobs=1)


def test_an_ensemble_refits_member_by_member_and_stays_run_centred(tmp_path):
    from sblr_rt.calibration.refit import labelled_recording, refit_model

    from sblr_rt.io import load_model

    rng = np.random.default_rng(2)
    runs = [_run(rng), _run(rng)]
    model = calibrate(runs, classes={"T1": "left", "T2": "right"}, tmin=0.0, tmax=1.0, n_jobs=1)
    assert model.is_ensemble
    class_map = {"T1": "left", "T2": "right"}
    new = refit_model(model, [labelled_recording(runs[0], class_map)], version=1, folder=tmp_path)
    assert new.is_ensemble and len(new.members) == len(model.members)
    # The ensemble records the epochs of this refit (one run), not its parent's (two).
    assert new.metadata["epochs"]["used"] == new.metadata["adaptation"]["n_epochs"]
    assert new.metadata["epochs"]["used"] < model.metadata["epochs"]["used"]
    assert all(m.run_centring is not None for m in new.members)
    assert new.metadata["config"] == model.metadata["config"]
    again = load_model(next(tmp_path.glob("*.sblr.npz")))
    X = np.stack(
        [runs[0].data[:, 50 + 300 * k : 50 + 300 * k + again.n_times_raw] for k in range(4)]
    )
    np.testing.assert_allclose(again.decision_function_run(X), new.decision_function_run(X))

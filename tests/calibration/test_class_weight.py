"""class_weight in calibration: every fit weighs the classes, and the model file keeps it."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.config import CalibrationConfig

from sblr_rt.io.model_file import load_model, save_model
from sblr_rt.io.reading import Recording

SMALL = dict(ranks=(1,), l1_fractions=(0.0,), l2_values=(0.1,), n_jobs=1, cv=3)


def _imbalanced(n_trials=60, rare_every=5, seed=0):
    # an ERP-like 1:4 session: the rare cue adds a weak deflection on one channel
    rng = np.random.default_rng(seed)
    sfreq = 100.0
    data = rng.standard_normal((4, int((n_trials + 2) * sfreq)))
    times = np.arange(n_trials) + 1.0
    values = ["rare" if k % rare_every == 0 else "frequent" for k in range(n_trials)]
    for t, v in zip(times, values, strict=True):
        if v == "rare":
            s = int(t * sfreq)
            data[1, s + 20 : s + 50] += 0.3
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=["C3", "Cz", "C4", "Pz"],
        marker_times=times,
        marker_values=values,
        source="synthetic",
        unit="uV",
    )


def test_balanced_class_weight_reaches_every_fit_and_the_model_file(tmp_path):
    rec = _imbalanced()
    kw = dict(features="waveform", tmin=0.0, tmax=0.6, **SMALL)
    plain = calibrate(rec, **kw)
    balanced = calibrate(rec, class_weight="balanced", **kw)
    assert plain.estimator.class_weight is None
    assert balanced.estimator.class_weight == "balanced"
    assert balanced.metadata["config"]["class_weight"] == "balanced"
    # the rare class weighs as much as the frequent one: its probability rises
    raw = _epochs(rec, balanced)
    rare = list(balanced.classes).index("rare")
    p_rare = [m.predict_proba(raw)[:, rare].mean() for m in (plain, balanced)]
    assert p_rare[1] > p_rare[0] + 0.05, p_rare
    path = tmp_path / "m.sblr.npz"
    save_model(balanced, path)
    assert load_model(path).estimator.class_weight == "balanced"


def _epochs(rec, model):
    onsets = np.round(rec.marker_times * rec.sfreq).astype(int)
    start = onsets + round(model.tmin * model.sfreq) - model.n_pad
    return np.stack([rec.data[:, s : s + model.n_times_raw] for s in start])


def test_class_weight_is_checked():
    assert CalibrationConfig(class_weight="none").selection.class_weight is None
    with pytest.raises(ValueError, match="'class_weight' must be 'balanced' or None"):
        CalibrationConfig(class_weight="even")

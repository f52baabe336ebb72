"""A single model holds its preprocessing and estimator as one scikit-learn Pipeline.

On the shipped PhysioNet recording, for every feature path and spatial stage, the model's
transform and scores through the Pipeline equal, bit for bit, the preprocessor's and the
estimator's own (the path the model took before it held a Pipeline), before and after a
round trip through the model file; a clone of the Pipeline refits on raw epochs to the
calibration's model.
"""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.assembly import fitted_model, run_of_each
from sblr_rt.calibration.epochs import cut_raw_epochs
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from sblr_rt.io import load_model, read_recording, save_model
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.model.run_centring import centre_runs
from sblr_rt.preprocessing import FeatureScaler, Preprocessor
from tests.calibrations import NO_SEARCH

RUNS = ("S001R06.edf", "S001R10.edf")
CLASSES = {"T1": "fists", "T2": "feet"}
PICKS = ["FC3", "FC4", "C5", "C3", "C1", "Cz", "C2", "C4", "C6", "CP3", "CPz", "CP4"]
PATHS = {
    "waveform": {"l_freq": 1.0, "h_freq": 30.0, "baseline": (0.5, 0.7), "n_times": 40},
    "bandpower": {},
    "spectral": {"scaling": "channel_time"},
    "covariance": {"bands": [(8.0, 30.0)]},
}


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def recordings(physionet_dir):
    return [read_recording(physionet_dir / name) for name in RUNS]


def _model(recordings, features, spatial, *, recentre):
    """A model fitted as calibration fits one, with fixed hyper-parameters."""
    rec = recordings[0]
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.5, tmax=2.5, picks=PICKS,
                       features=features, spatial=spatial, **PATHS[features])  # fmt: skip
    raw = cut_raw_epochs(recordings, pre, CLASSES)
    Z = pre.features_from_filtered(pre.filter_epochs(raw.data))
    reference = None
    if recentre:
        Z, reference = centre_runs(Z, np.asarray(run_of_each(recordings))[raw.runs])
    pre.fit_scaling(Z)
    # Unpenalised and short: these tests are about the path of the numbers, not the fit.
    est = SparseBilinearLogisticRegression(rank=2, max_iter=100)
    est.fit(pre.scale(Z), raw.y)
    return fitted_model(pre, est, raw.classes, reference, 1.0, {"unit": rec.unit}), raw


def _by_hand(model, epochs):
    """The model's input and scores computed from its parts, without the Pipeline."""
    pre, est = model.preprocessor, model.estimator
    X = pre.scale(pre.features_from_filtered(pre.filter_epochs(epochs[..., -pre.n_times_raw :])))
    scores = est.decision_function(X)
    if model.run_centring is not None:
        ref = model.run_centring.reference_score
        scores = scores - (ref[0] if scores.ndim == 1 else ref)
    return X, scores


@pytest.mark.parametrize("spatial", [None, "car", "csd"])
@pytest.mark.parametrize("features", list(PATHS))
def test_the_pipeline_scores_as_the_parts_bit_for_bit(recordings, features, spatial, tmp_path):
    model, raw = _model(recordings, features, spatial, recentre=spatial == "car")
    pipe = model.pipeline
    assert isinstance(pipe, Pipeline)
    assert [name for name, _ in pipe.steps] == ["filter", "spatial", "features", "scale",
                                                "estimator"]  # fmt: skip
    assert pipe[-1] is model.estimator
    assert pipe.named_steps["spatial"].design is model.preprocessor
    # A longer epoch is read from its end, as before.
    epochs = np.concatenate([np.zeros_like(raw.data[..., :7]), raw.data], axis=-1)
    X, scores = _by_hand(model, epochs)
    np.testing.assert_array_equal(model.transform(epochs), X)
    np.testing.assert_array_equal(pipe[:-1].transform(raw.data), X)
    np.testing.assert_array_equal(model.decision_function(epochs), scores)
    np.testing.assert_array_equal(model.predict_proba(epochs), model.labels_from_scores(scores)[1])
    np.testing.assert_array_equal(model.predict(epochs), model.labels_from_scores(scores)[0])
    loaded = load_model(save_model(model, tmp_path / "m.sblr.npz"))
    assert isinstance(loaded.pipeline, Pipeline)
    np.testing.assert_array_equal(loaded.transform(epochs), X)
    np.testing.assert_array_equal(loaded.decision_function(epochs), scores)
    if model.run_centring is not None:
        np.testing.assert_array_equal(loaded.decision_function_run(epochs),
                                      model.decision_function_run(epochs))  # fmt: skip


@pytest.mark.parametrize("features", ["waveform", "bandpower"])
def test_a_clone_of_the_pipeline_refits_to_the_calibrated_model(recordings, features):
    # Without run centring and with no search, calibration fits the scaling on all epochs'
    # features and the estimator, from its start, on their scaled features: what the
    # Pipeline's fit does on raw epochs, so the numbers are the same bit for bit.
    model = calibrate([r.source for r in recordings], classes=CLASSES, tmin=0.5, tmax=2.5,
                      features=features, recentre=False, **NO_SEARCH)  # fmt: skip
    raw = cut_raw_epochs(recordings, model.preprocessor, CLASSES)
    refit = clone(model.pipeline)
    assert not hasattr(refit.named_steps["scale"], "row_scale_")
    refit.fit(raw.data, raw.y)
    scaler = refit.named_steps["scale"]
    for name in ("row_offset_", "row_scale_", "col_scale_"):
        np.testing.assert_array_equal(getattr(scaler, name), getattr(model.preprocessor, name))
    np.testing.assert_array_equal(refit.decision_function(raw.data),
                                  model.decision_function(raw.data))  # fmt: skip


def test_run_centring_stays_on_the_scores(recordings):
    # Calibration centres each run on its own mean before the scaling: a plain refit of
    # the Pipeline does not (it sees no runs), so its scaling is not the model's.
    model, raw = _model(recordings, "bandpower", None, recentre=True)
    refit = clone(model.pipeline).fit(raw.data, raw.y)
    assert not np.allclose(refit.named_steps["scale"].row_offset_,
                           model.preprocessor.row_offset_)  # fmt: skip


def test_the_scale_step_holds_the_preprocessor_scaling(recordings):
    model, _ = _model(recordings, "spectral", "car", recentre=False)
    scaler = model.pipeline.named_steps["scale"]
    assert scaler.row_scale_ is model.preprocessor.row_scale_
    assert (scaler.scaling, scaler.center) == ("channel_time", True)
    with pytest.raises(RuntimeError, match=r"call Preprocessor\.fit\(\)"):
        FeatureScaler.from_preprocessor(Preprocessor(ch_names=PICKS, sfreq=160.0, tmin=0.0,
                                                     tmax=1.0))  # fmt: skip

"""Calibration on the shipped recordings: epochs, rejection, selection, model, errors."""

from __future__ import annotations

import numpy as np
import pytest
from sblr_rt.calibration import calibrate, load_config, make_splits, paper_param_grid, penalty_grid
from sblr_rt.calibration.concerns import RejectionSettings
from sblr_rt.calibration.config import CalibrationConfig
from sblr_rt.calibration.epochs import extract_epochs
from sblr_rt.calibration.report import report_text, write_report

from sblr_rt.io.model_file import load_model, save_model
from sblr_rt.io.reading import Recording, read_recording
from sblr_rt.preprocessing import Preprocessor
from tests.calibrations import NO_SEARCH, SMALL_GRID


def _raw_epochs(model, rec, onsets):
    start = np.asarray(onsets) + round(model.tmin * model.sfreq) - model.n_pad
    return np.stack([rec.data[:, s : s + model.n_times_raw] for s in start])


def test_epoched_file_waveform(bcicomp2003_path, tmp_path):
    model = calibrate(bcicomp2003_path, cv=3, features="waveform", **SMALL_GRID)
    sel = model.metadata["selection"]
    assert model.classes == ["0", "1"]
    assert model.features == "waveform"
    assert (model.tmin, model.tmax) == (0.0, 0.5)  # the whole trial by default
    assert sel["best"]["accuracy"] > 0.65  # the competition data are separable (chance 0.5)
    assert sel["criterion"] == "accuracy" and sel["chosen"] == "waveform/none"
    (candidate,) = sel["candidates"]  # a fixed feature path is one candidate
    assert len(candidate["points"]) == 2 * 2 * 2  # fast search: mu1 x nu1 x (mu2 = nu2)
    assert candidate["accuracy"] == sel["best"]["accuracy"]
    assert [r["rank"] for r in sel["ranks"]] == [1, 2]
    assert model.metadata["epochs"]["used"] == 216
    # The model classifies raw epochs exactly as cut from the recording.
    rec = read_recording(bcicomp2003_path)
    onsets = np.round(rec.marker_times * rec.sfreq).astype(int)
    raw = _raw_epochs(model, rec, onsets)
    pred = model.predict(raw)
    truth = np.asarray(rec.marker_values)
    assert np.mean(pred == truth) == pytest.approx(model.metadata["train_accuracy"])
    path = tmp_path / "m.sblr.npz"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.decision_function(raw), model.decision_function(raw))
    txt, png = write_report(loaded, tmp_path / "report")
    assert "CV accuracy" in txt.read_text() and png.stat().st_size > 10_000


def test_physionet_bandpower_two_runs(physionet_dir):
    files = [physionet_dir / "S001R06.edf", physionet_dir / "S001R10.edf"]
    model = calibrate(
        files,
        classes={"T1": "fists", "T2": "feet"},
        tmin=0.5,
        tmax=3.5,
        features="bandpower",
        picks=("C3", "Cz", "C4", "FC3", "FCz", "FC4", "CP3", "CPz", "CP4"),
        **NO_SEARCH,
    )
    assert model.classes == ["fists", "feet"]
    assert model.preprocessor.n_rows == 9 * 2
    assert model.metadata["epochs"]["per_class"] == {"fists": 14, "feet": 16}
    # Offline features of the calibration equal the model's own path on raw epochs.
    rec = read_recording(files[1])
    keep = [i for i, v in enumerate(rec.marker_values) if v in ("T1", "T2")]
    onsets = np.round(rec.marker_times[keep] * rec.sfreq).astype(int)
    raw = _raw_epochs(model, rec, onsets)
    assert set(model.predict(raw)) <= {"fists", "feet"}
    assert model.predict_proba(raw).shape == (len(keep), 2)
    assert "fists" in report_text(model)


def _synthetic_recording(n_trials=24, sfreq=100.0, seed=0):
    rng = np.random.default_rng(seed)
    n = int((n_trials * 2 + 2) * sfreq)
    data = rng.standard_normal((4, n))
    times = np.arange(n_trials) * 2.0 + 1.0
    values = ["a" if k % 2 else "b" for k in range(n_trials)]
    for t, v in zip(times, values, strict=True):
        s = int(t * sfreq)
        data[1, s : s + 50] += 2.0 if v == "a" else -2.0
    return Recording(
        data=data,
        sfreq=sfreq,
        ch_names=["C3", "Cz", "C4", "Pz"],
        marker_times=times,
        marker_values=values,
        source="synthetic",
        unit="uV",
    )


def test_rejection_is_counted():
    rec = _synthetic_recording()
    s = [int(t * rec.sfreq) for t in rec.marker_times]
    rec.data[0, s[0] + 10] = np.nan
    rec.data[2, s[1] : s[1] + 100] = 0.0  # flat over the whole window
    rec.data[3, s[2] + 5 : s[2] + 15] = rec.data[3].max() + 1.0  # clipped at the rail
    rec.data[1, s[3] + 20] = 500.0  # beyond the threshold
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.0, tmax=1.0)
    ep = extract_epochs([rec], pre, None, RejectionSettings(reject=100.0))
    assert ep.rejected == {"edge": 0, "gap": 0, "nan": 1, "flat": 1, "clipped": 1, "amplitude": 1}
    assert len(ep.y) == 20 and ep.n_found == 24
    with pytest.deprecated_call(match="rejection=RejectionSettings"):  # the keywords of before
        old = extract_epochs([rec], pre, None, reject=100.0, clip_run=5)
    assert old.rejected == ep.rejected and np.array_equal(old.Z, ep.Z)
    with pytest.raises(TypeError, match=r"expected 'rejection' or \['reject'\], got both"):
        extract_epochs([rec], pre, None, RejectionSettings(), reject=1.0)
    # A window reaching beyond the recording is an edge rejection.
    late = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.0, tmax=3.5)
    assert extract_epochs([rec], late, None).rejected["edge"] >= 1


@pytest.mark.parametrize(("unit", "bound"), [("uV", 1e6), ("V", 1.0)])
def test_a_sample_beyond_one_volt_rejects_its_epoch_as_the_online_loop_refuses_it(unit, bound):
    """Not a measurement: rejected as NaN is (reason "nan"), and no channel's extreme."""
    rec = _synthetic_recording()
    rec.data *= bound / 1e6
    rec.unit = unit
    s = [int(t * rec.sfreq) for t in rec.marker_times]
    rec.data[0, s[0] + 10] = 1e100
    rec.data[1, s[1] + 10] = -1e30
    rec.data[2, s[2] + 10] = np.nextafter(bound, np.inf)
    rec.data[3, s[3] + 10 : s[3] + 12] = bound  # a measurement, if a large one: kept
    rec.data[0, s[4] + 20 : s[4] + 30] = rec.data[0, np.abs(rec.data[0]) <= bound].max()
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.0, tmax=1.0)
    ep = extract_epochs([rec], pre, None, RejectionSettings())
    # The run at channel 0's largest measured value is clipped: 1e100 is not its extreme.
    assert ep.rejected == {"edge": 0, "gap": 0, "nan": 3, "flat": 0, "clipped": 1, "amplitude": 0}
    assert [o for _, o in ep.onsets][:2] == [s[3], s[5]]


def test_a_recording_in_the_wrong_unit_names_the_bound():
    rec = _synthetic_recording()
    rec.data *= 20.0
    rec.unit = "V"  # microvolts declared as volts: every epoch holds "samples" beyond 1 V
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.0, tmax=1.0)
    with pytest.raises(ValueError, match=r"beyond 1 V too \(beyond synthetic \(1 V\)\)"):
        extract_epochs([rec], pre, None)


def test_bad_input_messages(physionet_dir):
    rec = _synthetic_recording()
    with pytest.raises(ValueError, match=r"do not match the class map.*'left'"):
        calibrate(rec, classes=["left", "right"], **SMALL_GRID)
    with pytest.raises(ValueError, match="too few epochs per class"):
        calibrate(_synthetic_recording(n_trials=6), cv=5, **SMALL_GRID)
    with pytest.raises(ValueError, match=r"missing from .*\['T7'\]"):
        calibrate(rec, picks=("C3", "T7"), **SMALL_GRID)
    with pytest.raises(ValueError, match="no usable epoch"):  # the recording lasts 50 s
        calibrate(rec, tmin=0.0, tmax=60.0, **SMALL_GRID)
    with pytest.raises(ValueError, match=r"'tmax' must be a finite number >= -60 and <= 60"):
        calibrate(rec, tmin=0.0, tmax=200.0, **SMALL_GRID)
    with pytest.raises(ValueError, match="'cv'"):
        CalibrationConfig(cv=1)
    with pytest.raises(ValueError, match="l1_fractions"):
        CalibrationConfig(l1_fractions=(0.0, 1.0))
    with pytest.raises(FileNotFoundError):
        calibrate(physionet_dir / "missing.edf")


def test_loo_and_multiclass():
    rec = _synthetic_recording(n_trials=18)
    rec.marker_values = [["a", "b", "c"][k % 3] for k in range(18)]
    model = calibrate(
        rec, tmax=1.0, cv="loo", search="none", ranks=(1,), n_jobs=1, features="waveform"
    )
    assert model.metadata["selection"]["n_splits"] == 18
    assert model.classes == ["a", "b", "c"]
    assert model.estimator.spatial_.shape[0] == 3


def test_config_from_toml(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        'features = "bandpower"\ntmin = 0.5\n[classes]\nT1 = "fists"\nT2 = "feet"\n'
        '[selection]\ncv = 3\nsearch = "paper"\n[rejection]\nreject = 1e-4\n'
    )
    cfg = load_config(path, tmax=3.0)
    assert (
        cfg.preprocessing.features == "bandpower"
        and cfg.selection.cv == 3
        and cfg.selection.search == "paper"
    )
    assert cfg.class_map == {"T1": "fists", "T2": "feet"} and cfg.epochs.tmax == 3.0
    assert cfg.rejection.reject == 1e-4
    path.write_text("speed = 3\n")
    with pytest.raises(ValueError, match="unknown configuration keys \\['speed'\\]"):
        load_config(path)


def test_grids_and_splits():
    paper = penalty_grid(
        "paper",
        CalibrationConfig().selection.l1_fractions,
        CalibrationConfig().selection.l2_values,
    )
    assert len(paper) == 25 and sum(len(p) for _, p in paper) == 6 * 5 * 6 * 5
    fast = penalty_grid(
        "fast", CalibrationConfig().selection.l1_fractions, CalibrationConfig().selection.l2_values
    )
    assert sum(len(p) for _, p in fast) == 6 * 6 * 5
    # Warm-start order: from the largest penalties down, neighbours adjacent.
    path = paper[0][1]
    assert path[0] == (0.4, 0.4) and path[-1][0] == 0.0
    grid = paper_param_grid(2.0, 3.0)
    assert len(grid["mu1"]) == 6 and len(grid["mu2"]) == 5 and max(grid["nu1"]) < 3.0
    y = np.repeat([0, 1], 10)
    assert len(make_splits(y, 5)) == 5 and len(make_splits(y, "loo")) == 20


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:.*zero trap.*")
def test_estimator_in_grid_search_cv(bcicomp2003_path):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from sblr_rt.model import SparseBilinearLogisticRegression, l1_penalty_max

    rec = read_recording(bcicomp2003_path)
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=rec.sfreq, tmin=0.0, tmax=0.5)
    ep = extract_epochs([rec], pre, None)
    X = pre.fit_scaling(ep.Z).scale(ep.Z)[:120]
    y = ep.y[:120]
    mu1_max, nu1_max = l1_penalty_max(X, y)
    grid = paper_param_grid(mu1_max, nu1_max, l1_fractions=(0.0, 0.05), l2_values=(0.0,))
    search = GridSearchCV(
        SparseBilinearLogisticRegression(), grid, cv=StratifiedKFold(3), n_jobs=1
    ).fit(X, y)
    assert search.best_score_ > 0.6


@pytest.mark.parametrize(
    ("n_folds", "n_groups", "n_workers"),
    [(5, 25, 2), (5, 25, 1), (2, 25, 4), (3, 1, 2), (10, 5, 4)],
)
def test_grid_tasks_cover_every_fold_and_group_once(n_folds, n_groups, n_workers):
    from sblr_rt.calibration.search import fold_chunks

    plan = fold_chunks(n_folds, n_groups, n_workers)
    covered = sorted((f, g) for f, c, n in plan for g in range(n_groups)[c::n])
    assert covered == [(f, g) for f in range(n_folds) for g in range(n_groups)]
    whole = [f for f, _, n in plan if n == 1]
    assert len(whole) >= n_folds - n_folds % n_workers  # folds stay whole where they can
    assert all(n <= n_groups for _, _, n in plan)
    if (n_folds, n_workers) == (5, 2):  # the benchmark's case: the fifth fold in halves
        assert plan[4:] == [(4, 0, 2), (4, 1, 2)]


def test_auto_with_leave_one_out_and_three_classes():
    rec = _synthetic_recording(n_trials=18)
    rec.marker_values = [["a", "b", "c"][k % 3] for k in range(18)]
    model = calibrate(rec, tmax=1.0, cv="loo", n_jobs=1, auto_ranks=(1,), auto_l1=(0.0,))
    auto = model.metadata["selection"]
    assert auto["cv"] == "loo" and auto["repeats"] == 1
    assert model.classes == ["a", "b", "c"]
    assert all(c["repeats"] == 1 for c in auto["candidates"])


def test_the_epoch_checks_range_of_each_channel_ignores_nan_and_inf():
    from sblr_rt.calibration.epochs import _finite_range, _rows

    data = np.array(
        [
            [1.0, -2.0, 3.0, 0.5],
            [np.nan, 4.0, -1.0, 2.0],
            [np.inf, 5.0, -np.inf, 1.0],
            [np.nan, np.nan, np.inf, np.nan],
        ]
    )
    gmin, gmax = _finite_range(data)
    np.testing.assert_array_equal(gmin, [-2.0, -1.0, 1.0, np.inf])
    np.testing.assert_array_equal(gmax, [3.0, 4.0, 5.0, -np.inf])
    gmin, gmax = _finite_range(data, 4.5)  # beyond it: no measurement, as NaN
    np.testing.assert_array_equal(gmin, [-2.0, -1.0, 1.0, np.inf])
    np.testing.assert_array_equal(gmax, [3.0, 4.0, 1.0, -np.inf])
    assert _rows(data, [0, 1, 2, 3]) is data  # every row in order: no copy
    np.testing.assert_array_equal(_rows(data, [2, 0]), data[[2, 0]])


def test_calibration_runs_with_blas_on_one_thread(monkeypatch):
    # OpenBLAS's threads slow the small products of a calibration; whatever the caller's
    # setting (here two threads), calibrate() limits BLAS to one while it runs.
    import sblr_rt.calibration.core as core
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(i["user_api"] == "blas" for i in threadpool_info()):
        pytest.skip("this threadpoolctl does not see the BLAS library (minimum versions)")
    seen, select = [], core.select

    def spy(*args, **kwargs):
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return select(*args, **kwargs)

    monkeypatch.setattr(core, "select", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        calibrate(_synthetic_recording(), tmax=1.0, features="waveform", **SMALL_GRID)
        after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert seen and set(seen) == {1}
    assert set(after) == {2}  # the caller's setting is back


def test_the_fixed_path_keeps_the_scaling_its_final_fit_was_trained_on(monkeypatch):
    """The selection's all-epoch scaling becomes the model's: no second fit of it."""
    import sblr_rt.calibration.core as core

    from sblr_rt.preprocessing import Preprocessor

    returned, select = [], core.select

    def spy(*args, **kwargs):
        out = select(*args, **kwargs)
        returned.append(out[2])
        return out

    def refit(*_args, **_kwargs):
        raise AssertionError("the fixed path fitted the scaling again")

    monkeypatch.setattr(core, "select", spy)
    monkeypatch.setattr(Preprocessor, "fit_scaling", refit)
    # the probability calibration refits copies on folds (its own scaling each), not this
    monkeypatch.setattr(core, "calibrate_probability", lambda *_a, **_k: None)
    model = calibrate(_synthetic_recording(), tmax=1.0, features="bandpower", **SMALL_GRID)
    pre = model.preprocessor
    fitted = (pre.row_offset_, pre.row_scale_, pre.col_scale_)
    for got, want in zip(fitted, returned[0], strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"'scaling' must be .* got \[\(2,\)"):
        pre.use_scaling((np.zeros(2), np.ones(2), np.ones(2)))


def test_a_cap_with_other_labels_is_calibrated_with_the_renaming(tmp_path):
    import dataclasses

    rec = _synthetic_recording()
    cap = dataclasses.replace(rec, ch_names=[f"EEG {c.upper()}-REF" for c in rec.ch_names])
    kw = dict(tmax=1.0, cv=3, search="none", ranks=(1,), n_jobs=1, features="waveform")
    hint = r"--rename-channels 'EEG C3-REF=C3,EEG CZ-REF=Cz,EEG C4-REF=C4'"
    with pytest.raises(ValueError, match=r"'picks' must name channels of the recordings, got "
                       r"some missing from synthetic: \['C3', 'Cz', 'C4'\]; .*close labels: "
                       r"C3 -> 'EEG C3-REF'; "
                       r".*" + hint):  # fmt: skip
        calibrate(cap, picks=["C3", "Cz", "C4"], **kw)
    toml = tmp_path / "cap.toml"
    toml.write_text('[preprocessing]\npicks = ["C3", "Cz", "C4"]\nrename_channels = { '
                    '"EEG C3-REF" = "C3", "EEG CZ-REF" = "Cz", "EEG C4-REF" = "C4" }\n'
                    )  # fmt: skip
    model = calibrate(cap, config=toml, **kw)
    assert model.ch_names[:3] == ["C3", "Cz", "C4"] and model.picks == ["C3", "Cz", "C4"]
    assert model.metadata["config"]["rename_channels"] == {
        "EEG C3-REF": "C3", "EEG CZ-REF": "Cz", "EEG C4-REF": "C4"
    }  # fmt: skip
    # the same model as from the recording with the standard labels
    plain = calibrate(rec, picks=["C3", "Cz", "C4"], **kw)
    X = np.random.default_rng(1).standard_normal((3, 4, model.n_times_raw))
    np.testing.assert_allclose(model.decision_function(X), plain.decision_function(X))
    # a renaming that does not fit the recording is refused, naming the close labels
    with pytest.raises(ValueError, match=r"'rename_channels' must name labels the recording "
                       r"synthetic has, got 1 it lacks: 'EEG C3' .*close labels: EEG C3 -> "
                       r"'EEG C3-REF'"):  # fmt: skip
        calibrate(cap, rename_channels="EEG C3=C3", **kw)

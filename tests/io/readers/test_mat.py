"""BCI-competition MATLAB files: continuous and epoched layouts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from sblr_rt.io import read_recording


def test_bcicomp2003_epoched(bcicomp2003_path):
    rec = read_recording(bcicomp2003_path)
    mat = scipy.io.loadmat(bcicomp2003_path)
    x = mat["x_train"]  # (50, 28, 216)
    assert rec.sfreq == 100.0 and rec.epoch_length == 50 and rec.unit == "uV"
    assert rec.data.shape == (28, 50 * 216)
    assert rec.ch_names[:3] == ["F3", "F1", "Fz"] and rec.ch_names[-1] == "O2"
    assert rec.marker_values == [str(v) for v in mat["y_train"].ravel()]
    np.testing.assert_array_equal(rec.marker_samples, np.arange(216) * 50)
    for trial in (0, 1, 215):
        start = rec.marker_samples[trial]
        np.testing.assert_array_equal(rec.data[:, start : start + 50], x[:, :, trial].T)


def test_bci_competition_iii_continuous(tmp_path):
    rng = np.random.default_rng(0)
    cnt = rng.integers(-3000, 3000, size=(1000, 3)).astype(np.int16)
    mrk = {
        "pos": np.array([[101, 401, 701]], dtype=float),
        "y": np.array([[1, 2, np.nan]]),
        "className": np.array([["right", "foot"]], dtype=object),
    }
    nfo = {"clab": np.array([["C3", "Cz", "C4"]], dtype=object), "fs": 100.0}
    path = tmp_path / "data_set_IVa_xx.mat"
    scipy.io.savemat(path, {"cnt": cnt, "mrk": mrk, "nfo": nfo})
    rec = read_recording(path)
    assert rec.ch_names == ["C3", "Cz", "C4"] and rec.sfreq == 100.0 and rec.unit == "uV"
    np.testing.assert_allclose(rec.data, 0.1 * cnt.T)
    np.testing.assert_array_equal(rec.marker_samples, [100, 400, 700])  # 1-based in MATLAB
    assert rec.marker_values == ["right", "foot", "unlabeled"]
    # IVb style: float cnt, labels -1/1 with no class names
    mrk = {"pos": np.array([11, 21.0]), "y": np.array([-1, 1.0])}
    scipy.io.savemat(path, {"cnt": cnt.astype(float), "mrk": mrk, "nfo": nfo})
    rec = read_recording(path)
    assert rec.marker_values == ["-1", "1"]
    np.testing.assert_allclose(rec.data, cnt.T)
    # competition IV data set 1 style: class names in nfo.classes, labels -1/+1
    nfo["classes"] = np.array([["left", "foot"]], dtype=object)
    scipy.io.savemat(path, {"cnt": cnt, "mrk": mrk, "nfo": nfo})
    assert read_recording(path).marker_values == ["left", "foot"]


def test_mat_without_known_layout(tmp_path):
    path = tmp_path / "other.mat"
    scipy.io.savemat(path, {"foo": np.zeros(3)})
    with pytest.raises(ValueError, match=r"not a BCI-competition recording.*\['foo'\]"):
        read_recording(path)

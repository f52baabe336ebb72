"""BCI-competition MATLAB files: continuous and epoched layouts."""

from __future__ import annotations

import struct
import zlib

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


# -- compression bombs and sizes (issue 37, item 7) ----------------------------------------
def _mat_bomb(path, n_bytes: int) -> None:
    """Write a MAT v5 file whose one compressed variable 'cnt' holds ``n_bytes`` of zeros.

    Built piece by piece, so that the test never holds the array it declares.
    """
    n_samples = n_bytes // (8 * 4)

    def element(mdtype, payload):
        return struct.pack("<II", mdtype, len(payload)) + payload + b"\0" * (-len(payload) % 8)

    header = (
        element(6, struct.pack("<II", 6, 0))  # array flags: mxDOUBLE_CLASS
        + element(5, struct.pack("<ii", n_samples, 4))  # dimensions
        + element(1, b"cnt")  # name
    )
    data_bytes = 8 * n_samples * 4
    matrix_tag = struct.pack("<II", 14, len(header) + 8 + data_bytes)
    deflate = zlib.compressobj(1)
    body = [deflate.compress(matrix_tag + header + struct.pack("<II", 9, data_bytes))]
    zeros = b"\0" * (1 << 24)
    for _ in range(data_bytes // len(zeros)):
        body.append(deflate.compress(zeros))
    body.append(deflate.compress(b"\0" * (data_bytes % len(zeros))))
    body.append(deflate.flush())
    body = b"".join(body)
    text = b"MATLAB 5.0 MAT-file, a compression bomb".ljust(116) + b"\0" * 8
    path.write_bytes(text + b"\x00\x01IM" + struct.pack("<II", 15, len(body)) + body)


@pytest.mark.timeout(60)
def test_a_compression_bomb_is_refused_before_it_is_decompressed(tmp_path):
    path = tmp_path / "bomb.mat"
    _mat_bomb(path, 128 * 1024**2)
    assert path.stat().st_size < 1024**2
    assert scipy.io.whosmat(path) == [("cnt", (4194304, 4), "double")]
    with pytest.raises(ValueError, match=r"compressed variable of .* kiB that expands to more"):
        read_recording(path)


def test_a_mat_file_beyond_the_size_limit_is_refused(tmp_path, monkeypatch):
    from sblr_rt.io import declared_limits

    path = tmp_path / "data_set_IVa_xx.mat"
    nfo = {"clab": np.array([["C3", "Cz", "C4"]], dtype=object), "fs": 100.0}
    cnt = np.random.default_rng(0).standard_normal((2000, 3))
    scipy.io.savemat(path, {"cnt": cnt, "nfo": nfo}, do_compression=True)
    assert read_recording(path).n_samples == 2000
    monkeypatch.setattr(declared_limits, "MAX_DATA_BYTES", 40_000)
    with pytest.raises(
        ValueError, match=r"would take 4.\.. kiB in memory: expected at most 39\.1"
    ):
        read_recording(path)
    scipy.io.savemat(path, {"cnt": cnt, "nfo": nfo}, do_compression=False)
    with pytest.raises(ValueError, match=r"its variables\) would take .* at most 39\.1 kiB"):
        read_recording(path)


@pytest.mark.parametrize("fs", [0.0, 1e9, np.nan])
def test_a_mat_rate_no_amplifier_gives_is_refused(tmp_path, fs):
    path = tmp_path / "data_set_IVa_xx.mat"
    nfo = {"clab": np.array([["C3", "C4"]], dtype=object), "fs": fs}
    scipy.io.savemat(path, {"cnt": np.zeros((100, 2)), "nfo": nfo})
    with pytest.raises(ValueError, match=r"declares a sampling rate of .*\(0, 100000\] Hz"):
        read_recording(path)

"""read_recording on every supported format, the shipped files and bad input."""

from __future__ import annotations

import struct
from pathlib import Path

import mne
import numpy as np
import pytest
import scipy.io

from sblr_rt.io import Recording, concatenate_recordings, read_recording


# ---------------------------------------------------------------------------- shipped files
def test_physionet_edf(physionet_dir):
    rec = read_recording(physionet_dir / "S001R06.edf")
    assert rec.sfreq == 160.0
    assert rec.data.shape == (64, 20000) and rec.data.dtype == np.float64
    assert rec.ch_names[:3] == ["FC5", "FC3", "FC1"] and "Cz" in rec.ch_names
    assert set(rec.marker_values) == {"T0", "T1", "T2"}
    assert len(rec.marker_values) == 30 and rec.epoch_length is None
    assert rec.unit == "V" and 1e-6 < rec.data.std() < 1e-3  # volts
    # markers sit on samples and match MNE's own events
    raw = mne.io.read_raw_edf(physionet_dir / "S001R06.edf", verbose="error")
    events, event_id = mne.events_from_annotations(raw, verbose="error")
    np.testing.assert_array_equal(rec.marker_samples, events[:, 0] - raw.first_samp)
    names = {v: k for k, v in event_id.items()}
    assert rec.marker_values == [names[c] for c in events[:, 2]]
    np.testing.assert_allclose(rec.data, raw.get_data())


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


# ---------------------------------------------------------------------------- synthetic files
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


def _make_raw(n_times=500, first_samp=0, annotations=True):
    info = mne.create_info(["C3", "Cz", "C4"], 250.0, "eeg")
    data = np.random.default_rng(1).standard_normal((3, n_times)) * 1e-5
    raw = mne.io.RawArray(data, info, first_samp=first_samp, verbose="error")
    if annotations:
        raw.set_annotations(
            mne.Annotations([0.4, 1.0, 1.2], [0.0, 0.5, 0.1], ["left", "BAD_x", "right"])
        )
    return raw


@pytest.mark.parametrize("first_samp", [0, 123])
def test_fif_annotations_become_markers(tmp_path, first_samp):
    raw = _make_raw(first_samp=first_samp)
    path = tmp_path / "x_raw.fif"
    raw.save(path, verbose="error")
    rec = read_recording(path)
    np.testing.assert_allclose(rec.data, raw.get_data(), rtol=1e-6)
    assert rec.marker_values == ["left", "right"]  # BAD annotation is not a marker
    np.testing.assert_array_equal(rec.marker_samples, [100, 300])


def test_recording_without_markers(tmp_path):
    path = tmp_path / "plain_raw.fif"
    _make_raw(annotations=False).save(path, verbose="error")
    rec = read_recording(path)
    assert not rec.has_markers and rec.marker_times.shape == (0,)
    with pytest.raises(ValueError, match="no markers"):
        rec.require_markers()


def _varlen(n):
    return b"\x01" + struct.pack("<B", n) if n < 256 else b"\x04" + struct.pack("<I", n)


def _chunk(tag, content, stream_id=None):
    body = struct.pack("<H", tag) + (b"" if stream_id is None else struct.pack("<I", stream_id))
    body += content
    return _varlen(len(body)) + body


def write_xdf(path, streams):
    """Write a minimal XDF file: streams is a list of dicts (name, type, srate, fmt,
    labels, unit, stamps, samples)."""
    out = [b"XDF:", _chunk(1, b'<?xml version="1.0"?><info><version>1.0</version></info>')]
    for sid, s in enumerate(streams, start=1):
        chans = "".join(
            f"<channel><label>{lab}</label><unit>{s.get('unit', '')}</unit></channel>"
            for lab in s["labels"]
        )
        xml = (
            f'<?xml version="1.0"?><info><name>{s["name"]}</name><type>{s["type"]}</type>'
            f"<channel_count>{len(s['labels'])}</channel_count>"
            f"<nominal_srate>{s['srate']}</nominal_srate>"
            f"<channel_format>{s['fmt']}</channel_format><created_at>0</created_at>"
            f"<desc><channels>{chans}</channels></desc></info>"
        )
        out.append(_chunk(2, xml.encode(), sid))
    for sid, s in enumerate(streams, start=1):
        body = _varlen(len(s["stamps"]))
        for ts, sample in zip(s["stamps"], s["samples"], strict=True):
            body += b"\x08" + struct.pack("<d", ts)
            if s["fmt"] == "string":
                for v in sample:
                    body += _varlen(len(v.encode())) + v.encode()
            else:
                body += np.asarray(sample, dtype="<f4").tobytes()
        out.append(_chunk(3, body, sid))
    for sid, s in enumerate(streams, start=1):
        xml = (
            f'<?xml version="1.0"?><info><first_timestamp>{s["stamps"][0]}</first_timestamp>'
            f"<last_timestamp>{s['stamps'][-1]}</last_timestamp>"
            f"<sample_count>{len(s['stamps'])}</sample_count></info>"
        )
        out.append(_chunk(6, xml.encode(), sid))
    Path(path).write_bytes(b"".join(out))


def test_xdf_eeg_and_marker_streams(tmp_path):
    n, sfreq, t0 = 300, 100.0, 5000.0
    samples = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    stamps = t0 + np.arange(n) / sfreq
    path = tmp_path / "session.xdf"
    write_xdf(
        path,
        [
            {"name": "Cues", "type": "Markers", "srate": 0, "fmt": "string", "labels": ["m"],
             "stamps": [t0 + 0.5, t0 + 1.2], "samples": [["left"], ["right"]]},
            {"name": "Amp", "type": "EEG", "srate": sfreq, "fmt": "float32",
             "labels": ["C3", "C4"], "unit": "microvolts", "stamps": stamps, "samples": samples},
            {"name": "Buttons", "type": "Markers", "srate": 0, "fmt": "float32",
             "labels": ["b"], "stamps": [t0 + 0.9], "samples": [[7.0]]},
        ],
    )  # fmt: skip
    rec = read_recording(path)
    assert rec.ch_names == ["C3", "C4"] and rec.sfreq == sfreq and rec.unit == "microvolts"
    np.testing.assert_array_equal(rec.data, samples.T)
    assert rec.marker_values == ["left", "7", "right"]
    np.testing.assert_array_equal(rec.marker_samples, [50, 90, 120])


# ---------------------------------------------------------------------------- bad input
def test_missing_and_unknown(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_recording(tmp_path / "nope.edf")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match=r"extensions .*got 'notes.txt'"):
        read_recording(tmp_path / "notes.txt")
    with pytest.raises(TypeError, match="'path'"):
        read_recording(3)


@pytest.mark.parametrize("name", ["fake.edf", "fake.fif", "fake.gdf", "fake.xdf", "fake.mat"])
def test_not_a_recording(tmp_path, name):
    path = tmp_path / name
    path.write_text("this is not a recording\n" * 20)
    with pytest.raises(ValueError, match="not a readable"):
        read_recording(path)


def test_truncated_edf(tmp_path, physionet_dir):
    path = tmp_path / "cut.edf"
    path.write_bytes((physionet_dir / "S001R05.edf").read_bytes()[:5000])
    with pytest.raises(ValueError, match="not a readable EDF"):
        read_recording(path)


def test_mat_without_known_layout(tmp_path):
    path = tmp_path / "other.mat"
    scipy.io.savemat(path, {"foo": np.zeros(3)})
    with pytest.raises(ValueError, match=r"not a BCI-competition recording.*\['foo'\]"):
        read_recording(path)


def test_concatenate(bcicomp2003_path, physionet_dir):
    a = read_recording(physionet_dir / "S001R05.edf")
    b = read_recording(physionet_dir / "S001R09.edf")
    ab = concatenate_recordings([a, b])
    assert ab.n_samples == a.n_samples + b.n_samples
    np.testing.assert_array_equal(
        ab.marker_samples, np.r_[a.marker_samples, b.marker_samples + a.n_samples]
    )
    assert ab.marker_values == a.marker_values + b.marker_values
    with pytest.raises(ValueError, match="must share 'ch_names'"):
        concatenate_recordings([a, read_recording(bcicomp2003_path)])
    with pytest.raises(ValueError, match="at least one"):
        concatenate_recordings([])


def test_recording_validation():
    with pytest.raises(ValueError, match="'ch_names'"):
        Recording(data=np.zeros((2, 5)), sfreq=10, ch_names=["a"])
    rec = Recording(
        data=np.zeros((1, 5)), sfreq=10, ch_names=["a"], marker_times=[0.3, 0.1],
        marker_values=["b", "a"],
    )  # fmt: skip
    assert rec.marker_values == ["a", "b"]  # sorted by time


def test_fif_stim_channel_events_become_markers(tmp_path):
    info = mne.create_info(["C3", "C4", "STI 014"], 100.0, ["eeg", "eeg", "stim"])
    data = np.zeros((3, 500))
    data[:2] = np.random.default_rng(0).standard_normal((2, 500)) * 1e-5
    data[2, [50, 51, 52, 300]] = [3, 3, 3, 7]
    raw = mne.io.RawArray(data, info, verbose="error")
    path = tmp_path / "stim_raw.fif"
    raw.save(path, verbose="error")
    rec = read_recording(path)
    assert rec.ch_names == ["C3", "C4"]  # trigger channel left out
    assert rec.marker_values == ["3", "7"]
    np.testing.assert_array_equal(rec.marker_samples, [50, 300])

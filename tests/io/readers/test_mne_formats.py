"""MNE formats: EDF, FIF (annotations, trigger channels), broken files."""

from __future__ import annotations

import mne
import numpy as np
import pytest

from sblr_rt.io import read_recording


def _make_raw(n_times=500, first_samp=0, annotations=True):
    info = mne.create_info(["C3", "Cz", "C4"], 250.0, "eeg")
    data = np.random.default_rng(1).standard_normal((3, n_times)) * 1e-5
    raw = mne.io.RawArray(data, info, first_samp=first_samp, verbose="error")
    if annotations:
        raw.set_annotations(
            mne.Annotations([0.4, 1.0, 1.2], [0.0, 0.5, 0.1], ["left", "BAD_x", "right"])
        )
    return raw


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


def test_truncated_edf(tmp_path, physionet_dir):
    path = tmp_path / "cut.edf"
    path.write_bytes((physionet_dir / "S001R05.edf").read_bytes()[:5000])
    with pytest.raises(ValueError, match="not a readable EDF"):
        read_recording(path)


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


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_edf_cut_short_is_read_as_far_as_it_goes_with_a_warning(
    tmp_path, physionet_dir, caplog, fraction
):
    whole = (physionet_dir / "S001R05.edf").read_bytes()
    path = tmp_path / "cut.edf"
    path.write_bytes(whole[: int(len(whole) * fraction)])
    # the whole file: a header of 16896 bytes, then 125 data records of 1 s
    record_bytes = (len(whole) - 16896) // 125
    n_present = (int(len(whole) * fraction) - 16896) // record_bytes
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path)
    expected = f"truncated: {n_present} of 125 data records present ({n_present} of 125 s)"
    assert len(rec.warnings) == 1 and expected in rec.warnings[0]
    assert str(path) in rec.warnings[0]
    assert any(expected in r.getMessage() and str(path) in r.getMessage() for r in caplog.records)
    assert rec.n_samples == n_present * 160
    full = read_recording(physionet_dir / "S001R05.edf")
    np.testing.assert_allclose(rec.data, full.data[:, : rec.n_samples])
    assert full.warnings == [] and full.gaps == []


def _physionet_excerpt(physionet_dir, seconds=20.0):
    """The first seconds of S001R06 as MNE reads it (file labels such as ``Fc5.``)."""
    raw = mne.io.read_raw_edf(physionet_dir / "S001R06.edf", preload=True, verbose="error")
    return raw.crop(tmax=seconds - 1 / raw.info["sfreq"])


@pytest.mark.parametrize("name", ["x.vhdr", "x.set"])
def test_brainvision_and_eeglab_files_exported_by_mne_are_read(tmp_path, physionet_dir, name):
    raw = _physionet_excerpt(physionet_dir)
    path = tmp_path / name
    mne.export.export_raw(path, raw, verbose="error")
    rec = read_recording(path)
    direct = read_recording(physionet_dir / "S001R06.edf")
    assert rec.ch_names == direct.ch_names  # PhysioNet labels standardised here too
    assert rec.sfreq == 160.0 and rec.n_samples == raw.n_times and rec.unit == "V"
    # BrainVision stores 0.1 uV steps, EEGLAB float32 in uV
    np.testing.assert_allclose(rec.data, direct.data[:, : rec.n_samples], atol=1e-7)
    n = len(raw.annotations)
    # markers as MNE names them: BrainVision's are "Type/Description"
    prefix = "Comment/" if name.endswith(".vhdr") else ""
    assert rec.marker_values == [prefix + v for v in direct.marker_values[:n]] and n >= 4
    np.testing.assert_array_equal(rec.marker_samples, direct.marker_samples[:n])


def test_only_good_eeg_channels_are_kept(tmp_path, caplog):
    names = ["C3", "Cz", "C4", "Pz", "Oz", "HEOG", "EMG1", "GSR", "STI 014"]
    types = ["eeg"] * 5 + ["eog", "emg", "misc", "stim"]
    info = mne.create_info(names, 100.0, types)
    data = np.random.default_rng(2).standard_normal((len(names), 400)) * 1e-5
    data[-1] = 0
    data[-1, 100] = 5
    raw = mne.io.RawArray(data, info, verbose="error")
    raw.info["bads"] = ["Cz", "Oz"]
    path = tmp_path / "types_raw.fif"
    raw.save(path, verbose="error")
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path)
    assert rec.ch_names == ["C3", "C4", "Pz"]
    np.testing.assert_allclose(rec.data, data[[0, 2, 3]], rtol=1e-6)
    assert rec.excluded == {
        "Cz": "bad",
        "Oz": "bad",
        "HEOG": "type eog",
        "EMG1": "type emg",
        "GSR": "type misc",
    }
    assert rec.marker_values == ["5"]  # the trigger channel still gives the events
    text = caplog.text
    assert "5 channels left out" in text and "HEOG (type eog)" in text and "Cz (bad)" in text


def test_a_recording_without_good_eeg_channels_is_refused(tmp_path):
    info = mne.create_info(["C3", "EOG1", "MISC"], 100.0, ["eeg", "eog", "misc"])
    raw = mne.io.RawArray(np.zeros((3, 200)), info, verbose="error")
    raw.info["bads"] = ["C3"]
    path = tmp_path / "noeeg_raw.fif"
    raw.save(path, verbose="error")
    with pytest.raises(ValueError, match=r"no EEG channel to use: .*'eog': 1.*bad: \['C3'\]"):
        read_recording(path)


def test_channels_left_out_are_named_by_their_standard_label(tmp_path, caplog):
    # PhysioNet/BCI2000 labels padded with dots are standardised: the warning names the
    # channel as the recording and the model do (Cz, FC5), never as the file spells it.
    names = ["C3..", "Cz..", "C4..", "Fc5."]
    info = mne.create_info(names, 100.0, "eeg")
    raw = mne.io.RawArray(np.random.default_rng(4).standard_normal((4, 300)) * 1e-5, info,
                          verbose="error")  # fmt: skip
    raw.info["bads"] = ["Cz..", "Fc5."]
    path = tmp_path / "dots_raw.fif"
    raw.save(path, verbose="error")
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path)
    assert rec.ch_names == ["C3", "C4"]
    assert rec.excluded == {"Cz": "bad", "FC5": "bad"}
    assert "Cz (bad), FC5 (bad)" in caplog.text and "Cz.." not in caplog.text


# -- files named outside the recording's folder (issue 37, item 3) -------------------------
def _brainvision(tmp_path, physionet_dir):
    """A BrainVision recording in ``tmp_path/rec``; return its header."""
    folder = tmp_path / "rec"
    folder.mkdir()
    header = folder / "x.vhdr"
    mne.export.export_raw(header, _physionet_excerpt(physionet_dir, 2.0), verbose="error")
    return header


def _set_entry(header, key, value):
    lines = header.read_text().splitlines()
    lines = [f"{key}={value}" if line.startswith(f"{key}=") else line for line in lines]
    header.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("key, suffix", [("DataFile", ".eeg"), ("MarkerFile", ".vmrk")])
def test_a_brainvision_header_naming_a_file_outside_its_folder_is_refused(
    tmp_path, physionet_dir, key, suffix
):
    header = _brainvision(tmp_path, physionet_dir)
    secret = tmp_path / f"secret{suffix}"
    (header.with_suffix(suffix)).rename(secret)  # a well-formed file, one folder up
    _set_entry(header, key, f"../{secret.name}")
    with pytest.raises(ValueError, match=rf"\({key}\) names '.*secret\{suffix}'.*outside"):
        read_recording(header)
    _set_entry(header, key, str(secret))  # an absolute path likewise
    with pytest.raises(ValueError, match=rf"\({key}\) names .*outside"):
        read_recording(header)


def test_a_brainvision_data_file_linked_outside_its_folder_is_refused(tmp_path, physionet_dir):
    header = _brainvision(tmp_path, physionet_dir)
    secret = tmp_path / "secret.eeg"
    header.with_suffix(".eeg").rename(secret)
    header.with_suffix(".eeg").symlink_to(secret)
    with pytest.raises(ValueError, match=r"\(DataFile\) names '.*x\.eeg' \(-> '.*secret\.eeg'\)"):
        read_recording(header)


def test_a_link_to_a_recording_is_read_as_the_recording(tmp_path, physionet_dir):
    (tmp_path / "x.edf").symlink_to(physionet_dir / "S001R05.edf")
    assert read_recording(tmp_path / "x.edf").n_samples == 125 * 160


def test_an_eeglab_data_file_outside_its_folder_is_refused(tmp_path, physionet_dir):
    import scipy.io

    folder = tmp_path / "rec"
    folder.mkdir()
    path = folder / "x.set"
    mne.export.export_raw(path, _physionet_excerpt(physionet_dir, 2.0), verbose="error")
    # keep the samples in a separate .fdt (float32, channels fastest), as EEGLAB can
    fields = {k: v for k, v in scipy.io.loadmat(path).items() if not k.startswith("__")}
    secret = tmp_path / "secret.fdt"
    fields.pop("data").astype(np.float32).T.tofile(secret)
    scipy.io.savemat(path, {**fields, "data": "../secret.fdt"}, appendmat=False)
    with pytest.raises(ValueError, match=r"its data file\) names '.*secret\.fdt'.*outside"):
        read_recording(path)


# -- rates no amplifier gives (issue 37, item 8) -------------------------------------------
def _edf_with_record_seconds(tmp_path, physionet_dir, field: bytes):
    whole = bytearray((physionet_dir / "S001R05.edf").read_bytes())
    whole[244:252] = field.ljust(8)
    path = tmp_path / "fast.edf"
    path.write_bytes(bytes(whole))
    return path


def test_an_edf_declaring_records_of_a_microsecond_is_refused_before_reading(
    tmp_path, physionet_dir
):
    path = _edf_with_record_seconds(tmp_path, physionet_dir, b"0.000001")
    with pytest.raises(ValueError, match=r"records of 1e-06 s .* 1\.6e\+08 Hz.*\(0, 100000\]"):
        read_recording(path)


@pytest.mark.parametrize("field", [b"0", b"-1"])
def test_an_edf_declaring_no_record_duration_is_refused(tmp_path, physionet_dir, field):
    path = _edf_with_record_seconds(tmp_path, physionet_dir, field)
    with pytest.raises(ValueError, match="no usable record duration: expected a positive"):
        read_recording(path)


def test_a_fif_declaring_a_rate_no_amplifier_gives_is_refused(tmp_path):
    info = mne.create_info(["C3", "C4"], 1e6, "eeg")
    raw = mne.io.RawArray(np.zeros((2, 100)), info, verbose="error")
    path = tmp_path / "fast_raw.fif"
    raw.save(path, verbose="error")
    with pytest.raises(ValueError, match=r"rate of 1e\+06 Hz: expected a rate in \(0, 100000\]"):
        read_recording(path)


def test_an_edf_header_claiming_a_hundred_million_records_reads_what_is_there(
    tmp_path, physionet_dir
):
    """Survived issue 37's red team: kept by a test (MNE sizes the data from the file)."""
    whole = bytearray((physionet_dir / "S001R05.edf").read_bytes())
    whole[236:244] = b"99999999"
    path = tmp_path / "huge.edf"
    path.write_bytes(bytes(whole))
    rec = read_recording(path)
    assert rec.n_samples == 125 * 160
    assert "truncated: 125 of 99999999 data records present" in rec.warnings[0]

"""Sidecar -> FIF without LSL: damaged sidecars, atomic FIF, where recover() writes."""

from __future__ import annotations

import os

import mne
import numpy as np
import pytest

from sblr_rt.io import read_recording
from sblr_rt.recorder import Recorder, default_out, read_sidecar, recover


def test_recover_errors_and_a_truncated_sidecar(tmp_path, write_sidecar):
    with pytest.raises(ValueError, match="not a recording sidecar"):
        recover(tmp_path)
    with pytest.raises(ValueError, match=r"'out' must be a \.fif"):
        Recorder(tmp_path / "x.edf")
    out = tmp_path / "y_raw.fif"
    side, data = write_sidecar(out, n=10)
    with pytest.raises(RuntimeError, match="--recover"):  # a complete sidecar is kept
        Recorder(out)
    (side / "eeg.bin").write_bytes(data.tobytes()[:-3])  # a last row cut by a kill
    (side / "markers.jsonl").write_text('{"t": 10.031, "value": "go"}\n{"t": 10.0')
    contents = read_sidecar(side)
    assert contents["data"].shape == (9, 2) and contents["markers"] == [(10.031, "go")]
    got = read_recording(recover(side))
    np.testing.assert_allclose(got.data, data[:9].T * 1e-6)  # microvolts -> volts
    assert got.marker_values == ["go"] and got.marker_samples.tolist() == [3]


def test_recover_writes_next_to_the_sidecar_not_where_the_header_says(tmp_path, write_sidecar):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    here = tmp_path / "here"
    here.mkdir()
    side, _ = write_sidecar(here / "s_raw.fif", header_out=elsewhere / "edited_raw.fif")
    assert default_out(side) == here / "s_raw.fif"
    assert recover(side) == here / "s_raw.fif"
    assert (here / "s_raw.fif").is_file() and not any(elsewhere.iterdir())
    assert recover(side, tmp_path / "chosen_raw.fif") == tmp_path / "chosen_raw.fif"


def test_fif_is_written_atomically(tmp_path, monkeypatch, write_sidecar):
    out = tmp_path / "a_raw.fif"
    side, _ = write_sidecar(out)
    recover(side)
    before = out.read_bytes()

    def crash(self, fname, *args, **kwargs):  # a kill in the middle of the write
        with open(fname, "wb") as f:
            f.write(b"half a FIF")
        raise OSError("disk full")

    monkeypatch.setattr(mne.io.BaseRaw, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        recover(side, overwrite=True)
    assert out.read_bytes() == before  # the previous file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_raw.fif", side.name]


def test_half_deleted_sidecar_is_recovered_and_does_not_block(tmp_path, caplog, write_sidecar):
    out = tmp_path / "h_raw.fif"
    side, data = write_sidecar(out)
    os.remove(side / "eeg_ts.bin")  # a kill in the middle of deleting the sidecar
    contents = read_sidecar(side)
    assert contents["missing"] == ["eeg_ts.bin"]
    got = read_recording(recover(side))  # as far as possible: timestamps from the rate
    np.testing.assert_allclose(got.data, data.T * 1e-6)
    assert got.marker_values == ["go", "stop"] and got.marker_samples.tolist() == [3, 20]
    # a new recording to the same name is not blocked, and says what it did
    recorder = Recorder(out, overwrite=True)
    assert not side.exists() and "incomplete" in recorder.note
    (aside,) = tmp_path.glob("h_raw.fif.rec.incomplete-*")
    assert default_out(aside) == out
    assert "incomplete" in caplog.text
    # a sidecar with its header gone and nothing else: removed
    side.mkdir()
    (side / "eeg.bin").write_bytes(b"")
    assert "removed" in Recorder(out, overwrite=True).note and not side.exists()
    # a recording killed before its first flush: a header, empty files, nothing to keep
    write_sidecar(out, n=0)
    assert "no sample" in Recorder(out, overwrite=True).note and not side.exists()
    # what a kill during Recorder.stop()'s deletion leaves: swept away
    doomed = side.with_name(side.name + ".deleting")
    doomed.mkdir()
    (doomed / "eeg.bin").write_bytes(b"123")
    assert "half deleted" in Recorder(out, overwrite=True).note and not doomed.exists()


# -- hostile sidecars (issue 37, items 3 and 13) -------------------------------------------
@pytest.mark.parametrize("sfreq", [1e300, 0.0, None])
def test_a_sidecar_declaring_a_rate_no_amplifier_gives_is_refused(tmp_path, write_sidecar, sfreq):
    import json

    side, _ = write_sidecar(tmp_path / "s_raw.fif")
    header = json.loads((side / "header.json").read_text())
    (side / "header.json").write_text(json.dumps({**header, "sfreq": sfreq}))
    with pytest.raises(ValueError, match=r"sidecar header '.*header\.json' declares a samp"):
        recover(side)


def test_a_sidecar_file_linked_out_of_the_sidecar_is_refused(tmp_path, write_sidecar):
    side, _ = write_sidecar(tmp_path / "s_raw.fif")
    secret = tmp_path / "secret.bin"
    (side / "eeg.bin").rename(secret)
    (side / "eeg.bin").symlink_to(secret)
    with pytest.raises(ValueError, match=r"\(eeg\.bin\) names '.*eeg\.bin' \(-> '.*secret\.bin"):
        recover(side)

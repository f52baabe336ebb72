"""XDF: the EEG stream and every marker stream, merged in time."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from sblr_rt.io import read_recording


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
        types = s.get("types", [""] * len(s["labels"]))
        chans = "".join(
            f"<channel><label>{lab}</label><unit>{s.get('unit', '')}</unit>"
            f"<type>{kind}</type></channel>"
            for lab, kind in zip(s["labels"], types, strict=True)
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


def _eeg_xdf(path, stamps, *, sfreq=100.0, cues=()):
    n = len(stamps)
    samples = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    streams = [
        {"name": "Amp", "type": "EEG", "srate": sfreq, "fmt": "float32", "labels": ["C3", "C4"],
         "unit": "microvolts", "stamps": stamps, "samples": samples},
    ]  # fmt: skip
    if cues:
        streams.append(
            {"name": "Cues", "type": "Markers", "srate": 0, "fmt": "string", "labels": ["m"],
             "stamps": [t for t, _ in cues], "samples": [[v] for _, v in cues]}
        )  # fmt: skip
    write_xdf(path, streams)
    return samples


def test_xdf_gap_is_kept_and_warned(tmp_path, caplog):
    t0, sfreq = 5000.0, 100.0
    stamps = t0 + np.r_[np.arange(300), np.arange(500, 800)] / sfreq  # 2 s lost at sample 300
    path = tmp_path / "gap.xdf"
    samples = _eeg_xdf(path, stamps, cues=[(t0 + 1.0, "a"), (t0 + 6.0, "b")])
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path)
    np.testing.assert_array_equal(rec.data, samples.T)  # joined, nothing invented
    assert len(rec.gaps) == 1
    index, seconds = rec.gaps[0]
    assert index == 300 and seconds == pytest.approx(2.0, abs=1e-6)
    np.testing.assert_array_equal(rec.marker_samples, [100, 400])  # cue after the gap
    assert len(rec.warnings) == 1
    message = caplog.records[-1].getMessage()
    assert message == rec.warnings[0] and str(path) in message
    assert "2 s before sample 300 (3.000 s)" in message


def test_xdf_without_gaps_has_none(tmp_path):
    path = tmp_path / "whole.xdf"
    rng = np.random.default_rng(0)
    stamps = 100.0 + np.arange(1000) / 100.0 + rng.uniform(0, 0.004, 1000)  # jitter only
    _eeg_xdf(path, stamps)
    rec = read_recording(path)
    assert rec.gaps == [] and rec.warnings == [] and rec.sfreq == 100.0


@pytest.mark.parametrize("true_rate", [50.0, 94.0, 106.0])
def test_xdf_rate_off_the_declared_one_is_refused(tmp_path, true_rate):
    path = tmp_path / "slow.xdf"
    _eeg_xdf(path, 100.0 + np.arange(600) / true_rate, sfreq=100.0)
    with pytest.raises(ValueError, match=rf"declares 100 Hz .* run at {true_rate:g} Hz"):
        read_recording(path)


def test_xdf_rate_within_tolerance_is_read(tmp_path):
    path = tmp_path / "close.xdf"
    _eeg_xdf(path, 100.0 + np.arange(600) / 97.0, sfreq=100.0)
    assert read_recording(path).sfreq == 100.0


def test_epoch_across_an_xdf_gap_is_rejected(tmp_path):
    from sblr_rt.calibration.concerns import RejectionSettings
    from sblr_rt.calibration.epochs import extract_epochs

    from sblr_rt.preprocessing import Preprocessor

    t0, sfreq = 10.0, 100.0
    stamps = t0 + np.r_[np.arange(1000), np.arange(1200, 2000)] / sfreq  # gap at sample 1000
    cues = [(t0 + t, v) for t, v in [(1, "a"), (3, "b"), (9.5, "a"), (14, "b"), (16, "a")]]
    path = tmp_path / "gap.xdf"
    _eeg_xdf(path, stamps, cues=cues)
    rec = read_recording(path)
    rec.data += np.random.default_rng(0).standard_normal(rec.data.shape)  # not flat
    pre = Preprocessor(ch_names=rec.ch_names, sfreq=sfreq, tmin=0.0, tmax=1.0)
    ep = extract_epochs([rec], pre, None, RejectionSettings(clip_run=None))
    assert ep.rejected["gap"] == 1 and sum(ep.rejected.values()) == 1
    assert [s for _, s in ep.onsets] == [100, 300, 1200, 1400]  # the cue at 9.5 s is gone


def test_xdf_keeps_the_channels_typed_eeg_and_standardises_physionet_labels(tmp_path, caplog):
    n, sfreq, t0 = 200, 100.0, 10.0
    samples = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    path = tmp_path / "typed.xdf"
    write_xdf(
        path,
        [{"name": "BCI2000", "type": "EEG", "srate": sfreq, "fmt": "float32",
          "labels": ["Fc5.", "Cz..", "HEOG", "Trig"], "types": ["EEG", "EEG", "EOG", ""],
          "unit": "microvolts", "stamps": t0 + np.arange(n) / sfreq, "samples": samples}],
    )  # fmt: skip
    with caplog.at_level("WARNING", logger="sblr_rt.io"):
        rec = read_recording(path)
    assert rec.ch_names == ["FC5", "Cz"]
    np.testing.assert_array_equal(rec.data, samples[:, :2].T)
    assert rec.excluded == {"HEOG": "type eog", "TRIG": "type not given"}  # all standardised
    assert "2 channels left out" in caplog.text


def test_xdf_declaring_a_rate_no_amplifier_gives_is_refused(tmp_path):
    path = tmp_path / "fast.xdf"
    _eeg_xdf(path, 100.0 + np.arange(600) / 1e6, sfreq=1e6)
    with pytest.raises(ValueError, match=r"'Amp' .* declares a sampling rate of 1e\+06 Hz"):
        read_recording(path)


def test_xdf_chunk_claiming_an_exabyte_reads_what_is_there(tmp_path):
    """Survived issue 37's red team: kept by a test (no allocation of the claimed size)."""
    path = tmp_path / "huge.xdf"
    samples = _eeg_xdf(path, 100.0 + np.arange(600) / 100.0)
    claim = b"\x08" + struct.pack("<Q", 2**60) + struct.pack("<H", 3) + b"\0" * 16
    path.write_bytes(path.read_bytes() + claim)
    rec = read_recording(path)
    np.testing.assert_array_equal(rec.data, samples.T)

"""XDF: the EEG stream and every marker stream, merged in time."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

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

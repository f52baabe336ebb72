"""``sblr-rt inspect``: the summary of a model file, its JSON header, clean refusals."""

from __future__ import annotations

import json

from sblr_rt.cli import main


def test_inspect_prints_classes_and_channels(model_path, capsys):
    assert main(["inspect", str(model_path), "--channels"]) == 0
    text = capsys.readouterr().out
    assert "classes: ['left', 'right']" in text
    assert "raw channels: C3, Cz, C4" in text


def test_inspect_json_prints_the_header(model_path, capsys):
    assert main(["inspect", str(model_path), "--json"]) == 0
    header = json.loads(capsys.readouterr().out)
    assert header["classes"] == ["left", "right"]


def test_inspect_refuses_a_truncated_file(model_path, tmp_path, capsys):
    bad = tmp_path / "bad.sblr.npz"
    bad.write_bytes(model_path.read_bytes()[:100])
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sblr-rt inspect: error:")
    assert "Traceback" not in err

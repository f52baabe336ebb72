"""``sblr-rt calibrate`` on a real recording: model, report, and clean errors."""

from __future__ import annotations

from sblr_rt.cli import main


def test_calibrate_writes_model_and_report(bcicomp2003_path, tmp_path):
    out = tmp_path / "m.sblr.npz"
    args = ["calibrate", "--recording", str(bcicomp2003_path), "--out", str(out)]
    code = main([*args, "--cv", "3", "--search", "none", "--n-jobs", "1", "--no-progress"])
    assert code == 0 and out.exists()
    assert (tmp_path / "m.report.txt").exists() and (tmp_path / "m.report.png").exists()


def test_calibrate_refuses_a_missing_recording(tmp_path, capsys):
    out = tmp_path / "m.sblr.npz"
    missing = tmp_path / "none.edf"
    assert main(["calibrate", "--recording", str(missing), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "sblr-rt calibrate: error:" in err and "none.edf" in err
    assert not out.exists()

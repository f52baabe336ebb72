"""Where the demo finds its recordings: the checkout, or PhysioNet through MNE."""

from __future__ import annotations

from pathlib import Path

import pytest
from sblr_rt.cli import demo


def test_demo_uses_the_shipped_recordings(physionet_dir):
    assert demo._physionet_folder() == physionet_dir


def test_demo_fetches_the_runs_when_the_recordings_are_absent(
    physionet_dir, tmp_path, monkeypatch, capsys
):
    import mne

    asked = {}

    def load_data(subject, runs, update_path=None):
        asked.update(subject=subject, runs=list(runs))
        return [str(physionet_dir / f"S001R{r:02d}.edf") for r in runs]

    monkeypatch.setattr(demo, "__file__", str(tmp_path / "site-packages/sblr_rt/cli/demo.py"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SBLR_RT_RECORDINGS", raising=False)
    monkeypatch.setattr(mne.datasets.eegbci, "load_data", load_data)
    assert demo._physionet_folder() == physionet_dir
    assert asked == {"subject": 1, "runs": [4, 5, 6, 9, 10]}
    assert "fetching PhysioNet eegmmidb S001 runs 4, 5, 6, 9 and 10" in capsys.readouterr().out


def test_demo_says_what_to_do_when_the_fetch_fails(tmp_path, monkeypatch):
    import mne

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(demo, "__file__", str(tmp_path / "site-packages/sblr_rt/cli/demo.py"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SBLR_RT_RECORDINGS", raising=False)
    monkeypatch.setattr(mne.datasets.eegbci, "load_data", offline)
    with pytest.raises(FileNotFoundError, match="set SBLR_RT_RECORDINGS"):
        demo._physionet_folder()
    assert not Path(tmp_path / "recordings").exists()

"""The demo end to end, headless: real recording, LSL replay in another process, accuracy."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from sblr_rt import load_model
from tests.commands import run_diagnosed


def _run_demo(out, *options):
    """Run ``sblr-rt demo --no-gui --speed 8`` headless into ``out``; return the process."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("DISPLAY", None)
    done = run_diagnosed(
        [sys.executable, "-m", "sblr_rt.cli", "demo", *options, "--no-gui", "--speed", "8",
         "--out", out],
        env=env,
        timeout=400,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


@pytest.mark.lsl
@pytest.mark.slow
@pytest.mark.timeout(420)
def test_demo_headless_reports_accuracy_above_chance(tmp_path):
    out = tmp_path / "demo"
    done = _run_demo(out)
    summary = json.loads((out / "summary.json").read_text())
    # Run 10 holds 15 task cues (both fists / both feet); every one gets a trial decision
    # unless the stream ended first.
    assert summary["trials"] >= 12, summary
    # Above chance with a margin: 10 of 14 or better has p < 0.1 under coin flipping; the
    # calibration's own CV estimate must also be well above 0.5.
    assert summary["accuracy"] >= 0.7, summary
    assert summary["cv_accuracy"] >= 0.7, summary
    assert (out / "model.sblr.npz").is_file()
    assert (out / "calibration.png").is_file()
    assert "accuracy" in done.stdout and "Next:" in done.stdout
    shots = sorted(p.name for p in out.glob("dashboard*.png"))
    assert shots, "the headless demo writes dashboard screenshots"
    assert "dashboard-live.png: the Live tab connected to 'SBLR-Demo-" in done.stdout


@pytest.mark.lsl
@pytest.mark.slow
@pytest.mark.timeout(420)
def test_demo_from_the_shipped_prior_decides_from_the_first_trial(tmp_path):
    out = tmp_path / "prior"
    done = _run_demo(out, "--prior")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["prior"] == "physionet-eegmmidb-left-right"
    assert summary["trials"] >= 12, summary  # run 4: 15 cues of left or right fist
    first = next(line for line in done.stdout.splitlines() if "trial  1:" in line)
    assert "model v0, 100% prior" in first  # no calibration: the prior decides trial 1
    assert "No calibration: the shipped prior" in done.stdout
    (session,) = (out / "sessions").iterdir()
    versions = session / "versions"
    assert (versions / "v0000.sblr.npz").is_file()  # the session's start
    # the demo's model is the adapted one, named in its output and its summary
    adapted = Path(summary["adapted_model"])
    assert adapted.parent == versions and adapted.name != "v0000.sblr.npz"
    assert f"adapted model: version {int(adapted.name[1:5])} ({adapted})" in done.stdout
    assert (out / "model.sblr.npz").read_bytes() == adapted.read_bytes()
    assert "ERROR" not in done.stdout + done.stderr
    assert "dashboard-live.png: the Live tab connected to 'SBLR-Demo-" in done.stdout
    # the last refit, over all the session's trials, was waited for: from 10 trials on the
    # person's own model joins the prior's (PriorSettings.auto_min_trials)
    final = load_model(adapted)
    assert final.metadata["adaptation"]["n_session_trials"] == summary["trials"]
    assert summary["features"] == final.features
    assert final.features == ("ensemble" if summary["trials"] >= 10 else "covariance")

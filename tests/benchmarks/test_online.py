"""The online benchmark still runs (tiny settings, no LSL; timings are not asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "online.py"


def test_online_benchmark_smoke(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_online", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ["--no-live", "--sizes", "8x128", "--reps", "20", "--ranks", "1"]
    assert module.main(argv) == 0
    out = capsys.readouterr().out
    assert "== 8 ch / 128 Hz, waveform r=1" in out and "threadpool_limits(1)" in out
    # Every feature path and the default ensemble printed its targets, the ensemble its cost
    # against one model; the cost table has a row per configuration.
    assert out.count("target step p99 < 200 us") == 5
    assert "against one model (waveform r=1): 8 ch / 128 Hz" in out
    table = out.split("Cost against channels and rate")[1]
    assert sum(line.strip().startswith("spectral") for line in table.splitlines()) == 5
    report = (tmp_path / "reports" / "online.md").read_text(encoding="utf-8")  # conftest
    assert report.count("| waveform r=1 |") == 1 and "| spectral r=1 |" in report
    assert "| covariance r=1 |" in report and "| default ensemble" in report

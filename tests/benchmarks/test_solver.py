"""The solver benchmark still runs (smallest settings; timings are not asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "solver.py"


def test_solver_benchmark_smoke(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_solver", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--sizes", "20", "--repeats", "1", "--no-peers"]) == 0
    out = capsys.readouterr().out
    assert "num_threads=" in out and "(20,20)" in out and "svd_gradient" in out
    report = (tmp_path / "reports" / "solver.md").read_text(encoding="utf-8")  # conftest
    assert "| l2-dominated | svd_gradient | (20, 20) |" in report

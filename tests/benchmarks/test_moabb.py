"""benchmarks/moabb.py is the command line of the package's MOABB recipe."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "moabb.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_moabb", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_runs_the_package_pipeline(capsys):
    from sblr_rt.calibration import moabb

    bench = _module()
    assert bench.SelectedSBLR is moabb.SelectedSBLR
    assert bench.evaluate is moabb.evaluate
    with pytest.raises(SystemExit) as exc:
        bench.main(["--help"])
    assert exc.value.code == 0
    assert "--dataset" in capsys.readouterr().out

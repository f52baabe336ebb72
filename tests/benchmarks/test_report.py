"""The benchmarks' documentation reports (benchmarks/_report.py)."""

from __future__ import annotations

import os

import pytest

from benchmarks._report import Table, write_report


def test_write_report_tables_and_provenance(tmp_path):
    table = Table(["path", "p99"], [["waveform", "19 µs"], ["a | b", 3]], caption="Steps.")
    path = write_report(
        "online", table, notes="Set-up: 118 channels.", command="python benchmarks/online.py"
    )
    assert path == tmp_path / "reports" / "online.md"  # SBLR_RT_REPORTS, from conftest
    text = path.read_text(encoding="utf-8")
    assert "Steps.\n\n| path | p99 |\n|---|---|\n| waveform | 19 µs |\n| a \\| b | 3 |\n" in text
    assert "Set-up: 118 channels." in text
    for field in ("command", "date", "machine", "BLAS", "software"):
        assert f"* - {field}\n" in text
    assert "`python benchmarks/online.py`" in text
    assert f"{os.cpu_count()} CPUs" in text and "sblr-rt " in text


def test_write_report_default_command_and_folder(tmp_path):
    path = write_report("solver", Table(["a"], [[1]]), folder=tmp_path / "x", blas="1 thread")
    text = path.read_text(encoding="utf-8")
    assert path.parent == tmp_path / "x"
    assert "`python " in text and "1 thread (process: " in text


def test_write_report_refuses_bad_input(tmp_path):
    with pytest.raises(ValueError, match="row 0 of the table has 1 cells, the header 2"):
        Table(["a", "b"], [[1]])
    with pytest.raises(TypeError, match="at least one Table"):
        write_report("solver")
    with pytest.raises(ValueError, match="'name' must be a plain name"):
        write_report("../solver", Table(["a"], [[1]]))

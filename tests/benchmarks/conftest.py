"""Benchmarks run in a test write their documentation reports to a temporary folder."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _reports_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setenv("SBLR_RT_REPORTS", str(tmp_path / "reports"))

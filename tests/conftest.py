"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Keep LSL discovery on this machine and quiet.
os.environ.setdefault("LSLAPICFG", str(Path(__file__).with_name("lsl_api.cfg")))

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
PHYSIONET = RECORDINGS / "physionet-eegmmidb-S001"
BCICOMP2003 = RECORDINGS / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"


@pytest.fixture
def source_id(request) -> str:
    """Return an LSL ``source_id`` unique to this test run and test."""
    return f"sblr-test-{request.node.name[:40]}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def recordings_dir() -> Path:
    """Return the folder of shipped sample recordings."""
    return RECORDINGS


@pytest.fixture(scope="session")
def physionet_dir() -> Path:
    """Return the folder of the shipped PhysioNet runs (S001 runs 5, 6, 9, 10)."""
    return PHYSIONET


@pytest.fixture(scope="session")
def bcicomp2003_path() -> Path:
    """Return the shipped BCI Competition 2003 IV ``.mat`` file."""
    return BCICOMP2003

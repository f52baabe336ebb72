"""The lower layers load neither Qt nor LSL, and the library imports no upper layer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN_QT = ("PyQt5", "pyqtgraph", "PySide6", "PyQt6")
FORBIDDEN_LSL = ("pylsl",)
FORBIDDEN_UPPER = ("calibration", "gui")


def _loaded_after_import(module: str) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "module",
    [
        "sblr_rt",
        "sblr_rt.model",
        "sblr_rt.preprocessing",
        "sblr_rt.pipeline",
        "sblr_rt.io.model_file",
        "sblr_rt.online.classifier",
        "sblr_rt.stream.ring_buffer",
    ],
)
def test_model_and_preprocessing_load_no_qt_no_lsl(module):
    loaded = _loaded_after_import(module)
    assert not loaded & set(FORBIDDEN_QT), f"{module} loaded Qt: {loaded & set(FORBIDDEN_QT)}"
    assert not loaded & set(FORBIDDEN_LSL), f"{module} loaded pylsl"
    assert not loaded & set(FORBIDDEN_UPPER), f"{module} loaded {loaded & set(FORBIDDEN_UPPER)}"


@pytest.mark.parametrize("module", ["sblr_rt.stream", "sblr_rt.online", "sblr_rt.cli"])
def test_library_loads_no_qt_and_no_upper_layer(module):
    loaded = _loaded_after_import(module)
    assert not loaded & set(FORBIDDEN_QT), f"{module} loaded Qt"
    assert not loaded & set(FORBIDDEN_UPPER), f"{module} loaded {loaded & set(FORBIDDEN_UPPER)}"


def test_calibration_loads_no_qt():
    loaded = _loaded_after_import("calibration")
    assert not loaded & set(FORBIDDEN_QT)
    assert "gui" not in loaded

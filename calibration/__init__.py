"""Calibration: labelled epochs from streams or files -> selected, trained, saved model.

Examples
--------
>>> from calibration import calibrate  # doctest: +SKIP
>>> model = calibrate("S001R06.edf", classes=["T1", "T2"], features="bandpower")  # doctest: +SKIP
>>> model.save("model.sblr.npz")  # doctest: +SKIP
"""

from sblr_rt.calibration.config import CalibrationConfig, load_config
from sblr_rt.calibration.core import build_preprocessor, calibrate
from sblr_rt.calibration.epochs import EpochSet, extract_epochs
from sblr_rt.calibration.selection import make_splits, paper_param_grid, penalty_grid, select

__all__ = [
    "CalibrationConfig",
    "EpochSet",
    "build_preprocessor",
    "calibrate",
    "extract_epochs",
    "load_config",
    "make_splits",
    "paper_param_grid",
    "penalty_grid",
    "select",
]

"""Calibration: labelled epochs from streams or files -> selected, trained, saved model.

Examples
--------
>>> from sblr_rt.calibration import load_config
>>> config = load_config(classes={"T1": "fists", "T2": "feet"}, tmin=0.5, tmax=3.5)
>>> config.preprocessing.features, config.epochs.classes
('auto', (('T1', 'fists'), ('T2', 'feet')))

:func:`calibrate` takes that configuration (or the same keywords) and the recordings; its
example calibrates on the shipped PhysioNet runs and saves the model.
"""

from sblr_rt.calibration.config import CalibrationConfig, load_config
from sblr_rt.calibration.core import build_preprocessor, calibrate
from sblr_rt.calibration.epochs import EpochSet, extract_epochs
from sblr_rt.calibration.prior import PriorSettings, adapt_prior, build_prior
from sblr_rt.calibration.search import make_splits
from sblr_rt.calibration.selection import paper_param_grid, penalty_grid, select

__all__ = [
    "CalibrationConfig",
    "EpochSet",
    "PriorSettings",
    "adapt_prior",
    "build_preprocessor",
    "build_prior",
    "calibrate",
    "extract_epochs",
    "load_config",
    "make_splits",
    "paper_param_grid",
    "penalty_grid",
    "select",
]

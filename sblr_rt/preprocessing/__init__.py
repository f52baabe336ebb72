"""From a raw window at the source rate to the model's input: one object, offline and online.

The same code runs on epochs during calibration and on windows in the online loop.
"""

from .preprocessor import (
    FEATURES,
    SCALINGS,
    Preprocessor,
    StreamingFilter,
    apply_scaling,
    design_fir,
    fit_scaling,
    resampling_matrix,
)

__all__ = [
    "FEATURES",
    "SCALINGS",
    "Preprocessor",
    "StreamingFilter",
    "apply_scaling",
    "design_fir",
    "fit_scaling",
    "resampling_matrix",
]

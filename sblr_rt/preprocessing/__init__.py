"""From a raw window at the source rate to the model's input: one object, offline and online.

The same code runs on epochs during calibration and on windows in the online loop.
Modules: :mod:`.filters` (FIR design, the streaming engine), :mod:`.operators` (the
waveform path's matrices), :mod:`.scaling` (the one scaling rule), :mod:`.features` (one
class per feature path) and :mod:`.preprocessor` (the object that ties them together).
"""

from sblr_rt.preprocessing._checks import PARAMETER_RULES
from sblr_rt.preprocessing.features import (
    FEATURE_PATHS,
    FEATURES,
    BandpowerPath,
    FeaturePath,
    WaveformPath,
)
from sblr_rt.preprocessing.filters import StreamingFilter, design_fir
from sblr_rt.preprocessing.operators import resampling_matrix
from sblr_rt.preprocessing.preprocessor import Preprocessor
from sblr_rt.preprocessing.scaling import SCALINGS, apply_scaling, fit_scaling
from sblr_rt.preprocessing.transformers import (
    FeatureScaler,
    FeatureTransform,
    FilterBank,
    SpatialStage,
    make_steps,
)

__all__ = [
    "FEATURES",
    "FEATURE_PATHS",
    "PARAMETER_RULES",
    "SCALINGS",
    "BandpowerPath",
    "FeaturePath",
    "FeatureScaler",
    "FeatureTransform",
    "FilterBank",
    "Preprocessor",
    "SpatialStage",
    "StreamingFilter",
    "WaveformPath",
    "apply_scaling",
    "design_fir",
    "fit_scaling",
    "make_steps",
    "resampling_matrix",
]

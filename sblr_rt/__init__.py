"""sblr-rt: real-time BCI classification with sparse bilinear logistic regression.

One installed namespace. The core lives here: the model, preprocessing, the model file and
recordings, streams, the online loop, recording and playback. Above it, in their own
folders, come ``sblr_rt.calibration`` (``calibration/``), ``sblr_rt.gui`` (``gui/``) and
the command line ``sblr_rt.cli`` (``cli/``); the core imports none of them, and importing
the package itself loads neither LSL nor Qt (``tests/test_layering.py`` proves both).

Examples
--------
>>> import sblr_rt
>>> sblr_rt.SparseBilinearLogisticRegression(rank=2)
SparseBilinearLogisticRegression(rank=2)
"""

import importlib
import logging
import multiprocessing

from sblr_rt.utils._renamed import install_moved_modules

__version__ = "0.1.0"

logger = logging.getLogger("sblr_rt")

# Public names, loaded on first use so that ``import sblr_rt`` stays light.
_LAZY = {
    "SparseBilinearLogisticRegression": "sblr_rt.model",
    "ZeroTrapWarning": "sblr_rt.model",
    "l1_penalty_max": "sblr_rt.model",
    "OnlineClassifier": "sblr_rt.online",
    "OnlineLoop": "sblr_rt.online",
    "BCIModel": "sblr_rt.bci_model",
    "SingleModel": "sblr_rt.bci_model",
    "EnsembleModel": "sblr_rt.bci_model",
    "Preprocessor": "sblr_rt.preprocessing",
    "load_model": "sblr_rt.io.model_file",
    "save_model": "sblr_rt.io.model_file",
    "read_recording": "sblr_rt.io.reading",
}

__all__ = ["__version__", "logger", *_LAZY]

# Modules that moved are still imported by their old paths, with a DeprecationWarning.
install_moved_modules()

# A worker process that runs this package's tasks (joblib's calibration workers) ends when
# the process that started it does, even if that one was killed (sblr_rt.lifetime).
if multiprocessing.parent_process() is not None:
    from sblr_rt.lifetime import watch_parent

    watch_parent()


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sblr_rt' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

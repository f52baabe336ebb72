"""sblr-rt: real-time BCI classification with sparse bilinear logistic regression.

The library layer: the model, preprocessing, streams, the online loop, replay, the
simulator and the command line. It imports neither ``calibration`` nor ``gui``.
"""

import logging

__version__ = "0.1.0"

logger = logging.getLogger("sblr_rt")

__all__ = ["__version__", "logger"]

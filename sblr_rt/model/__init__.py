"""Sparse bilinear logistic regression: estimator, datafits, penalties and solver.

Imports numpy, scipy and scikit-learn only (no LSL, no Qt).
"""

from .estimator import SparseBilinearLogisticRegression, ZeroTrapWarning
from .factors import canonical_factors, spatial_patterns
from .penalties import ElasticNet, soft_threshold
from .thresholds import l1_penalty_max, lambda_max

__all__ = [
    "ElasticNet",
    "SparseBilinearLogisticRegression",
    "ZeroTrapWarning",
    "canonical_factors",
    "l1_penalty_max",
    "lambda_max",
    "soft_threshold",
    "spatial_patterns",
]

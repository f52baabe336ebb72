"""Sparse bilinear logistic regression: estimator, datafits, penalties and solver.

Imports numpy, scipy and scikit-learn only (no LSL, no Qt).
"""

from sblr_rt.model.estimator import SparseBilinearLogisticRegression, ZeroTrapWarning
from sblr_rt.model.factors import canonical_factors, spatial_patterns
from sblr_rt.model.penalties import ElasticNet, soft_threshold
from sblr_rt.model.thresholds import l1_penalty_max, lambda_max

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

"""The l1 penalties above which the starting point collapses to zero (the zero trap).

Grids of ``mu1``/``nu1`` are best placed as fractions of :func:`l1_penalty_max`.
"""

from __future__ import annotations

import numpy as np
from sklearn.preprocessing import LabelEncoder

from sblr_rt.model._fitting import (
    check_X,
    class_problems,
    cold_start,
    l1_max,
    moments,
    standardise,
)
from sblr_rt.model.solver import single_threaded_blas

__all__ = ["l1_penalty_max", "lambda_max"]


def l1_penalty_max(X, y, *, rank=1, multi_class="ovr", init="svd", random_state=None):
    """Return the l1 penalties above which the starting point collapses to zero.

    ``mu1_max`` is the sup-norm of the loss gradient with respect to U at ``U = 0`` with V
    at its starting value and the intercept at its class-prior optimum; it is the smallest
    ``mu1`` for which ``U = 0`` solves the (convex) U-block at the start, after which the
    solver cannot leave zero (the zero trap). ``nu1_max`` is the same for V with U at its
    start. Grids of ``mu1``/``nu1`` are best placed as fractions of these values. Like the
    estimator's penalties they are those of the standardised data (X divided by its RMS),
    the same for X in volts or in microvolts.

    Parameters
    ----------
    X : array-like, shape (n_epochs, n_channels, n_times)
        Training epochs (or 2-D, read as (n_epochs, n_features, 1)).
    y : array-like, shape (n_epochs,)
        Labels.
    rank : int
        Rank of the model whose start is used.
    multi_class : {"ovr", "multinomial"}
        Problem formulation for three or more classes.
    init : {"svd", "svd_gradient", "random"}
        Starting point, as in the estimator.
    random_state : int | RandomState | None
        Used by ``init="random"``.

    Returns
    -------
    mu1_max : float
        For one-versus-rest, the largest over the class problems (above it every class
        collapses). Computed at the unit-norm start (before the ray scaling of
        ``init="svd_gradient"``), so that values are comparable across starts.
    nu1_max : float
        Same for V.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((20, 4, 5)); y = np.repeat([0, 1], 10)
    >>> mu1_max, nu1_max = l1_penalty_max(X, y)
    >>> mu1_max > 0 and nu1_max > 0
    True
    """
    X, y = check_X(np.asarray(X), estimator=None)[0], np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"'X' and 'y' must have the same number of epochs; got {X.shape[0]} and {y.shape[0]}."
        )
    y_enc = LabelEncoder().fit_transform(y)
    n_classes = int(y_enc.max()) + 1
    if n_classes < 2:
        raise ValueError(f"'y' must contain at least 2 classes; got 1 class: {np.unique(y)}.")
    problems = class_problems(y_enc, n_classes, multi_class)
    X, _ = standardise(X)
    with single_threaded_blas():
        x_mean, Ds = moments(X, problems)
    starts = [cold_start(x_mean, D, rank, init, random_state) for D in Ds]
    vals = l1_max(Ds, [s[0] for s in starts], [s[1] for s in starts])
    return max(v[0] for v in vals), max(v[1] for v in vals)


lambda_max = l1_penalty_max

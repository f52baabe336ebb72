"""The steps of a fit shared by the estimator and the penalty paths.

Private to :mod:`sblr_rt.model`: :class:`~sblr_rt.model.SparseBilinearLogisticRegression`
and :func:`~sblr_rt.model.penalty_path.fit_penalty_paths` both set up the class problems, their
null-model moments and cold starts here, and assemble per-problem solutions into per-class
factors, so the two agree by construction.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from sblr_rt.model.datafit import Logistic, Multinomial
from sblr_rt.model.products import x_times_v
from sblr_rt.model.solver import svd_init

__all__ = [
    "assemble",
    "check_X",
    "class_problems",
    "cold_start",
    "encode_labels",
    "l1_max",
    "moments",
    "null_intercepts",
    "ray_scale",
    "ray_scaled",
    "sample_weights",
    "standardise",
    "unit_scale",
]


def check_X(X, *, estimator=None, y=None, reset=True, ensure_all_finite=True):
    """Validate X (3-D epochs, or 2-D read as (n, n_features, 1)) and y.

    ``ensure_all_finite=False`` leaves the finiteness of X to the caller (the fast route
    checks it on its float32 copy, one pass over X fewer). With ``reset=False`` X must
    also have the fitted estimator's ``n_times_in_`` (scikit-learn checks the channels).
    """
    kwargs = dict(
        dtype=[np.float64, np.float32],
        allow_nd=True,
        order="C",
        ensure_all_finite=ensure_all_finite,
    )
    if estimator is not None:
        if y is None:
            X = validate_data(estimator, X, reset=reset, **kwargs)
        else:
            X, y = validate_data(estimator, X, y, reset=reset, **kwargs)
    if X.ndim == 2:
        # scikit-learn's common checks feed 2-D (n_samples, n_features): each feature is a
        # channel with a single time point, exactly as MNE's decoders read 2-D input.
        X = X[:, :, np.newaxis]
    elif X.ndim != 3:
        raise ValueError(
            "'X' must be a 3-D array (n_epochs, n_channels, n_times) or a 2-D array "
            f"(n_epochs, n_features); got a {X.ndim}-D array of shape {X.shape}."
        )
    n_times = getattr(estimator, "n_times_in_", None) if not reset else None
    if n_times is not None and X.shape[2] != n_times:
        raise ValueError(
            f"X has n_times={X.shape[2]}, but {type(estimator).__name__} was fitted with "
            f"n_times={n_times}; got X of shape {X.shape}."
        )
    return X, y


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Return the classes and the labels as class indices, checked for a classifier.

    Parameters
    ----------
    y : ndarray, shape (n_epochs,)
        Labels of any type scikit-learn accepts for classification.

    Returns
    -------
    classes : ndarray, shape (n_classes,)
        Sorted distinct labels (``classes_``).
    y_enc : ndarray of int, shape (n_epochs,)
        Index of each label in ``classes``.
    """
    check_classification_targets(y)
    le = LabelEncoder()
    y_enc = le.fit_transform(y)
    if le.classes_.size < 2:
        raise ValueError(
            "'y' must contain at least 2 classes for a classifier; got 1 class: "
            f"{le.classes_.tolist()}."
        )
    return le.classes_, y_enc


def data_scale(X, sample_weight=None) -> float:
    """Return the RMS of every entry of X, computed without overflow or underflow.

    One pass without temporaries (a float64 sum of squares) when that sum is safely
    representable, which is all data but values beyond about 1e145 or below 1e-145;
    otherwise the entries are divided by the largest one first. With ``sample_weight``
    (n_epochs,) each epoch's squares count with its weight (a weight of 2 is the epoch
    given twice).
    """
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        return _weighted_scale(X, w / w.mean())
    if X.size:
        flat = X.reshape(-1)
        ss = float(np.einsum("i,i->", flat, flat, dtype=np.float64))
        if 1e-290 < ss < 1e290:
            return float(np.sqrt(ss / X.size))
    top = float(np.max(np.abs(X))) if X.size else 0.0
    if not top > 0 or not np.isfinite(top):
        return top
    return top * float(np.sqrt(np.mean(np.square(X / top, dtype=np.float64))))


def _weighted_scale(X, w):
    # w: mean 1. Epochs of zero weight do not count (as if they were left out).
    keep = w > 0
    Xk, wk = (X, w) if keep.all() else (X[keep], w[keep])
    if not Xk.size:
        return 0.0
    top = float(np.max(np.abs(Xk)))
    if not top > 0 or not np.isfinite(top):
        return top
    flat = (Xk / top).reshape(Xk.shape[0], -1)
    ss = np.einsum("ij,ij->i", flat, flat, dtype=np.float64)
    return top * float(np.sqrt(np.dot(wk, ss) / (X.shape[0] * flat.shape[1])))


#: Data whose RMS is within this relative distance of 1 are fitted as given (no copy): a
#: scale a millionth away changes the penalties by two millionths.
UNIT_TOLERANCE = 1e-6


def unit_scale(rms) -> float:
    """Return the scale the fit divides the data by: ``rms``, or 1.0 for data used as given.

    Data whose RMS is within :data:`UNIT_TOLERANCE` of 1, zero or not finite are fitted
    as given.
    """
    if not (rms > 0 and np.isfinite(rms)) or abs(rms - 1.0) <= UNIT_TOLERANCE:
        return 1.0
    return float(rms)


def standardise(X, *, rms=None, sample_weight=None):
    """Return ``(X / scale, scale)`` with ``scale`` the RMS of X: the data the fit sees.

    The estimator fits standardised data, so that its penalties (and the step-size floor
    ``L_min``) mean the same whatever the unit of X: data in volts, microvolts or unit
    variance give the same model, with the factor U mapped back to the caller's unit
    (``U / scale``). Data already at unit RMS (within :data:`UNIT_TOLERANCE`, as
    calibration's scaled features) are used as given, with ``scale = 1``, and all-zero
    data too.

    Parameters
    ----------
    X : ndarray, shape (n_epochs, n_channels, n_times)
        Training epochs, float32 or float64.
    rms : float | None
        The RMS of X if already known.
    sample_weight : ndarray, shape (n_epochs,) | None
        Epoch weights: the RMS is the weighted one (see :func:`data_scale`).

    Returns
    -------
    X_fit : ndarray, same shape and dtype as X
    scale : float
    """
    if rms is None:
        rms = data_scale(X, sample_weight)
    scale = unit_scale(rms)
    if scale == 1.0:
        return X, 1.0
    return (X / X.dtype.type(scale)).astype(X.dtype, copy=False), scale


def sample_weights(y, sample_weight, class_weight, n_epochs):
    """Return the epochs' weights from ``sample_weight`` and ``class_weight``, or None.

    Parameters
    ----------
    y : ndarray, shape (n_epochs,)
        Labels as given (``class_weight`` keys are labels).
    sample_weight : array-like, shape (n_epochs,) | None
        Non-negative weights, not all zero.
    class_weight : dict | "balanced" | None
        Weight per class; ``"balanced"`` is ``n_epochs / (n_classes * count(class))``, as
        scikit-learn computes it. Multiplies ``sample_weight``.
    n_epochs : int
        Number of epochs.

    Returns
    -------
    weights : ndarray, shape (n_epochs,) | None
        None when both are None.
    """
    weights = None
    if sample_weight is not None:
        weights = _check_sample_weight(
            sample_weight, np.empty((n_epochs, 0)), dtype=np.float64, ensure_non_negative=True
        )
        if not np.any(weights > 0):
            raise ValueError("'sample_weight' must contain at least one non-zero weight.")
    if class_weight is not None:
        per_class = compute_sample_weight(class_weight, y)
        weights = per_class if weights is None else weights * per_class
        if not np.any(weights > 0):
            raise ValueError("the sample weights (with 'class_weight') are all zero.")
    return weights


def class_problems(y_enc, n_classes, multi_class, sample_weight=None):
    """Return the list of (datafit, labels) problems to solve."""
    w = sample_weight
    if n_classes == 2:
        return [Logistic(np.where(y_enc == 1, 1.0, -1.0), w)]
    if multi_class == "ovr":
        return [Logistic(np.where(y_enc == c, 1.0, -1.0), w) for c in range(n_classes)]
    onehot = np.zeros((y_enc.shape[0], n_classes - 1))
    mask = y_enc > 0
    onehot[np.flatnonzero(mask), y_enc[mask] - 1] = 1.0
    return [Multinomial(onehot, w)]


def null_intercepts(datafit):
    """Return the intercept-only optimum and the loss gradient w.r.t. the scores there."""
    w = 1.0 if datafit.w is None else datafit.w[:, None]  # mean 1
    if isinstance(datafit, Logistic):
        p = np.clip(np.mean(w * (datafit.y > 0)), 1e-12, 1 - 1e-12)
        b = np.array([np.log(p / (1 - p))])
    else:
        counts = (w * datafit.y).sum(axis=0)
        n_ref = datafit.n - counts.sum()
        b = np.log(np.clip(counts, 1e-12, None) / max(n_ref, 1e-12))
    _, gs, _ = datafit.loss_grad(np.broadcast_to(b, (datafit.n, b.size)))
    return b, gs


def moments(X, problems):
    """Return the mean epoch and each problem's null-model gradient sums; one pass over X.

    ``D[j] = sum_i g_ij X_i`` (s, t) where ``g_ij`` is the derivative of the loss with
    respect to score ``j`` at zero factors and the class-prior intercept, so that
    ``D V0`` is the gradient with respect to U at ``U = 0``.
    """
    n, s, t = X.shape
    gss = [null_intercepts(df)[1] for df in problems]
    # the (weighted) mean epoch, w_i / n: every problem has the same weights
    mean_weights = np.broadcast_to(problems[0].wn, (n, 1))
    weights = np.concatenate([mean_weights, *gss], axis=1)
    prod = (weights.T.astype(X.dtype) @ X.reshape(n, s * t)).astype(np.float64)
    prod = prod.reshape(-1, s, t)
    out, j = [], 1
    for gs in gss:
        out.append(prod[j : j + gs.shape[1]])
        j += gs.shape[1]
    return prod[0], out


def l1_max(Ds, U0s, V0s):
    """Return per-problem (mu1_max, nu1_max) from null-model gradient sums and starts."""
    out = []
    for D, U0, V0 in zip(Ds, U0s, V0s, strict=True):
        grad_u = np.matmul(D, V0)  # d loss / dU at U = 0
        grad_v = np.matmul(D.transpose(0, 2, 1), U0)  # d loss / dV at V = 0
        out.append((float(np.abs(grad_u).max()), float(np.abs(grad_v).max())))
    return out


def cold_start(x_mean, D, rank, init, random_state):
    """Return the cold start U0 (m, s, r), V0 (m, t, r), b0 = 0 (m,) of one problem.

    ``D`` (m, s, t) are the problem's null gradient sums (:func:`moments`).
    """
    m = D.shape[0]
    s, t = x_mean.shape
    if init == "svd":
        U0, V0 = svd_init(x_mean, rank)
    elif init == "svd_gradient":
        pairs = [svd_init(Dc, rank) for Dc in D]
        return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]), np.zeros(m)
    else:
        rng = check_random_state(random_state)
        U0 = rng.standard_normal((s, rank))
        V0 = rng.standard_normal((t, rank))
        U0 /= np.linalg.norm(U0, axis=0)
        V0 /= np.linalg.norm(V0, axis=0)
    return np.repeat(U0[None], m, axis=0), np.repeat(V0[None], m, axis=0), np.zeros(m)


def ray_scaled(X, problems, starts, pen_u, pen_v):
    """Return the cold starts moved to the best point of their ray (``init="svd_gradient"``)."""
    out = []
    for p, (U0, V0, b0, *_) in zip(problems, starts, strict=True):
        c = ray_scale(X, p, U0, V0, pen_u, pen_v)
        out.append((c * U0, c * V0, b0, None, None))
    return out


def ray_scale(X, datafit, U0, V0, pen_u, pen_v):
    """Return c >= 0 minimising F(c U0, c V0, 0) on a log grid refined by Brent's method.

    Unit-norm factors aligned with the class difference can give scores in the hundreds
    (and a penalty far above the loss) on large epochs; starting on the best point of the
    ray keeps the first proximal steps from shrinking the factors straight to zero.
    """
    m = U0.shape[0]
    A = x_times_v(X, V0)
    base = np.matmul(A, U0.reshape(m, -1, 1))[:, :, 0].T  # scores at c = 1, (n, m)
    l1 = pen_u.l1 * np.abs(U0).sum() + pen_v.l1 * np.abs(V0).sum()
    l2 = 0.5 * (pen_u.l2 * np.vdot(U0, U0) + pen_v.l2 * np.vdot(V0, V0))

    def F(log_a):  # a = c**2
        a = np.exp(log_a)
        return datafit.loss(a * base) + np.sqrt(a) * l1 + a * l2

    spread = max(float(np.abs(base).max()), 1e-300)
    grid = np.log(1.0 / spread) + np.linspace(-12.0, 6.0, 37)
    values = [F(g) for g in grid]
    j = int(np.argmin(values))
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = minimize_scalar(F, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    best = res.x if res.fun <= values[j] else grid[j]
    return float(np.exp(0.5 * best))


def assemble(solutions, n_classes, multi_class):
    """Stack per-problem solver results into per-class U, V, b (reference class zero).

    Returns
    -------
    U : ndarray, shape (n_outputs, n_channels, rank)
    V : ndarray, shape (n_outputs, n_times, rank)
    b : ndarray, shape (n_outputs,)
    n_iter : int | ndarray
    objective : ndarray | list of ndarray
    """
    if n_classes == 2:
        r = solutions[0]
        return r.U, r.V, r.b, r.n_iter, r.objective
    if multi_class == "ovr":
        return (
            np.stack([r.U[0] for r in solutions]),
            np.stack([r.V[0] for r in solutions]),
            np.concatenate([r.b for r in solutions]),
            np.array([r.n_iter for r in solutions]),
            [r.objective for r in solutions],
        )
    r = solutions[0]
    U = np.concatenate([np.zeros((1, *r.U.shape[1:])), r.U])
    V = np.concatenate([np.zeros((1, *r.V.shape[1:])), r.V])
    return U, V, np.concatenate([[0.0], r.b]), r.n_iter, r.objective

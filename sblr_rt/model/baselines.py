"""Baselines of the paper's comparisons, with the estimator's 3-D API.

- :class:`VectorizedLogisticRegression`: logistic regression on ``vec(X)`` (optionally
  ridge-penalised), solved by scikit-learn's lbfgs.
- :class:`SparseLogisticRegression`: l1-regularised logistic regression on ``vec(X)``,
  ``min_w,b 1/n sum log(1 + exp(-y_i (w^T x_i + b))) + alpha |w|_1`` with an unpenalised
  intercept, solved by FISTA with backtracking (Beck and Teboulle 2009) as the paper did,
  or by scikit-learn's liblinear (which also penalises the intercept).
- :class:`BilinearLogisticRegression`: the SBLR estimator with all penalties zero.

Each takes X of shape (n_epochs, n_channels, n_times) (2-D is read as
(n_epochs, n_features, 1)) and any two or more labels; multi-class is one-versus-rest.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from sblr_rt.model._fitting import check_X, encode_labels
from sblr_rt.model.estimator import SparseBilinearLogisticRegression
from sblr_rt.model.penalties import ElasticNet, soft_threshold
from sblr_rt.model.solver import SolverSettings, single_threaded_blas

__all__ = [
    "BilinearLogisticRegression",
    "SparseLogisticRegression",
    "VectorizedLogisticRegression",
    "fista_l1_logistic",
]


def fista_l1_logistic(Xf, y, alpha, *, tol=1e-6, max_iter=5000, eta=2.0):
    """Solve l1-regularised binary logistic regression by FISTA with backtracking.

    Minimises ``mean(log(1 + exp(-y (Xf w + b)))) + alpha |w|_1`` (b unpenalised).

    Parameters
    ----------
    Xf : ndarray, shape (n_samples, n_features)
        Design matrix.
    y : ndarray, shape (n_samples,)
        Labels in {-1, +1}.
    alpha : float
        l1 penalty.
    tol : float
        Stop when the relative change of (w, b) is at most ``tol``.
    max_iter : int
        Maximum number of iterations.
    eta : float
        Backtracking factor.

    Returns
    -------
    w : ndarray, shape (n_features,)
    b : float
    n_iter : int
    """
    n, p = Xf.shape
    y = np.asarray(y, dtype=np.float64)
    w = np.zeros(p)
    b = 0.0
    zw, zb = w.copy(), b
    tk = 1.0
    L = 1e-4
    k = 0

    def loss_grad(wv, bv):
        m = -y * (Xf @ wv + bv)
        g = -y * expit(m) / n
        return float(np.logaddexp(0.0, m).mean()), Xf.T @ g, float(g.sum())

    for k in range(1, max_iter + 1):  # noqa: B007 - k is returned
        f0, gw, gb = loss_grad(zw, zb)
        while True:
            w_new = soft_threshold(zw - gw / L, alpha / L)
            b_new = zb - gb / L
            dw, db = w_new - zw, b_new - zb
            f_new = float(np.logaddexp(0.0, -y * (Xf @ w_new + b_new)).mean())
            bound = f0 + gw @ dw + gb * db + 0.5 * L * (dw @ dw + db * db)
            if f_new <= bound + 1e-12 * (1 + abs(f0)):
                break
            L *= eta
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * tk * tk))
        beta = (tk - 1) / t_new
        zw = w_new + beta * (w_new - w)
        zb = b_new + beta * (b_new - b)
        change = np.sqrt(np.sum((w_new - w) ** 2) + (b_new - b) ** 2)
        scale = 1.0 + np.sqrt(w @ w + b * b)
        w, b, tk = w_new, b_new, t_new
        if change <= tol * scale:
            break
    return w, b, k


class _VectorBase(ClassifierMixin, BaseEstimator):
    """Shared fit/predict for linear models on vec(X) (one-versus-rest)."""

    def __sklearn_tags__(self):
        """Declare 3-D input support."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags

    def _fit_binary(self, Xf, y_pm):  # pragma: no cover - abstract
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on epochs X (n_epochs, n_channels, n_times) and labels y (n_epochs,).

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Epochs.
        y : array-like, shape (n_epochs,)
            Labels.

        Returns
        -------
        self
            The fitted estimator.
        """
        X, y = check_X(X, estimator=self, y=y, reset=True)
        self.classes_, y_enc = encode_labels(y)
        self.n_times_in_ = X.shape[2]
        Xf = X.reshape(X.shape[0], -1).astype(np.float64, copy=False)
        targets = [1] if self.classes_.size == 2 else range(self.classes_.size)
        coefs, intercepts, n_iter = [], [], []
        with single_threaded_blas():
            for c in targets:
                w, b, k = self._fit_binary(Xf, np.where(y_enc == c, 1.0, -1.0))
                coefs.append(w)
                intercepts.append(b)
                n_iter.append(k)
        self.coef_ = np.asarray(coefs)
        self.intercept_ = np.asarray(intercepts, dtype=np.float64)
        self.n_iter_ = np.asarray(n_iter)
        return self

    def decision_function(self, X):
        """Return scores, shape (n_epochs,) for two classes else (n_epochs, n_classes).

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Epochs.

        Returns
        -------
        ndarray
            Positive means ``classes_[1]`` for two classes.
        """
        check_is_fitted(self)
        X, _ = check_X(X, estimator=self, reset=False)
        scores = X.reshape(X.shape[0], -1) @ self.coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict_proba(self, X):
        """Return probabilities (n_epochs, n_classes) (normalised for one-versus-rest)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p1 = expit(scores)
            return np.column_stack([1.0 - p1, p1])
        proba = expit(scores)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Return predicted labels (n_epochs,)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class VectorizedLogisticRegression(_VectorBase):
    """Logistic regression on ``vec(X)``: ``mean logistic loss + alpha / 2 |w|^2``.

    Parameters
    ----------
    alpha : float, default=0.0
        Ridge penalty on the mean-loss scale (0: unpenalised, the paper's baseline).
    tol : float, default=1e-6
        lbfgs tolerance.
    max_iter : int, default=1000
        lbfgs iterations.

    Attributes
    ----------
    coef_ : ndarray, shape (1 or n_classes, n_channels * n_times)
    intercept_ : ndarray, shape (1,) or (n_classes,)
    classes_, n_iter_, n_features_in_, n_times_in_
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, alpha=0.0, *, tol=1e-6, max_iter=1000):
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter

    def _fit_binary(self, Xf, y_pm):
        C = np.inf if self.alpha == 0 else 1.0 / (Xf.shape[0] * self.alpha)
        lr = LogisticRegression(C=C, tol=self.tol, max_iter=self.max_iter).fit(Xf, y_pm)
        return lr.coef_[0], float(lr.intercept_[0]), int(np.max(lr.n_iter_))


class SparseLogisticRegression(_VectorBase):
    """l1-regularised logistic regression on ``vec(X)``.

    ``min mean logistic loss + alpha |w|_1`` (paper eq. 3), the intercept unpenalised.

    Parameters
    ----------
    alpha : float, default=0.01
        l1 penalty on the mean-loss scale (same scale as the SBLR ``mu1``/``nu1``).
    solver : {"fista", "liblinear"}, default="fista"
        FISTA with backtracking (the paper) or scikit-learn's liblinear with
        ``C = 1 / (n alpha)`` (liblinear also penalises the intercept).
    tol : float, default=1e-6
        Relative-change tolerance (FISTA) or liblinear's ``tol``.
    max_iter : int, default=5000
        Iteration cap.

    Attributes
    ----------
    coef_ : ndarray, shape (1 or n_classes, n_channels * n_times)
    intercept_ : ndarray, shape (1,) or (n_classes,)
    classes_, n_iter_, n_features_in_, n_times_in_
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"fista", "liblinear"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, alpha=0.01, *, solver="fista", tol=1e-6, max_iter=5000):
        self.alpha = alpha
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def _fit_binary(self, Xf, y_pm):
        if self.solver == "fista":
            return fista_l1_logistic(Xf, y_pm, self.alpha, tol=self.tol, max_iter=self.max_iter)
        C = 1e12 if self.alpha == 0 else 1.0 / (Xf.shape[0] * self.alpha)
        lr = LogisticRegression(
            C=C,
            l1_ratio=1.0,
            solver="liblinear",
            tol=self.tol,
            max_iter=self.max_iter,
            random_state=0,
        ).fit(Xf, y_pm)
        return lr.coef_[0], float(lr.intercept_[0]), int(np.max(lr.n_iter_))


class BilinearLogisticRegression(SparseBilinearLogisticRegression):
    """Bilinear logistic regression: the SBLR estimator with all penalties zero.

    Parameters
    ----------
    rank : int, default=1
        Number of components.
    multi_class, tol, max_iter, eta, L_min, init, random_state, warm_start, solver, \
class_weight
        As in :class:`~sblr_rt.model.SparseBilinearLogisticRegression`.
    """

    _parameter_constraints: ClassVar[dict] = {
        k: v
        for k, v in SparseBilinearLogisticRegression._parameter_constraints.items()
        if k not in ("mu1", "mu2", "nu1", "nu2")
    }

    def __init__(
        self,
        rank=1,
        *,
        multi_class="ovr",
        tol=SolverSettings.tol,
        max_iter=SolverSettings.max_iter,
        eta=SolverSettings.eta,
        L_min=SolverSettings.L_min,
        init="svd",
        random_state=None,
        warm_start=False,
        solver="paper",
        class_weight=None,
    ):
        self.rank = rank
        self.multi_class = multi_class
        self.tol = tol
        self.max_iter = max_iter
        self.eta = eta
        self.L_min = L_min
        self.init = init
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.class_weight = class_weight

    def _penalties(self):
        return ElasticNet(0.0, 0.0), ElasticNet(0.0, 0.0)

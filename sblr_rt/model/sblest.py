"""SBLEST: sparse Bayesian learning for end-to-end EEG decoding, a baseline.

Written from the equations of W. Wang, F. Qi, D. P. Wipf, C. Cai, T. Yu, Y. Li, Y. Zhang,
Z. Yu and W. Wu, "Sparse Bayesian Learning for End-to-End EEG Decoding", IEEE Transactions
on Pattern Analysis and Machine Intelligence 45(12):15632-15649, 2023: time-delay
embedding, trace-normalised covariances whitened by their training mean and mapped by the
matrix log, a bilinear regression on the labels whose weight columns share one Gaussian
prior covariance, and that covariance and the noise variance learned by the paper's
expectation-maximisation updates (written out in :class:`SBLEST`).

Band-pass filtering is the caller's: SBLEST takes band-passed epochs.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.covariance import oas
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from sblr_rt.model._fitting import check_X, encode_labels
from sblr_rt.model.solver import single_threaded_blas

__all__ = ["SBLEST", "augmented_covariances", "sblest_cost"]

#: Eigenvalues of W kept as filters: those above this fraction of the largest (the paper's).
FILTER_THRESHOLD = 0.05


def _spectral_map(C, fn):
    """Apply ``fn`` to the eigenvalues of the symmetric matrices ``C`` (..., d, d)."""
    w, Q = np.linalg.eigh(C)
    return (Q * fn(w)[..., None, :]) @ np.swapaxes(Q, -1, -2)


def _positive(w):
    """Eigenvalues floored at the smallest normal float (a PSD matrix stays finite)."""
    return np.maximum(w, np.finfo(np.float64).tiny)


def augmented_covariances(X, order, lag, shrinkage=None):
    """Return the trace-normalised covariance of each epoch's time-delay embedding.

    Row block ``k`` (``k = 0 .. order - 1``) of the embedded epoch (``order * n_channels``
    rows, ``n_times`` columns) is the epoch delayed by ``k * lag`` samples, its first
    ``k * lag`` samples zero. The epochs are band-passed, so their mean is not removed:
    the covariance is ``Z Z^T``, divided by its trace.

    Parameters
    ----------
    X : ndarray, shape (n_epochs, n_channels, n_times)
        Band-passed epochs.
    order : int
        Number of delayed copies ``K`` (1: no embedding).
    lag : int
        Delay ``tau`` between copies, in samples.
    shrinkage : None, "oas" or float
        None: the empirical covariance (the paper); "oas": Oracle Approximating Shrinkage;
        a float ``a`` in [0, 1]: ``(1 - a) S + a tr(S) / d I``. Shrinkage keeps the trace,
        so it commutes with the normalisation.

    Returns
    -------
    P : ndarray, shape (n_epochs, order * n_channels, order * n_channels)
        Symmetric positive semi-definite with unit trace (definite with shrinkage, unless
        an epoch is flat; a flat epoch's matrix is zero).
    """
    n_epochs, n_channels, n_times = X.shape
    if (order - 1) * lag >= n_times:
        raise ValueError(
            f"SBLEST with order={order} and lag={lag} needs n_times > {(order - 1) * lag} "
            f"(every delayed copy must hold data); got X of shape {X.shape}."
        )
    Z = np.zeros((n_epochs, order, n_channels, n_times))
    for k in range(order):  # a handful of copies, not a loop over features
        Z[:, k, :, k * lag :] = X[:, :, : n_times - k * lag]
    Z = Z.reshape(n_epochs, order * n_channels, n_times)
    if shrinkage == "oas":
        P = np.stack([oas(z.T, assume_centered=True)[0] for z in Z])
    else:
        P = Z @ Z.transpose(0, 2, 1) / n_times
        if shrinkage:
            d = P.shape[1]
            mu = np.trace(P, axis1=1, axis2=2) / d
            P *= 1.0 - shrinkage
            P[:, np.arange(d), np.arange(d)] += (shrinkage * mu)[:, None]
    trace = np.trace(P, axis1=1, axis2=2)
    return P / np.where(trace > 0, trace, 1.0)[:, None, None]


def sblest_cost(R, column_covariance, noise_variance, y):
    r"""Return :math:`y^\top \Sigma_y^{-1} y + \log|\Sigma_y|` of :class:`SBLEST`.

    :math:`\Sigma_y = \lambda I + \sum_c A_c \Psi A_c^\top`, the negative log marginal
    likelihood up to ``n/2 log(2 pi)`` and a factor 2.

    Parameters
    ----------
    R : ndarray, shape (n_epochs, d, d)
        Whitened, log-mapped features (symmetric).
    column_covariance : ndarray, shape (d, d)
        :math:`\Psi`.
    noise_variance : float
        :math:`\lambda`.
    y : ndarray, shape (n_epochs,)
        Labels in {-1, +1}.

    Returns
    -------
    cost : float
    """
    n = R.shape[0]
    S = R.reshape(n, -1) @ (column_covariance @ R).reshape(n, -1).T
    S[np.diag_indices(n)] += noise_variance
    c, low = linalg.cho_factor(S)
    return float(y @ linalg.cho_solve((c, low), y) + 2.0 * np.sum(np.log(np.diag(c))))


class SBLEST(ClassifierMixin, BaseEstimator):
    r"""Sparse Bayesian learning for end-to-end EEG decoding (Wang et al. 2023).

    Each band-passed epoch :math:`X_m` (C channels, T samples) is embedded with ``order``
    = K copies ``lag`` = :math:`\tau` samples apart, :math:`\hat X_m(t) = [X_m(t);
    X_m(t - \tau); \dots; X_m(t - (K-1)\tau)]` (KC x T, zero before the epoch starts);
    its covariance is normalised by its trace, :math:`P_m = \hat X_m \hat X_m^\top /
    \operatorname{tr}(\hat X_m \hat X_m^\top)`, whitened by the arithmetic mean
    :math:`\bar P` of the training :math:`P_m` and mapped by the matrix log,
    :math:`R_m = \log(\bar P^{-1/2} P_m \bar P^{-1/2})`. The labels :math:`y_m = \pm 1`
    are regressed on :math:`R_m` bilinearly, every column :math:`w_c` of the weight
    matrix W (KC x KC) with the same Gaussian prior:

    .. math::

        y_m = \operatorname{tr}(W^\top R_m) + e_m, \quad e_m \sim N(0, \lambda), \quad
        w_c \sim N(0, \Psi), \quad \operatorname{vec}(W) \sim N(0, I_{KC} \otimes \Psi).

    With :math:`A_c` (n_epochs x KC) holding the c-th columns of the :math:`R_m` as rows,
    :math:`y \sim N(0, \Sigma_y)`, :math:`\Sigma_y = \sum_c A_c \Psi A_c^\top + \lambda
    I`, and :math:`\Psi` and :math:`\lambda` minimise

    .. math::

        \mathcal{L}(\Psi, \lambda) = y^\top \Sigma_y^{-1} y + \log |\Sigma_y|.

    Starting from :math:`\Psi = I`, :math:`\lambda = 1`, each iteration takes the
    posterior of each column, :math:`u_c = \Psi A_c^\top \Sigma_y^{-1} y` and
    :math:`\Phi_c = \Psi - \Psi A_c^\top \Sigma_y^{-1} A_c \Psi`, sets :math:`\hat W =
    (U + U^\top) / 2` (the features are symmetric, so only the symmetric part of W is
    seen) and updates, with :math:`\hat w_c` the columns of :math:`\hat W` and
    :math:`\mathbf{R}` the n_epochs x (KC)^2 matrix of the :math:`\operatorname{vec}(R_m)`,

    .. math::

        \Psi \leftarrow \frac{1}{KC} \sum_c \left(\hat w_c \hat w_c^\top + \Phi_c\right),
        \quad
        \lambda \leftarrow \frac{1}{M} \Big(\|y - \mathbf{R} \operatorname{vec}(\hat W)\|^2
            + \sum_c \operatorname{tr}(\Phi_c A_c^\top A_c)\Big),

    until the relative change of :math:`\mathcal{L}` falls below ``tol`` (the paper's
    2e-4). These are expectation-maximisation updates, so :math:`\mathcal{L}` does not
    increase in practice (``loss_curve_``); the symmetrised columns and the noise
    update's column-by-column posterior covariance are the paper's approximations of
    the exact E-step. The noise variance needs no floor: :math:`\Phi_c` is positive
    semi-definite, so :math:`\lambda` stays above the posterior spread of the fit,
    :math:`\sum_c \operatorname{tr}(\Phi_c A_c^\top A_c) / M > 0`, and it reaches 0 only
    if :math:`\Psi` does, which the residual term then pushes back. An epoch is
    classified by the sign of :math:`\operatorname{tr}(\hat W^\top R)`. The sparsity is
    in the rank: the eigenvectors of :math:`\hat W` are spatio-temporal filters, and
    those whose eigenvalue exceeds 0.05 of the largest in magnitude are kept as
    ``filters_`` (the prediction uses the whole :math:`\hat W`).

    Parameters
    ----------
    order : int, default=2
        Number of delayed copies K, the paper's motor-imagery setting.
    lag : int, default=1
        Delay :math:`\tau` between copies, in samples. The paper chooses it by
        cross-validation on the training set; here it is fixed (1, the paper's
        motor-imagery setting).
    shrinkage : None, "oas" or float in [0, 1], default=None
        Covariance estimate of each embedded epoch: empirical (the paper), Oracle
        Approximating Shrinkage, or shrunk by that fraction to its scaled identity. An
        epoch with fewer samples than K * n_channels needs shrinkage (or a smaller K).
    tol : float, default=2e-4
        Stop when :math:`|\Delta\mathcal{L}| \le` ``tol`` :math:`|\mathcal{L}|` (the
        paper's rule and value).
    max_iter : int, default=5000
        Maximum number of updates.

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
        The labels; ``classes_[1]`` is :math:`y = +1`.
    reference_ : ndarray, shape (K n_channels, K n_channels)
        The whitening reference :math:`\bar P`.
    whitener_ : ndarray, shape (K n_channels, K n_channels)
        :math:`\bar P^{-1/2}`.
    coef_ : ndarray, shape (K n_channels, K n_channels)
        :math:`\hat W` (symmetric).
    filters_ : ndarray, shape (n_filters, K n_channels)
        Eigenvectors of :math:`\hat W` whose eigenvalue exceeds 0.05 of the largest in
        magnitude, by decreasing magnitude; entry ``k * n_channels + i`` weighs channel
        ``i`` delayed by ``k * lag`` samples.
    weights_ : ndarray, shape (n_filters,)
        Their eigenvalues.
    column_covariance_ : ndarray, shape (K n_channels, K n_channels)
        :math:`\Psi`.
    noise_variance_ : float
        :math:`\lambda`.
    loss_curve_ : ndarray, shape (1 + the number of updates,)
        :math:`\mathcal{L}` at the start and after every update.
    n_iter_ : int
        Updates run.
    n_features_in_ : int
        Number of channels.

    Examples
    --------
    >>> import numpy as np
    >>> from sblr_rt.model.sblest import SBLEST
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> X = rng.standard_normal((60, 4, 200))
    >>> X[:, 0] *= np.where(y == 1, 2.0, 1.0)[:, None]  # class 1: more power on channel 0
    >>> clf = SBLEST().fit(X, y)
    >>> clf.coef_.shape
    (8, 8)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "order": [Interval(Integral, 1, None, closed="left")],
        "lag": [Interval(Integral, 1, None, closed="left")],
        "shrinkage": [None, StrOptions({"oas"}), Interval(Real, 0, 1, closed="both")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, order=2, lag=1, *, shrinkage=None, tol=2e-4, max_iter=5000):
        self.order = order
        self.lag = lag
        self.shrinkage = shrinkage
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        """Declare 3-D input support and a binary classifier."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.classifier_tags.multi_class = False
        return tags

    def _tangent(self, P, whitener, shape):
        """Whitened, log-mapped covariances (n_epochs, d, d) of ``P`` from X of ``shape``.

        A flat epoch (every channel zero) gets the log of the smallest normal float on its
        diagonal, as the covariance path does: finite, and far from any real epoch.
        """
        w, Q = np.linalg.eigh(whitener @ P @ whitener)
        flat = np.trace(P, axis1=1, axis2=2) == 0
        bad = np.flatnonzero(~flat & (w[:, 0] <= 1e-12 * np.maximum(w[:, -1], 0.0)))
        if bad.size:
            raise ValueError(
                f"the embedded covariance of epoch {bad[0]} is singular (K n_channels = "
                f"{P.shape[1]} against {shape[2]} samples): set 'shrinkage' (e.g. 'oas') "
                f"or lower 'order'; got order={self.order}, shrinkage={self.shrinkage!r} "
                f"and X of shape {shape}."
            )
        R = (Q * np.log(_positive(w))[:, None, :]) @ Q.transpose(0, 2, 1)
        return (R + R.transpose(0, 2, 1)) / 2  # exactly symmetric: _learn relies on it

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on band-passed epochs X and binary labels y.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Band-passed epochs (2-D is read as (n_epochs, n_channels, 1)).
        y : array-like, shape (n_epochs,)
            Two classes.

        Returns
        -------
        self
            The fitted estimator.
        """
        X, y = check_X(X, estimator=self, y=y, reset=True)
        classes, y_enc = encode_labels(y)
        if classes.size > 2:
            raise ValueError(
                "Only binary classification is supported. SBLEST needs 2 classes in 'y'; "
                f"got {classes.size} classes: {classes.tolist()[:10]}."
            )
        X = X.astype(np.float64, copy=False)
        P = augmented_covariances(X, self.order, self.lag, self.shrinkage)
        reference = P.mean(axis=0)
        whitener = _spectral_map(reference, lambda w: 1.0 / np.sqrt(_positive(w)))
        with single_threaded_blas():
            features = self._tangent(P, whitener, X.shape)
            coef, psi, noise, losses = _learn(
                features, np.where(y_enc == 1, 1.0, -1.0), self.tol, self.max_iter
            )
        eigenvalues, vectors = np.linalg.eigh(coef)
        by_size = np.argsort(-np.abs(eigenvalues), kind="stable")
        eigenvalues, vectors = eigenvalues[by_size], vectors[:, by_size]
        keep = np.abs(eigenvalues) > FILTER_THRESHOLD * np.abs(eigenvalues[0])
        self.classes_ = classes
        self.reference_ = reference
        self.whitener_ = whitener
        self.coef_ = coef
        self.filters_ = vectors[:, keep].T
        self.weights_ = eigenvalues[keep]
        self.column_covariance_ = psi
        self.noise_variance_ = noise
        self.loss_curve_ = np.asarray(losses)
        self.n_iter_ = len(losses) - 1
        return self

    def decision_function(self, X):
        r"""Return :math:`\operatorname{tr}(\hat W^\top R)` for each epoch.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Band-passed epochs; n_times may differ from the training epochs'.

        Returns
        -------
        scores : ndarray, shape (n_epochs,)
            Positive means ``classes_[1]``.
        """
        check_is_fitted(self)
        X, _ = check_X(X, estimator=self, reset=False)
        X = X.astype(np.float64, copy=False)
        P = augmented_covariances(X, self.order, self.lag, self.shrinkage)
        features = self._tangent(P, self.whitener_, X.shape)
        return features.reshape(len(X), -1) @ self.coef_.ravel()

    def predict(self, X):
        """Return the predicted labels (n_epochs,).

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Band-passed epochs.

        Returns
        -------
        labels : ndarray, shape (n_epochs,)
            ``classes_[1]`` where the score is positive, else ``classes_[0]``.
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def _learn(R, y, tol, max_iter):
    """Learn (Psi, lambda) by the updates of :class:`SBLEST`; return W, Psi, lambda, costs.

    ``R`` (n, d, d) holds symmetric features, so column c of ``R[m]`` is its row c:
    ``A_c = R[:, c, :]``, and a product over the epoch axis acts on every A_c at once
    (``R.reshape(n, d * d)``, columns ordered (c, i)). The costs are those of the
    (Psi, lambda) each iteration starts from; W is the posterior mean at the last.
    """
    n, d, _ = R.shape
    flat = R.reshape(n, d * d)
    stacked = R.reshape(n * d, d)  # rows (m, c): A_c's rows, every c
    # C[c] = A_c^T A_c, fixed; sum_c tr(Psi C_c) is tr(Sigma_y) - n lambda
    C = R.transpose(1, 2, 0) @ R.transpose(1, 0, 2)
    psi, noise = np.eye(d), 1.0
    losses, previous = [], None
    for _ in range(max_iter + 1):
        # sum_c A_c Psi A_c^T: entry (m, k) is tr(R_m Psi R_k), all R_m Psi in one product
        sigma_y = (stacked @ psi).reshape(n, d * d) @ flat.T
        sigma_y = (sigma_y + sigma_y.T) / 2
        sigma_y[np.diag_indices(n)] += noise
        L = linalg.cholesky(sigma_y, lower=True, check_finite=False)
        v = linalg.solve_triangular(L, y, lower=True, check_finite=False)
        alpha = linalg.solve_triangular(L, v, lower=True, trans="T", check_finite=False)
        loss = float(v @ v + 2.0 * np.sum(np.log(np.diag(L))))
        losses.append(loss)
        U = psi @ np.tensordot(alpha, R, axes=1)  # column c: Psi A_c^T Sigma_y^-1 y
        W = (U + U.T) / 2
        converged = previous is not None and abs(loss - previous) <= tol * abs(previous)
        if converged or len(losses) == max_iter + 1:
            break
        previous = loss
        # B[m, c, :] = (L^-1 A_c)[m]: sum_c A_c^T Sigma_y^-1 A_c = B^T B over (m, c)
        B = linalg.solve_triangular(L, flat, lower=True, check_finite=False).reshape(n * d, d)
        phi_sum = d * psi - psi @ (B.T @ B) @ psi  # sum_c Phi_c
        # sum_c tr(Psi A_c^T Sigma_y^-1 A_c Psi C_c), with Q_c = L^-1 A_c Psi
        Q = np.ascontiguousarray((B @ psi).reshape(n, d, d).transpose(1, 0, 2))
        spread = np.trace(sigma_y) - n * noise - np.vdot(Q @ C, Q)
        residual = y - flat @ W.ravel()
        psi = (W @ W.T + phi_sum) / d
        psi = (psi + psi.T) / 2
        noise = float(residual @ residual + spread) / n
    return W, psi, noise, losses

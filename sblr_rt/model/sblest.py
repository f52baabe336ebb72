"""SBLEST: sparse Bayesian learning for end-to-end EEG decoding, a baseline.

Written from the equations of W. Wang, F. Qi, D. P. Wipf, C. Cai, T. Yu, Y. Li, Y. Zhang,
Z. Yu and W. Wu, "Sparse Bayesian Learning for End-to-End EEG Decoding", IEEE Transactions
on Pattern Analysis and Machine Intelligence 45(12):15632-15649, 2023: time-delay
embedding, augmented covariances whitened by their training mean and mapped by the matrix
log, a bilinear regression on the labels whose weight matrix has a column-wise sparse
Gaussian prior with a shared covariance, and hyperparameters learned by maximising the
marginal likelihood. The hyperparameter updates are the majorise-minimise (convex bound)
updates written out in :class:`SBLEST`.

Band-pass filtering is the caller's: SBLEST takes band-passed epochs.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.covariance import oas
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from sblr_rt.model._fitting import check_X
from sblr_rt.model.solver import single_threaded_blas

__all__ = ["SBLEST", "augmented_covariances", "sblest_evidence"]


def _spectral_map(C, fn):
    """Apply ``fn`` to the eigenvalues of the symmetric matrices ``C`` (..., d, d)."""
    w, Q = np.linalg.eigh(C)
    return (Q * fn(w)[..., None, :]) @ np.swapaxes(Q, -1, -2)


def _positive(w):
    """Eigenvalues floored at the smallest normal float (a PSD matrix stays finite)."""
    return np.maximum(w, np.finfo(np.float64).tiny)


def augmented_covariances(X, order, lag, shrinkage=None):
    """Return the covariance of each epoch's time-delay embedding.

    Row block ``k`` (``k = 0 .. order - 1``) of the embedded epoch is the epoch delayed by
    ``k * lag`` samples; the first ``(order - 1) * lag`` samples, where a delayed copy has
    no data, are dropped, so every block is real data. The epochs are band-passed, so
    their mean is not removed: the covariance is ``Z Z^T / n_kept``.

    Parameters
    ----------
    X : ndarray, shape (n_epochs, n_channels, n_times)
        Band-passed epochs.
    order : int
        Number of delayed copies ``K`` (1: no embedding).
    lag : int
        Delay ``tau`` between copies, in samples.
    shrinkage : None, "oas" or float
        None: the empirical covariance; "oas": Oracle Approximating Shrinkage; a float
        ``a`` in [0, 1]: ``(1 - a) S + a tr(S) / d I``.

    Returns
    -------
    R : ndarray, shape (n_epochs, order * n_channels, order * n_channels)
        Symmetric positive semi-definite (definite with shrinkage, unless an epoch is flat).
    """
    n_times = X.shape[2]
    n_kept = n_times - (order - 1) * lag
    if n_kept < 1:
        raise ValueError(
            f"SBLEST with order={order} and lag={lag} needs n_times > {(order - 1) * lag}; "
            f"got X of shape {X.shape}."
        )
    start = (order - 1) * lag
    Z = np.concatenate(
        [X[:, :, start - k * lag : start - k * lag + n_kept] for k in range(order)], axis=1
    )
    if shrinkage == "oas":
        return np.stack([oas(z.T, assume_centered=True)[0] for z in Z])
    R = Z @ Z.transpose(0, 2, 1) / n_kept
    if shrinkage:
        d = R.shape[1]
        mu = np.trace(R, axis1=1, axis2=2) / d
        R *= 1.0 - shrinkage
        R[:, np.arange(d), np.arange(d)] += (shrinkage * mu)[:, None]
    return R


def _riemann_mean(R, tol=1e-9, max_iter=100):
    """Return the affine-invariant Riemannian mean of the SPD matrices ``R`` (fixed point)."""
    M = R.mean(axis=0)
    for _ in range(max_iter):
        half = _spectral_map(M, np.sqrt)
        inv_half = _spectral_map(M, lambda w: 1.0 / np.sqrt(w))
        step = _spectral_map(inv_half @ R @ inv_half, lambda w: np.log(_positive(w))).mean(0)
        M = half @ _spectral_map(step, np.exp) @ half
        if np.linalg.norm(step) <= tol:
            break
    return M


def sblest_evidence(K, gamma, noise, y):
    """Return the cost ``y^T S^-1 y + log|S|`` with ``S = noise I + sum_i gamma_i K_i``.

    The negative log marginal likelihood of :class:`SBLEST` (up to ``n/2 log(2 pi)`` and a
    factor 2). ``K`` (d, n, n) holds ``Phi_i B Phi_i^T`` for every column ``i`` of W.
    """
    S = noise * np.eye(y.size) + np.einsum("i,imn->mn", gamma, K)
    c, low = linalg.cho_factor(S)
    return float(y @ linalg.cho_solve((c, low), y) + 2.0 * np.sum(np.log(np.diag(c))))


class SBLEST(ClassifierMixin, BaseEstimator):
    r"""Sparse Bayesian learning for end-to-end EEG decoding (Wang et al. 2023).

    Each band-passed epoch :math:`X_m` (C channels) is embedded with ``order`` = K delayed
    copies ``lag`` = :math:`\tau` samples apart, :math:`\tilde X_m(t) = [X_m(t);
    X_m(t - \tau); \dots; X_m(t - (K-1)\tau)]`, and its augmented covariance
    :math:`\Sigma_m` (KC x KC) is whitened by the mean :math:`\bar\Sigma` of the training
    covariances and mapped to the tangent space, :math:`R_m = \log(\bar\Sigma^{-1/2}
    \Sigma_m \bar\Sigma^{-1/2})`. The labels :math:`y_m = \pm 1` are regressed on
    :math:`R_m` bilinearly, with a Gaussian prior on the columns :math:`w_i` of the weight
    matrix W that shares one covariance B and scales it column by column:

    .. math::

        y_m = \operatorname{tr}(W^\top R_m) + e_m, \quad e_m \sim N(0, \lambda), \quad
        w_i \sim N(0, \gamma_i B), \quad i = 1 \dots KC.

    With :math:`\Phi_i` (n_epochs x KC) the i-th columns of the :math:`R_m` as rows, the
    labels are Gaussian, :math:`y \sim N(0, \Sigma_y)` with :math:`\Sigma_y = \lambda I +
    \sum_i \gamma_i \Phi_i B \Phi_i^\top`, and the hyperparameters minimise

    .. math::

        \mathcal{L}(\gamma, B, \lambda) = y^\top \Sigma_y^{-1} y + \log |\Sigma_y|.

    The posterior mean of W is :math:`\hat w_i = \gamma_i B \Phi_i^\top \Sigma_y^{-1} y`.
    Each iteration bounds :math:`\mathcal{L}` from above at the current point (the data term
    by :math:`\|y - \sum_i \Phi_i \hat w_i\|^2/\lambda + \sum_i \hat w_i^\top B^{-1} \hat
    w_i/\gamma_i`, the concave log-determinant by its tangent) and minimises the bound in
    closed form, so that :math:`\mathcal{L}` never increases (``loss_curve_``):

    .. math::

        \gamma_i \leftarrow \sqrt{\frac{\hat w_i^\top B^{-1} \hat w_i}
            {\operatorname{tr}(B \Phi_i^\top \Sigma_y^{-1} \Phi_i)}}, \quad
        B \leftarrow G^{-1/2} (G^{1/2} M G^{1/2})^{1/2} G^{-1/2}, \quad
        \lambda \leftarrow \sqrt{\frac{\|y - \sum_i \Phi_i \hat w_i\|^2}
            {\operatorname{tr}\Sigma_y^{-1}}},

    with :math:`M = \sum_i \hat w_i \hat w_i^\top / \gamma_i` and :math:`G = \sum_i
    \gamma_i \Phi_i^\top \Sigma_y^{-1} \Phi_i` (the B that solves :math:`B G B = M`).
    Columns whose :math:`\gamma_i` reaches zero leave the model (the sparsity), and
    :math:`W = B \hat V \Gamma` has the rank of B at most. An epoch is classified by the
    sign of :math:`\operatorname{tr}(\hat W^\top R)`.

    Parameters
    ----------
    order : int, default=2
        Number of delayed copies K. The paper's motor-imagery setting is K = 2 (K = 1 when
        its cross-validation picks no delay).
    lag : int, default=1
        Delay :math:`\tau` between copies, in samples. The paper chooses it by 10-fold
        cross-validation on the training set (its example uses 1); 1 is fixed here.
    mean : {"arithmetic", "riemann"}, default="arithmetic"
        The whitening reference: the arithmetic mean of the training covariances (the
        paper) or their affine-invariant Riemannian mean.
    shrinkage : None, "oas" or float in [0, 1], default=None
        Covariance estimate of each embedded epoch: empirical (the paper), Oracle
        Approximating Shrinkage, or shrunk by that fraction to its scaled identity. An
        epoch shorter than K * n_channels samples needs shrinkage.
    noise_floor : float, default=1e-6
        Smallest noise variance :math:`\lambda` (the labels have variance 1). The evidence
        is unbounded when a few columns of W fit the training labels exactly, which they
        can as soon as n_epochs is small against :math:`(KC)^2`: :math:`\lambda \to 0`
        and :math:`\log|\Sigma_y| \to -\infty`. The floor keeps the maximum defined; it
        is not in the paper.
    tol : float, default=1e-5
        Stop when :math:`\mathcal{L}` decreases by at most ``tol * max(1, |L|)``.
    max_iter : int, default=5000
        Maximum number of iterations (the paper's).

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
        The labels; ``classes_[1]`` is :math:`y = +1`.
    reference_ : ndarray, shape (K n_channels, K n_channels)
        The whitening reference :math:`\bar\Sigma`.
    whitener_ : ndarray, shape (K n_channels, K n_channels)
        :math:`\bar\Sigma^{-1/2}`.
    coef_ : ndarray, shape (K n_channels, K n_channels)
        The posterior mean :math:`\hat W`.
    relevance_ : ndarray, shape (K n_channels,)
        :math:`\gamma`, normalised so that ``trace(column_covariance_) = K n_channels``.
    column_covariance_ : ndarray, shape (K n_channels, K n_channels)
        B.
    noise_variance_ : float
        :math:`\lambda`.
    loss_curve_ : ndarray, shape (1 + the number of iterations,)
        :math:`\mathcal{L}` at the start and after every iteration (non-increasing).
    n_iter_ : int
        Iterations run.
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
        "mean": [StrOptions({"arithmetic", "riemann"})],
        "shrinkage": [None, StrOptions({"oas"}), Interval(Real, 0, 1, closed="both")],
        "noise_floor": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        order=2,
        lag=1,
        *,
        mean="arithmetic",
        shrinkage=None,
        noise_floor=1e-6,
        tol=1e-5,
        max_iter=5000,
    ):
        self.order = order
        self.lag = lag
        self.mean = mean
        self.shrinkage = shrinkage
        self.noise_floor = noise_floor
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        """Declare 3-D input support and a binary classifier."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.classifier_tags.multi_class = False
        return tags

    def _tangent(self, X, whitener):
        """Whitened, log-mapped augmented covariances (n_epochs, d, d).

        A flat epoch (every channel zero) gets the log of the smallest normal float on its
        diagonal, as the covariance path does: finite, and far from any real epoch.
        """
        R = augmented_covariances(X, self.order, self.lag, self.shrinkage)
        w, Q = np.linalg.eigh(whitener @ R @ whitener)
        flat = np.trace(R, axis1=1, axis2=2) == 0
        bad = np.flatnonzero(~flat & (w[:, 0] <= 1e-12 * np.maximum(w[:, -1], 0.0)))
        if bad.size:
            raise ValueError(
                f"the augmented covariance of epoch {bad[0]} is singular (K n_channels = "
                f"{R.shape[1]} against {X.shape[2] - (self.order - 1) * self.lag} samples): "
                f"set 'shrinkage' (e.g. 'oas'); got shrinkage={self.shrinkage!r} and X of "
                f"shape {X.shape}."
            )
        return (Q * np.log(_positive(w))[:, None, :]) @ Q.transpose(0, 2, 1)

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
        check_classification_targets(y)
        le = LabelEncoder()
        y_enc = le.fit_transform(y)
        if le.classes_.size > 2:
            raise ValueError(
                "Only binary classification is supported. SBLEST needs 2 classes in 'y'; "
                f"got {le.classes_.size} classes: {le.classes_.tolist()[:10]}."
            )
        if le.classes_.size < 2:
            raise ValueError(
                f"'y' must contain 2 classes for SBLEST; got 1 class: {le.classes_.tolist()}."
            )
        X = X.astype(np.float64, copy=False)
        R = augmented_covariances(X, self.order, self.lag, self.shrinkage)
        reference = R.mean(axis=0) if self.mean == "arithmetic" else _riemann_mean(R)
        whitener = _spectral_map(reference, lambda w: 1.0 / np.sqrt(_positive(w)))
        with single_threaded_blas():
            features = self._tangent(X, whitener)
            coef, gamma, B, noise, losses = _maximise_evidence(
                features,
                np.where(y_enc == 1, 1.0, -1.0),
                self.tol,
                self.max_iter,
                self.noise_floor,
            )
        self.classes_ = le.classes_
        self.reference_ = reference
        self.whitener_ = whitener
        self.coef_ = coef
        self.relevance_ = gamma
        self.column_covariance_ = B
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
        features = self._tangent(X.astype(np.float64, copy=False), self.whitener_)
        return np.einsum("mij,ij->m", features, self.coef_)

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


def _maximise_evidence(R, y, tol, max_iter, noise_floor):
    """Learn (gamma, B, lambda) by the bound minimisation of :class:`SBLEST`.

    ``R`` (n, d, d) holds symmetric features, so ``Phi_i = R[:, i, :]``. Returns the
    posterior mean W (d, d), gamma (d,), B (d, d), lambda and the cost after every step.
    """
    n, d, _ = R.shape
    Phi = np.ascontiguousarray(R.transpose(1, 0, 2))  # Phi[i] = Phi_i, (n, d)
    gamma, B, noise = np.ones(d), np.eye(d), 1.0
    losses = []
    for _ in range(max_iter + 1):
        PB = Phi @ B
        K = PB @ Phi.transpose(0, 2, 1)  # K[i] = Phi_i B Phi_i^T
        S = noise * np.eye(n) + np.einsum("i,imn->mn", gamma, K)
        c = linalg.cho_factor(S)
        S_inv = linalg.cho_solve(c, np.eye(n))
        a = S_inv @ y
        losses.append(float(y @ a + 2.0 * np.sum(np.log(np.diag(c[0])))))
        BV = (PB.transpose(0, 2, 1) @ a).T  # column i: B Phi_i^T a
        coef = BV * gamma  # the posterior mean, column i: gamma_i B Phi_i^T a
        if len(losses) > 1 and losses[-2] - losses[-1] <= tol * max(1.0, abs(losses[-1])):
            break
        if len(losses) == max_iter + 1:
            break
        # quad[i] = w_i^T B^-1 w_i without B^-1 (w_i = gamma_i B v_i, v_i = Phi_i^T a);
        # z[i] = tr(B Phi_i^T S^-1 Phi_i), the gradient of log|S| in gamma_i
        residual = y - np.einsum("mij,ij->m", R, coef)
        v = (Phi.transpose(0, 2, 1) @ a).T  # column i: v_i = Phi_i^T a
        quad = gamma**2 * np.einsum("di,di->i", v, BV)
        z = np.einsum("imn,nm->i", K, S_inv)
        new_gamma = np.sqrt(np.maximum(quad, 0.0) / np.maximum(z, np.finfo(float).tiny))
        active = new_gamma > 0
        M = (coef[:, active] / new_gamma[active]) @ coef[:, active].T
        H = S_inv @ Phi  # H[i] = S^-1 Phi_i
        G = (Phi * new_gamma[:, None, None]).reshape(d * n, d).T @ H.reshape(d * n, d)
        w, Q = np.linalg.eigh((G + G.T) / 2)
        w = np.maximum(w, 1e-10 * max(w[-1], np.finfo(float).tiny))
        g_half = (Q * np.sqrt(w)) @ Q.T
        g_inv_half = (Q / np.sqrt(w)) @ Q.T
        B = g_inv_half @ _spectral_map(g_half @ M @ g_half, lambda e: np.sqrt(np.maximum(e, 0)))
        B = B @ g_inv_half
        B = (B + B.T) / 2
        scale = np.trace(B) / d
        if not scale > 0:  # every column left the model: W = 0 is the fixed point
            break
        B, gamma = B / scale, new_gamma * scale  # gamma_i B is what the model sees
        noise = max(float(np.sqrt(residual @ residual / np.trace(S_inv))), noise_floor)
    return coef, gamma, B, noise, losses

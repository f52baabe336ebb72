"""What a fitted bilinear classifier computes: scores, probabilities, weights, patterns.

:class:`BilinearClassifierMixin` holds the prediction side of
:class:`~sblr_rt.model.SparseBilinearLogisticRegression` (whose own module holds its
parameters and its fit), with the attributes scikit-learn and MNE read from a linear
model: ``coef_`` (the weights in the input's shape), ``filters_`` and ``patterns_`` (the
spatial filters and their Haufe patterns, as in MNE's and pyRiemann's CSP). It needs the
fitted ``spatial_`` (U), ``temporal_`` (V), ``intercept_``, ``classes_``,
``spatial_patterns_``, ``n_features_in_``, ``n_times_in_`` and ``multi_class``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sblr_rt.model._fitting import check_X
from sblr_rt.model._mne import epochs_array
from sblr_rt.model.factors import canonical_factors
from sblr_rt.model.link import proba_from_scores
from sblr_rt.model.solver import single_threaded_blas

__all__ = ["BilinearClassifierMixin"]


class BilinearClassifierMixin:
    """Scores ``tr(U^T X_i V) + b`` and what follows from them, for a fitted U, V, b."""

    def _weights(self):
        """Return W = U V^T per output column, shape (n_outputs, n_channels * n_times)."""
        U = self.spatial_ if self.spatial_.ndim == 3 else self.spatial_[None]
        V = self.temporal_ if self.temporal_.ndim == 3 else self.temporal_[None]
        return np.einsum("csr,ctr->cst", U, V).reshape(U.shape[0], -1)

    @property
    def coef_(self):
        """The weight matrix ``W = U V^T`` in the input's shape.

        The score of an epoch is ``<W, X_i> + b``, so this is the ``coef_`` that
        :func:`mne.decoding.get_coef` and :class:`mne.decoding.LinearModel` read.
        Shape (n_channels, n_times) for two classes, (n_classes, n_channels, n_times)
        for more. Fitted on 2-D input (n_epochs, n_features), it is (1, n_features)
        or (n_classes, n_features), as for :class:`sklearn.linear_model.LogisticRegression`.
        """
        check_is_fitted(self)
        W = self._weights()
        if getattr(self, "_input_2d", False):
            return W
        W = W.reshape(-1, self.n_features_in_, self.n_times_in_)
        return W[0] if self.classes_.size == 2 else W

    @property
    def filters_(self):
        """The spatial filters ``U^T``, one row per component.

        Shape (rank, n_channels) for two classes, (n_classes, rank, n_channels) for more:
        the layout of ``filters_`` in pyRiemann's CSP and SPoC and in MNE's multi-class
        generalised eigendecompositions, so ``filters_ @ X_i`` are the component time
        courses (before the temporal factor V weighs them).
        """
        check_is_fitted(self)
        return np.swapaxes(self.spatial_, -1, -2)

    @property
    def patterns_(self):
        """Haufe activation patterns of the spatial filters, one row per component.

        ``spatial_patterns_`` transposed: shape (rank, n_channels) for two classes,
        (n_classes, rank, n_channels) for more, the layout of ``filters_``.
        ``patterns_[k]`` is the scalp map of component ``k`` (``mne.viz.plot_topomap(
        clf.patterns_[0], info)``), as the rows of pyRiemann's CSP ``patterns_``. For the
        Haufe pattern of the whole weight matrix ``coef_``, wrap the estimator in
        :class:`mne.decoding.LinearModel` on vectorised epochs.
        """
        check_is_fitted(self)
        if self.spatial_patterns_ is None:
            raise AttributeError(
                "'patterns_' needs the training data: this estimator was rebuilt from "
                "factors without 'spatial_patterns'."
            )
        return np.swapaxes(self.spatial_patterns_, -1, -2)

    def canonical_factors(self):
        """Return the factors in canonical form (see :func:`factors.canonical_factors`).

        Each component's spatial column has unit norm and its temporal column carries the
        scale ``|u_k| |v_k|``; components are sorted by that scale; the largest-magnitude
        entry of each spatial column is positive. The product ``U V^T`` is unchanged.

        Returns
        -------
        spatial : ndarray, same shape as ``spatial_``
        temporal : ndarray, same shape as ``temporal_``
        """
        check_is_fitted(self)
        if self.spatial_.ndim == 2:
            return canonical_factors(self.spatial_, self.temporal_)[:2]
        pairs = [
            canonical_factors(u, v)[:2] for u, v in zip(self.spatial_, self.temporal_, strict=True)
        ]
        return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])

    def decision_function(self, X):
        """Return the scores ``tr(U^T X_i V) + b``.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times), or mne.Epochs
            Epochs with the channels and times seen in fit.

        Returns
        -------
        ndarray, shape (n_epochs,) or (n_epochs, n_classes)
            For two classes, positive means ``classes_[1]``. Otherwise one column per
            class (one-versus-rest scores, or multinomial log-odds against ``classes_[0]``).
        """
        check_is_fitted(self)
        X, _ = check_X(epochs_array(X), estimator=self, reset=False)
        if X.shape[2] != self.n_times_in_:
            raise ValueError(
                f"X has n_times={X.shape[2]}, but {type(self).__name__} was fitted with "
                f"n_times={self.n_times_in_}; got X of shape {X.shape}."
            )
        n = X.shape[0]
        coef = self._weights().astype(X.dtype)
        with single_threaded_blas():
            scores = (X.reshape(n, -1) @ coef.T).astype(np.float64) + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict_proba(self, X):
        """Return class probabilities.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Epochs.

        Returns
        -------
        ndarray, shape (n_epochs, n_classes)
            Logistic for two classes, normalised one-versus-rest logistics, or the
            multinomial softmax.
        """
        return proba_from_scores(self.decision_function(X), self.multi_class)

    def predict_log_proba(self, X):
        """Return the log of :meth:`predict_proba` (n_epochs, n_classes)."""
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """Return the predicted labels (n_epochs,) for epochs ``X``."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

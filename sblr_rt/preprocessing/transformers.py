"""The preprocessing as scikit-learn transformers: filter bank, spatial stage, features, scaling.

A :class:`~sblr_rt.preprocessing.Preprocessor` is the design of one preprocessing (channels,
window, filters, spatial stage, feature path, scaling rule); :func:`make_steps` cuts it into
four transformers that compose in a :class:`sklearn.pipeline.Pipeline`:

======================  =========================================================
``FilterBank``          raw padded epochs -> picked, causally filtered windows
``SpatialStage``        -> the spatial stage (none, common average, Laplacian)
``FeatureTransform``    -> unscaled features (waveform, band power, spectral,
                        covariance), shape (n_epochs, n_rows, n_times)
``FeatureScaler``       -> model input, the scaling fitted on the training epochs
======================  =========================================================

Only the scaler learns from data, so a pipeline refits the scaling on each training fold:
:func:`sklearn.model_selection.cross_val_predict` and
:class:`~sklearn.model_selection.GridSearchCV` work on raw epochs with the scaling inside
the folds. The pipeline's output equals :meth:`Preprocessor.transform
<sblr_rt.preprocessing.Preprocessor.transform>` after :meth:`Preprocessor.fit` on the same
epochs (both call the same code), and the online incremental forms are held equal to that.

:func:`fitted_pipeline` joins a fitted preprocessor and its fitted estimator in one fitted
pipeline: the one a calibrated :class:`~sblr_rt.bci_model.SingleModel` holds and runs its
offline transform and scores through.

Examples
--------
>>> import numpy as np
>>> from sklearn.model_selection import cross_val_predict
>>> from sklearn.pipeline import Pipeline
>>> from sblr_rt.model import SparseBilinearLogisticRegression
>>> from sblr_rt.preprocessing import Preprocessor
>>> pre = Preprocessor(ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0,
...                    h_freq=20.0)
>>> rng = np.random.default_rng(0)
>>> y = np.arange(40) % 2
>>> raw = rng.standard_normal((40, 3, pre.n_times_raw))
>>> raw[:, 2, pre.n_pad:] += y[:, None]
>>> pipe = Pipeline([*make_steps(pre), ("sblr", SparseBilinearLogisticRegression(mu1=0.01))])
>>> [name for name, _ in pipe.steps]
['filter', 'spatial', 'features', 'scale', 'sblr']
>>> float(np.mean(cross_val_predict(pipe, raw, y, cv=4) == y)) > 0.8
True
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr_rt.preprocessing.preprocessor import Preprocessor
from sblr_rt.preprocessing.scaling import apply_scaling, check_scaling, fit_scaling

__all__ = [
    "FeatureScaler",
    "FeatureTransform",
    "FilterBank",
    "SpatialStage",
    "fitted_pipeline",
    "make_steps",
]


class _Stage(TransformerMixin, BaseEstimator):
    """A stateless stage of a preprocessing design (it learns nothing in ``fit``)."""

    def __init__(self, design: Preprocessor | None = None):
        self.design = design

    def fit(self, X, y=None):
        """Check the design; nothing is learnt. Return self."""
        if not isinstance(self.design, Preprocessor):
            raise TypeError(f"'design' must be a Preprocessor, got {type(self.design).__name__}")
        self.n_features_in_ = np.shape(X)[1] if np.ndim(X) > 1 else None
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return isinstance(self.design, Preprocessor)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags


class FilterBank(_Stage):
    """Pick the design's channels and filter padded raw epochs causally; drop the pad.

    Parameters
    ----------
    design : Preprocessor
        The preprocessing whose channels, window and filters to apply.

    Notes
    -----
    ``transform(epochs)``: (n_epochs, n_channels, n_times_raw) raw epochs in the design's
    channel order -> (n_epochs, n_picks * n_filters, n_window) filtered windows, band-major.
    """

    def transform(self, X):
        """Return the picked, filtered windows of raw padded epochs ``X``."""
        check_is_fitted(self)
        return self.design.filter_epochs(X, spatial=False)


class SpatialStage(_Stage):
    """Apply the design's spatial stage (none, common average, surface Laplacian).

    Parameters
    ----------
    design : Preprocessor
        The preprocessing whose spatial operator to apply to every band of the windows.
    """

    def transform(self, X):
        """Return the windows ``X`` through the spatial operator, band by band."""
        check_is_fitted(self)
        return self.design.apply_spatial(np.asarray(X, dtype=np.float64))


class FeatureTransform(_Stage):
    """Compute the design's unscaled features from filtered windows.

    Parameters
    ----------
    design : Preprocessor
        The preprocessing whose feature path (waveform, band power, spectral, covariance)
        to apply.

    Notes
    -----
    ``transform(windows)`` -> (n_epochs, n_rows, n_times), before any scaling.
    """

    def transform(self, X):
        """Return the unscaled features of filtered windows ``X``."""
        check_is_fitted(self)
        return self.design.features_from_filtered(X)


class FeatureScaler(TransformerMixin, BaseEstimator):
    """Scale features by row (and time) RMS learnt on the training epochs.

    The separable scaling of :class:`~sblr_rt.preprocessing.Preprocessor` (it keeps the
    bilinear structure): rows divided by their RMS, with ``"channel_time"`` the time points
    too; ``center=True`` first subtracts each row's mean (the power paths,
    :func:`~sblr_rt.preprocessing.features.centres_rows`).

    Parameters
    ----------
    scaling : {"channel", "channel_time", None}
        The rule.
    center : bool
        Centre each row first.

    Attributes
    ----------
    row_offset_, row_scale_ : ndarray, shape (n_rows,)
    col_scale_ : ndarray, shape (n_times,)
    n_features_in_ : int
        ``n_rows``.

    Notes
    -----
    ``X`` is ``(n_epochs, n_rows, n_times)``; a 2-D ``X`` ``(n_epochs, n_rows)`` is read as
    ``n_times = 1`` (``np.atleast_3d``, as MNE's decoders do) and returned in its own shape.
    Non-finite features are refused by ``fit`` and passed through by ``transform`` (a
    window that cannot be scored scores NaN, as the preprocessor's).
    """

    def __init__(self, scaling: str | None = "channel", center: bool = False):
        self.scaling = scaling
        self.center = center

    @classmethod
    def from_preprocessor(cls, preprocessor: Preprocessor) -> FeatureScaler:
        """Return the scaler that holds a fitted preprocessor's scaling, fitted.

        For a model whose preprocessing was fitted by its calibration (or read from its
        file): the scaler's rule is the preprocessor's and its fitted arrays are the
        preprocessor's own, so :meth:`transform` equals :meth:`Preprocessor.scale
        <sblr_rt.preprocessing.Preprocessor.scale>` bit for bit. A :func:`~sklearn.base.clone`
        of it is unfitted and learns the same rule anew in ``fit``.

        Parameters
        ----------
        preprocessor : Preprocessor
            Fitted.

        Returns
        -------
        scaler : FeatureScaler
            Fitted.
        """
        if not isinstance(preprocessor, Preprocessor):
            raise TypeError(
                f"'preprocessor' must be a Preprocessor, got {type(preprocessor).__name__}"
            )
        if not preprocessor.is_fitted:
            raise RuntimeError("'preprocessor' is not fitted: call Preprocessor.fit() first")
        scaler = cls(preprocessor.scaling, center=preprocessor.centres_rows)
        scaler.row_offset_ = preprocessor.row_offset_
        scaler.row_scale_ = preprocessor.row_scale_
        scaler.col_scale_ = preprocessor.col_scale_
        scaler.n_features_in_ = preprocessor.n_rows
        return scaler

    def fit(self, X, y=None):
        """Learn the scales on training features ``X`` (n_epochs, n_rows, n_times)."""
        check_scaling(self.scaling)
        # Its own dtype: the scales are computed as the Preprocessor's.
        X = validate_data(self, X, dtype=None, allow_nd=True, ensure_all_finite=False)
        if X.ndim not in (2, 3):
            raise ValueError(f"'X' must have shape (n_epochs, n_rows, n_times), got {X.shape}")
        self.row_offset_, self.row_scale_, self.col_scale_ = fit_scaling(
            np.atleast_3d(X), self.scaling, center=bool(self.center)
        )
        return self

    def transform(self, X):
        """Return the scaled features (the model input), in the shape of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=None, allow_nd=True, reset=False, ensure_all_finite=False)
        Z = np.atleast_3d(X)
        if Z.ndim != 3 or Z.shape[2] != self.col_scale_.size:
            raise ValueError(
                f"'X' must have shape (n_epochs, {self.n_features_in_}, "
                f"{self.col_scale_.size}), got {X.shape}"
            )
        scaled = apply_scaling(Z, self.row_offset_, self.row_scale_, self.col_scale_)
        return scaled.reshape(X.shape)


def make_steps(preprocessor: Preprocessor) -> list[tuple[str, TransformerMixin]]:
    """Return the preprocessing as pipeline steps: filter, spatial, features, scale.

    Parameters
    ----------
    preprocessor : Preprocessor
        The design (fitted or not: its scaling is learnt again by the pipeline).

    Returns
    -------
    steps : list of (str, transformer)
        ``[("filter", FilterBank), ("spatial", SpatialStage), ("features",
        FeatureTransform), ("scale", FeatureScaler)]``, for :class:`sklearn.pipeline.Pipeline`.
    """
    if not isinstance(preprocessor, Preprocessor):
        raise TypeError(
            f"'preprocessor' must be a Preprocessor, got {type(preprocessor).__name__}"
        )
    design = copy.deepcopy(preprocessor)
    return [
        ("filter", FilterBank(design)),
        ("spatial", SpatialStage(design)),
        ("features", FeatureTransform(design)),
        ("scale", FeatureScaler(preprocessor.scaling, center=preprocessor.centres_rows)),
    ]


def fitted_pipeline(preprocessor: Preprocessor, estimator) -> Pipeline:
    """Return a fitted preprocessor and its estimator as one fitted scikit-learn Pipeline.

    Parameters
    ----------
    preprocessor : Preprocessor
        Fitted (by a calibration, or read from a model file).
    estimator : estimator
        Fitted on ``preprocessor``'s output, e.g. a
        :class:`~sblr_rt.model.SparseBilinearLogisticRegression`.

    Returns
    -------
    pipeline : Pipeline
        Steps ``filter``, ``spatial``, ``features``, ``scale`` and ``estimator`` last. The
        first three read ``preprocessor`` itself (not a copy), ``scale`` holds its fitted
        scaling (:meth:`FeatureScaler.from_preprocessor`), so ``pipeline[:-1].transform``
        equals :meth:`Preprocessor.transform <sblr_rt.preprocessing.Preprocessor.transform>`
        bit for bit, and ``pipeline.decision_function`` equals ``estimator`` on that output.
        :func:`sklearn.base.clone` of it is unfitted: its ``fit`` on raw epochs learns the
        scaling and the estimator anew, as :func:`make_steps` does.
    """
    if not isinstance(preprocessor, Preprocessor):
        raise TypeError(
            f"'preprocessor' must be a Preprocessor, got {type(preprocessor).__name__}"
        )
    check_is_fitted(estimator)
    return Pipeline(
        [
            ("filter", FilterBank(preprocessor)),
            ("spatial", SpatialStage(preprocessor)),
            ("features", FeatureTransform(preprocessor)),
            ("scale", FeatureScaler.from_preprocessor(preprocessor)),
            ("estimator", estimator),
        ]
    )

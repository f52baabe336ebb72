"""The scikit-learn estimator :class:`SparseBilinearLogisticRegression`.

This module holds the estimator, read top-down: its parameters and their documentation
(the objective, every parameter and attribute, the choices the paper leaves open, the
``solver`` routes), its fit, then what a fitted model computes (scores, probabilities,
and the attributes scikit-learn and MNE read from a linear model: ``coef_``, the weights in
the input's shape, and ``filters_``/``patterns_``, the spatial filters and their Haufe
patterns, as in MNE's and pyRiemann's CSP). The steps the fit shares with :mod:`.path` are
in :mod:`._fitting`, the mixed-precision route in :mod:`._mixed`, the MNE computations in
:mod:`._mne`, the solver in :mod:`.solver`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metadata_routing import UNUSED
from sklearn.utils.validation import check_is_fitted

from sblr_rt.model._fitting import (
    assemble,
    check_X,
    class_problems,
    cold_start,
    encode_labels,
    l1_max,
    moments,
    ray_scaled,
    sample_weights,
    standardise,
)
from sblr_rt.model._mixed import bcpd_mixed, fast_inputs
from sblr_rt.model._mne import epochs_array
from sblr_rt.model.factors import canonical_factors, spatial_patterns
from sblr_rt.model.link import proba_from_scores
from sblr_rt.model.penalties import ElasticNet
from sblr_rt.model.solver import SolverSettings, bcpd, single_threaded_blas
from sblr_rt.model.thresholds import l1_penalty_max, lambda_max

__all__ = [
    "SparseBilinearLogisticRegression",
    "ZeroTrapWarning",
    "l1_penalty_max",
    "lambda_max",
]


class ZeroTrapWarning(UserWarning):
    """The penalties collapse, or are likely to collapse, the factors to zero.

    Zero is a stationary point of the bilinear objective that the solver never leaves:
    once U (or V) is zero, the gradient with respect to the other factor vanishes too.
    Raised at the start of ``fit`` when an l1 penalty reaches the gradient sup-norm of
    :func:`l1_penalty_max`, and at the end when the fitted factors are all zero.
    """


class SparseBilinearLogisticRegression(ClassifierMixin, BaseEstimator):
    r"""Sparse bilinear logistic regression (Shi, Xu and Baraniuk).

    For an epoch :math:`X_i` (n_channels x n_times) the score is
    :math:`f_i = \mathrm{tr}(U^\top X_i V) + b`. With :math:`s` the RMS of the training
    data and :math:`\tilde U = s U` the spatial factor of the standardised data
    :math:`X_i / s`, the model solves

    .. math::

        \min_{U, V, b} \frac{1}{\sum_i w_i} \sum_{i=1}^n w_i \log(1 + e^{-y_i f_i})
        + \mu_1 \|\tilde U\|_1 + \frac{\mu_2}{2} \|\tilde U\|_F^2
        + \nu_1 \|V\|_1 + \frac{\nu_2}{2} \|V\|_F^2

    so that the same data in volts, microvolts or unit variance give the same model (the
    penalties are relative to the data's scale; the paper's objective on standardised
    data). The weights :math:`w_i` are 1 unless ``sample_weight`` or ``class_weight`` say
    otherwise. Labels are mapped to :math:`y_i \in \{-1, +1\}` (``classes_[1]`` is +1); the
    problem is solved by block
    coordinate proximal descent (the paper's Algorithm 2): closed-form soft-threshold
    updates of U then V, the intercept updated in both blocks, the adaptive step
    :math:`L = \max(L_{min}, L_{prev} \eta^{n})` with :math:`n \ge -1` the smallest integer
    passing the sufficient-decrease test, the SVD start of the mean sample and the stopping
    rule :math:`q^k \le` ``tol``.

    Parameters
    ----------
    rank : int, default=1
        Number of components r, ``1 <= rank <= min(n_channels, n_times)``.
    mu1, mu2 : float, default=0.0
        l1 and l2 penalties on the spatial factor U.
    nu1, nu2 : float, default=0.0
        l1 and l2 penalties on the temporal factor V.
    multi_class : {"ovr", "multinomial"}, default="ovr"
        For three or more classes: one binary problem per class against the rest (the
        paper's experiments), or the multinomial model of the paper's section 7.3 with
        ``classes_[0]`` as the reference class (its factors and intercept are zero) and
        one step size per block shared by all classes. With two classes both are the
        binary model.
    tol : float, default=1e-3
        Stop when the relative change :math:`q^k` (paper eq. 10) is at most ``tol``.
    max_iter : int, default=500
        Maximum number of iterations.
    eta : float, default=2.0
        Step-size factor :math:`\eta > 1`.
    L_min : float, default=1e-4
        Lower bound of the step parameters (of the standardised problem).
    init : {"svd", "svd_gradient", "random"}, default="svd"
        ``"svd"``: U0 = minus the first ``rank`` left singular vectors and V0 the first
        right ones of the mean epoch, b0 = 0 (the paper, section 5.1). ``"svd_gradient"``:
        the same from the loss gradient at zero factors and class-prior intercept, i.e. the
        class-weighted mean difference (per class for multi-class): the minimiser of the
        first-order expansion of the loss that the paper uses to motivate its start, with
        the labels kept. With balanced classes the mean epoch carries no class information
        and the paper's start can fall into the zero trap. The pair is scaled by the
        ``c >= 0`` minimising the objective along ``(c U0, c V0, 0)``.
        ``"random"``: unit-norm Gaussian columns from ``random_state``.
    random_state : int, RandomState instance or None, default=None
        Seed for ``init="random"``.
    warm_start : bool, default=False
        Start from the previous fit's factors (of its standardised problem), intercept
        and step sizes when the data shape and classes are unchanged.
    solver : {"fast", "paper"}, default="fast"
        ``"fast"``: the iterations of Algorithm 2, with each block update made in one
        compiled call (numba, :mod:`sblr_rt.model._kernels`; the same steps, sums in
        another order), and float64 input solved first with float32 products (a
        standardised float32 copy of X, half the memory traffic) until the stopping
        rule holds at ``0.3 * tol``, then on the float64 data until the float64 rule
        ``q^k <= tol`` holds. The data scale, the start, the mean-epoch moments and the
        Haufe patterns also use the float32 copy (relative differences about 1e-7).
        ``"paper"``: Algorithm 2 as written, in numpy, on the data as given (float32
        products for float32 input, float64 otherwise). The objective is non-convex and
        the two routes may end at different stationary points: on the 60 problems of the
        paper's Table 1 in ``benchmarks/solver.py --routes`` (s = t up to 250, both
        starts) the fast route ended no higher than the paper's on all 60.
        :func:`~sblr_rt.model.penalty_path.fit_penalty_paths` runs the paper's updates (numpy
        by default).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the loss, ``{label: weight}``; ``"balanced"`` weighs
        each class by ``n_epochs / (n_classes * count)`` (scikit-learn's rule), so that
        a 1:5 imbalanced ERP data set counts both classes equally. Multiplies
        ``sample_weight``.

    Attributes
    ----------
    classes_ : ndarray, shape (n_classes,)
        Class labels.
    spatial_ : ndarray, shape (n_channels, rank) or (n_classes, n_channels, rank)
        Spatial factor U (per class for three or more classes).
    temporal_ : ndarray, shape (n_times, rank) or (n_classes, n_times, rank)
        Temporal factor V.
    intercept_ : ndarray, shape (1,) or (n_classes,)
        Intercept b.
    spatial_patterns_ : ndarray, same shape as ``spatial_``
        Haufe activation patterns of the spatial filters, see
        :func:`sblr_rt.model.factors.spatial_patterns`.
    coef_ : ndarray, shape (n_channels, n_times) or (n_classes, n_channels, n_times)
        The weight matrix ``W = U V^T`` (read-only, from the factors), as
        :func:`mne.decoding.get_coef` and :class:`mne.decoding.LinearModel` expect it.
    filters_ : ndarray, shape (rank, n_channels) or (n_classes, rank, n_channels)
        Spatial filters ``U^T`` (read-only), pyRiemann's CSP layout.
    patterns_ : ndarray, same shape as ``filters_``
        Haufe spatial patterns ``spatial_patterns_`` transposed (read-only).
    n_iter_ : int or ndarray of shape (n_classes,)
        Iterations run (per class for one-versus-rest with three or more classes).
    objective_ : ndarray of shape (``n_iter_ + 1``,) or list of them
        Objective :math:`F^0, \dots, F^k` (one array per class for one-versus-rest with
        three or more classes).
    n_features_in_ : int
        Number of channels seen in fit.
    n_times_in_ : int
        Number of time samples seen in fit.
    l1_penalty_max_ : ndarray, shape (n_problems, 2)
        ``(mu1_max, nu1_max)`` at the start of each binary problem (one row for two classes
        or multinomial), see :func:`l1_penalty_max`; like the penalties, those of the
        standardised data.

    Notes
    -----
    Choices the paper leaves open: the step parameters start at ``L^0 = L_min``, so the
    first iteration searches upwards for the smallest passing step (a large ``L^0`` would
    take tiny steps and stop early on the relative-change rule); the sufficient-decrease
    test is evaluated in its equivalent Bregman form (see :mod:`sblr_rt.model.datafit`),
    exact even for steps at rounding level. Each iteration makes two passes over X (``X V``
    for the U-block, ``X^T U`` for the V-block); backtracking trials reuse them.

    Input of dtype float32 is not copied to float64: the products ``X V`` and ``X^T U``
    run in float32, while factors, scores, losses and gradients are float64, so the
    sufficient-decrease tests keep full precision. BLAS runs single-threaded inside ``fit``
    and ``decision_function`` (small products are much slower threaded on few cores).

    Zero is a stationary point that the solver never leaves. A :class:`ZeroTrapWarning` is
    raised at the start when ``mu1`` or ``nu1`` is at least the sup-norm of the matching
    gradient (:func:`l1_penalty_max`), and after the fit when the factors collapsed.

    With MNE: :class:`mne.Epochs` in volts go in as they are (no scaling step is needed,
    the fit standardises). Behind MNE's :class:`~mne.decoding.Scaler`,
    ``get_coef(pipe, "patterns_", inverse_transform=True)`` and ``"filters_"`` give
    ``(rank, n_channels)`` back in the data's units; ``coef_`` is 2-D
    ``(n_channels, n_times)``, which the Scaler would read as epochs of one time point,
    so take it as ``pipe[0].inverse_transform(pipe[-1].coef_[np.newaxis])[0]``
    (MNE's pattern convention), or fit without the Scaler and read
    ``get_coef(pipe, "coef_")``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = rng.standard_normal((40, 6, 8)) + (2 * y - 1)[:, None, None]
    >>> clf = SparseBilinearLogisticRegression(rank=1, mu1=0.01).fit(X, y)
    >>> clf.spatial_.shape, clf.temporal_.shape, clf.score(X, y)
    ((6, 1), (8, 1), 1.0)
    """

    # check_input is the caller's promise about X, not data to route (scikit-learn's own
    # idiom, as in DecisionTreeClassifier): no set_*_request method is made for it.
    __metadata_request__decision_function: ClassVar[dict] = {"check_input": UNUSED}
    __metadata_request__predict: ClassVar[dict] = {"check_input": UNUSED}
    __metadata_request__predict_proba: ClassVar[dict] = {"check_input": UNUSED}

    _parameter_constraints: ClassVar[dict] = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "mu1": [Interval(Real, 0, None, closed="left")],
        "mu2": [Interval(Real, 0, None, closed="left")],
        "nu1": [Interval(Real, 0, None, closed="left")],
        "nu2": [Interval(Real, 0, None, closed="left")],
        "multi_class": [StrOptions({"ovr", "multinomial"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta": [Interval(Real, 1, None, closed="neither")],
        "L_min": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"svd", "svd_gradient", "random"})],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "solver": [StrOptions({"paper", "fast"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        rank=1,
        mu1=0.0,
        mu2=0.0,
        nu1=0.0,
        nu2=0.0,
        *,
        multi_class="ovr",
        tol=SolverSettings.tol,
        max_iter=SolverSettings.max_iter,
        eta=SolverSettings.eta,
        L_min=SolverSettings.L_min,
        init="svd",
        random_state=None,
        warm_start=False,
        solver="fast",
        class_weight=None,
    ):
        self.rank = rank
        self.mu1 = mu1
        self.mu2 = mu2
        self.nu1 = nu1
        self.nu2 = nu2
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

    def __sklearn_tags__(self):
        """Declare 3-D input support."""
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags

    def _settings(self):
        """Return the solver's rules from this estimator's parameters."""
        return SolverSettings(tol=self.tol, max_iter=self.max_iter, eta=self.eta, L_min=self.L_min)

    def _penalties(self):
        # The penalties of the standardised problem (X / scale, U * scale): see the
        # objective in the class docstring.
        return (
            ElasticNet(float(self.mu1), float(self.mu2)),
            ElasticNet(float(self.nu1), float(self.nu2)),
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        The data are standardised by their RMS inside the fit and the spatial factor
        mapped back (see the objective above): the model is the same for ``X`` and
        ``1e-6 * X``.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times), or mne.Epochs
            Training epochs (a 2-D array is read as (n_epochs, n_features, 1)). An
            :class:`mne.Epochs` is read as ``epochs.get_data()``, and so is the list of
            one-epoch Epochs that scikit-learn's cross-validation makes of it.
        y : array-like, shape (n_epochs,)
            Labels, two or more distinct values.
        sample_weight : array-like, shape (n_epochs,), default=None
            Non-negative weight of each epoch in the loss (and in the data scale and the
            start): a weight of 2 fits as the epoch given twice, 0 as the epoch left out.

        Returns
        -------
        self : SparseBilinearLogisticRegression
            The fitted estimator.
        """
        warm = self.warm_start and hasattr(self, "_solutions")
        prev = (self.classes_, self.n_features_in_, self.n_times_in_) if warm else None
        X = epochs_array(X)
        # np.asarray, not np.ndim: array-likes may refuse __array_function__
        self._input_2d = (X.ndim if hasattr(X, "ndim") else np.asarray(X).ndim) == 2
        fast = self.solver == "fast"
        # The fast route checks finiteness on its float32 copy (see _mixed.fast_inputs).
        X, y = check_X(X, estimator=self, y=y, reset=True, ensure_all_finite=not fast)
        _, s, t = X.shape
        classes, y_enc = encode_labels(y)
        if self.rank > min(s, t):
            raise ValueError(
                f"'rank' must be at most min(n_channels, n_times) = {min(s, t)}; got {self.rank}."
            )
        self.n_times_in_ = t
        weights = sample_weights(y, sample_weight, self.class_weight, X.shape[0])
        if fast:
            # X_fit is X unscaled (float64 input: the float64 iterations divide their
            # products by the scale) and X32 the standardised float32 copy, which the fast
            # route reads wherever float32 rounding is harmless (see 'solver').
            X_fit, X32, scale = fast_inputs(X, weights)
        else:
            (X_fit, scale), X32 = standardise(X, sample_weight=weights), None
        if warm and not (np.array_equal(prev[0], classes) and prev[1:] == (s, t)):
            warm = False
        problems = class_problems(y_enc, classes.size, self.multi_class, weights)
        pen_u, pen_v = pen = self._penalties()
        with single_threaded_blas():
            # A warm start is the last fit's solution of its standardised problem, so a
            # refit on the same data in other units starts (and ends) where it ended.
            solutions, l1max = self._solve(X_fit, problems, pen_u, pen_v, warm, X32, scale)
            l1max = np.asarray(l1max)
            self._warn_zero_trap(l1max, classes, pen[0].l1, pen[1].l1)
            self._fit_scale = scale
            # the fast route's patterns come from the standardised float32 copy
            self._set_fitted(X if X32 is None else X32, classes, solutions, l1max, scale, fast)
        self._warn_after_fit(classes, solutions, pen)
        return self

    def _solve(self, X, problems, pen_u, pen_v, warm, X32=None, x_scale=1.0):
        """Return the solver's results per problem and the l1 thresholds at the start.

        ``X32`` (the standardised float32 copy) selects the fast route (see the 'solver'
        parameter); its float64 iterations read ``X / x_scale``.
        """
        _, s, _ = X.shape
        x_mean, Ds = moments(X if X32 is None else X32, problems)
        if warm:
            starts = [(r.U, r.V, r.b, r.L_u, r.L_v) for r in self._solutions]
            warm = len(starts) == len(problems) and all(
                st[0].shape == (p.y.shape[1], s, self.rank)
                for st, p in zip(starts, problems, strict=True)
            )
        if not warm:
            starts = [
                (*cold_start(x_mean, D, self.rank, self.init, self.random_state), None, None)
                for D in Ds
            ]
        # Thresholds at the unit-norm start (as l1_penalty_max), or the warm factors.
        l1max = l1_max(Ds, [s_[0] for s_ in starts], [s_[1] for s_ in starts])
        if not warm and self.init == "svd_gradient":
            starts = ray_scaled(X if X32 is None else X32, problems, starts, pen_u, pen_v)
        if X32 is None:
            solve = bcpd
        else:

            def solve(X, *args, **kwargs):
                return bcpd_mixed(X, X32, *args, x_scale=x_scale, **kwargs)

        solutions = [
            solve(
                X,
                p,
                U0,
                V0,
                b0,
                pen_u,
                pen_v,
                self._settings(),
                L_u0=L_u0,
                L_v0=L_v0,
            )
            for p, (U0, V0, b0, L_u0, L_v0) in zip(problems, starts, strict=True)
        ]
        return solutions, l1max

    def _warn_after_fit(self, classes, solutions, pen):
        if not all(r.converged for r in solutions):
            warnings.warn(
                f"SparseBilinearLogisticRegression did not reach q^k <= tol={self.tol} "
                f"within max_iter={self.max_iter} iterations; increase 'max_iter'.",
                ConvergenceWarning,
                stacklevel=4,
            )
        pen_u, pen_v = pen
        penalised = any(v > 0 for v in (pen_u.l1, pen_u.l2, pen_v.l1, pen_v.l2))
        collapsed = [
            c
            for c, r in zip(self._problem_names(classes), solutions, strict=True)
            if penalised and not (np.any(r.U) and np.any(r.V))
        ]
        if collapsed:
            warnings.warn(
                f"the fitted factors are all zero for {collapsed} (the zero trap): the model "
                "predicts from the intercept alone; lower the penalties (mu1="
                f"{pen_u.l1:g}, mu2={pen_u.l2:g}, nu1={pen_v.l1:g}, nu2={pen_v.l2:g}).",
                ZeroTrapWarning,
                stacklevel=4,
            )

    def _problem_names(self, classes):
        if classes.size == 2:
            return ["binary"]
        if self.multi_class == "ovr":
            return [f"class {c!r} vs rest" for c in classes.tolist()]
        return ["multinomial"]

    def _warn_zero_trap(self, l1max, classes, mu1, nu1):
        names = self._problem_names(classes)
        msgs = []
        for name, (mu_max, nu_max) in zip(names, l1max, strict=True):
            if mu1 > 0 and mu1 >= mu_max:
                msgs.append(f"{name}: 'mu1'={mu1:.4g} >= {mu_max:.4g}")
            if nu1 > 0 and nu1 >= nu_max:
                msgs.append(f"{name}: 'nu1'={nu1:.4g} >= {nu_max:.4g}")
        if msgs:
            warnings.warn(
                "l1 penalty at or above the gradient sup-norm at the start: "
                + "; ".join(msgs)
                + ". Zero then solves that factor's block, and unless the other factor may "
                "grow unpenalised the factors collapse to zero and stay there (the zero "
                "trap). See sblr_rt.model.l1_penalty_max.",
                ZeroTrapWarning,
                stacklevel=4,
            )

    def _set_fitted(self, X, classes, solutions, l1max, scale=1.0, standardised=False):
        """Set the fitted attributes; ``standardised``: X is the data divided by ``scale``."""
        self.classes_ = classes
        self._solutions = solutions
        self.l1_penalty_max_ = l1max
        n_classes = classes.size
        U, V, b, self.n_iter_, self.objective_ = assemble(solutions, n_classes, self.multi_class)
        if standardised:
            # Cov(X V) (U_fit / scale) = scale * Cov(X_fit V) U_fit: patterns are quadratic
            # in X, and scale**2 alone may overflow where the patterns do not.
            patterns = np.stack([spatial_patterns(X, U[c], V[c]) for c in range(U.shape[0])])
            if scale != 1.0:
                patterns *= scale
        if scale != 1.0:
            U = U / scale  # from the X / scale problem back to the caller's units
        if not standardised:
            patterns = np.stack([spatial_patterns(X, U[c], V[c]) for c in range(U.shape[0])])
        if n_classes == 2:
            self.spatial_, self.temporal_ = U[0], V[0]
            self.spatial_patterns_ = patterns[0]
        else:
            self.spatial_, self.temporal_ = U, V
            self.spatial_patterns_ = patterns
        self.intercept_ = np.asarray(b, dtype=np.float64)

    @classmethod
    def from_factors(
        cls,
        spatial,
        temporal,
        intercept,
        classes,
        spatial_patterns=None,
        *,
        fit_info=None,
        **params,
    ):
        """Return a fitted estimator rebuilt from saved factors (no training).

        Parameters
        ----------
        spatial : array-like, shape (n_channels, rank) or (n_classes, n_channels, rank)
            ``spatial_`` of a fitted model.
        temporal : array-like, shape (n_times, rank) or (n_classes, n_times, rank)
            ``temporal_``.
        intercept : array-like, shape (1,) or (n_classes,)
            ``intercept_``.
        classes : array-like, shape (n_classes,)
            ``classes_``.
        spatial_patterns : array-like | None
            ``spatial_patterns_`` if saved (else the attribute is None).
        fit_info : dict | None
            What the fit that found the factors recorded, set as the attributes of the
            same name with a trailing underscore: ``n_iter``, ``objective`` and
            ``l1_penalty_max`` (each optional).
        **params
            Constructor parameters (``rank`` is taken from the factors; ``multi_class``
            decides how ``predict_proba`` normalises three or more classes).

        Returns
        -------
        SparseBilinearLogisticRegression
            Ready for ``decision_function``/``predict``/``predict_proba``; ``objective_``
            and ``n_iter_`` are set only from ``fit_info``.
        """
        fit_info = dict(fit_info or {})
        unknown = set(fit_info) - {"n_iter", "objective", "l1_penalty_max"}
        if unknown:
            raise ValueError(
                "'fit_info' may hold 'n_iter', 'objective' and 'l1_penalty_max', "
                f"got {sorted(unknown)}"
            )
        spatial = np.asarray(spatial, dtype=np.float64)
        temporal = np.asarray(temporal, dtype=np.float64)
        classes = np.asarray(classes)
        two = classes.size == 2
        if spatial.ndim != (2 if two else 3) or temporal.ndim != spatial.ndim:
            raise ValueError(
                f"'spatial' and 'temporal' must be {2 if two else 3}-D for {classes.size} "
                f"classes; got shapes {spatial.shape} and {temporal.shape}."
            )
        params.setdefault("rank", spatial.shape[-1])
        est = cls(**params)
        est.classes_ = classes
        est.spatial_ = spatial
        est.temporal_ = temporal
        est.intercept_ = np.asarray(intercept, dtype=np.float64).reshape(-1)
        est.spatial_patterns_ = (
            None if spatial_patterns is None else np.asarray(spatial_patterns, dtype=float)
        )
        est.n_features_in_ = spatial.shape[-2]
        est.n_times_in_ = temporal.shape[-2]
        for name, value in fit_info.items():
            setattr(est, f"{name}_", value)
        return est

    # What a fitted model computes: scores tr(U^T X_i V) + b and what follows from them.

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

    def decision_function(self, X, *, check_input=True):
        """Return the scores ``tr(U^T X_i V) + b``.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times), or mne.Epochs
            Epochs with the channels and times seen in fit.
        check_input : bool
            False: ``X`` is used as given, unchecked and with the BLAS pools as the caller
            set them; it must be a C-contiguous float array of the fitted shape (as
            :func:`~sblr_rt.model._fitting.check_X` returns it). For a caller that scores
            many fitted estimators on one array it checked once (the cross-validated
            search), where the checks cost more than the product.

        Returns
        -------
        ndarray, shape (n_epochs,) or (n_epochs, n_classes)
            For two classes, positive means ``classes_[1]``. Otherwise one column per
            class (one-versus-rest scores, or multinomial log-odds against ``classes_[0]``).
        """
        check_is_fitted(self)
        if not check_input:
            return self._scores(X)
        X, _ = check_X(epochs_array(X), estimator=self, reset=False)
        with single_threaded_blas():
            return self._scores(X)

    def _scores(self, X):
        """Return :meth:`decision_function` of checked epochs (the arithmetic)."""
        n = X.shape[0]
        coef = self._weights().astype(X.dtype)
        scores = (X.reshape(n, -1) @ coef.T).astype(np.float64) + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def _labels(self, scores):
        """Return the labels that decision scores predict (:meth:`predict`'s rule)."""
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X, *, check_input=True):
        """Return class probabilities.

        Parameters
        ----------
        X : array-like, shape (n_epochs, n_channels, n_times)
            Epochs.
        check_input : bool
            As for :meth:`decision_function`.

        Returns
        -------
        ndarray, shape (n_epochs, n_classes)
            Logistic for two classes, normalised one-versus-rest logistics, or the
            multinomial softmax.
        """
        return proba_from_scores(
            self.decision_function(X, check_input=check_input), self.multi_class
        )

    def predict_log_proba(self, X):
        """Return the log of :meth:`predict_proba` (n_epochs, n_classes)."""
        return np.log(self.predict_proba(X))

    def predict(self, X, *, check_input=True):
        """Return the predicted labels (n_epochs,) for epochs ``X``.

        ``check_input`` as for :meth:`decision_function`.
        """
        return self._labels(self.decision_function(X, check_input=check_input))

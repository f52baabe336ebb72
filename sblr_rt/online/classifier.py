"""Classify raw EEG windows: a pure ``step(window)`` and a fast incremental form (no LSL).

:class:`OnlineClassifier` wraps a :class:`~sblr_rt.bci_model.BCIModel` for the online loop.
Its :meth:`~OnlineClassifier.step` is a pure function of a raw window (the model's raw
epoch: ``n_pad`` samples of filter warm-up, then the window ``[tmin, tmax)``), in the
spirit of timeflux's ``update()`` nodes: no I/O, no hidden state, testable on arrays.

Three forms of the computation give the same scores (to floating-point rounding):

``plain``
    The offline pipeline: filter, baseline, resample, scale (``BCIModel.transform``), then
    ``tr(U^T X V) + b``. The reference.
``folded`` (waveform feature path)
    Every waveform step is linear, so the whole chain folds into native-rate factors
    ``score = tr(U_n^T X_raw V_n) + b`` (:meth:`BCIModel.native_factors`): one pass over
    the raw window, no filtering or resampling at decision time.
``projected`` (waveform feature path, incremental)
    Better still, each sample is projected onto the ``r`` folded spatial factors as it
    arrives (:meth:`OnlineClassifier.streaming`), so only ``r`` virtual channels (per class
    for three or more classes) are buffered; a decision is ``r`` dot products of length
    ``n_times_raw``. Filtering needs no state: the FIR filter is folded into ``V_n``.

The band-power feature path cannot fold the squaring; its incremental form filters each sample
once as it arrives (a block Toeplitz product, so BLAS does the work), buffers the squared
band signals and, per decision, only bins, logs, scales and applies the factors.

Examples
--------
>>> import numpy as np

>>> from sblr_rt.model import SparseBilinearLogisticRegression
>>> from sblr_rt.bci_model import BCIModel, SingleModel
>>> from sblr_rt.preprocessing import Preprocessor
>>> rng = np.random.default_rng(0)
>>> pre = Preprocessor(ch_names=["C3", "C4"], sfreq=100.0, tmin=0.0, tmax=0.5)
>>> raw = rng.standard_normal((40, 2, pre.n_times_raw))
>>> y = np.repeat([0, 1], 20)
>>> raw[y == 1, 0] += 1.0
>>> est = SparseBilinearLogisticRegression().fit(pre.fit(raw).transform(raw), y)
>>> clf = OnlineClassifier(SingleModel(preprocessor=pre, estimator=est, classes=["a", "b"]))
>>> clf.step(raw[-1])["label"]
'b'
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from sblr_rt.bci_model import BCIModel, EnsembleModel, SingleModel
from sblr_rt.online._channels import check_stream_info, match_stream
from sblr_rt.online.decision import Decision, DecisionRule
from sblr_rt.online.incremental import Scoring, form_class, form_for
from sblr_rt.online.run_info import RunInfo
from sblr_rt.online.streaming import StreamingState
from sblr_rt.utils._docs import fill_doc
from sblr_rt.utils._renamed import renamed_attribute, renamed_keyword, warn_renamed

__all__ = [
    "Decision",
    "OnlineClassifier",
    "StreamingState",
    "check_stream_info",
    "decision_to_json",
    "match_stream",
    "public_decision",
]

_STEP_FORMS = ("auto", "plain", "folded")


def public_decision(decision) -> dict:
    """Return the part of a decision that is published: ``label, proba, window_end, trial, cue``.

    Plus ``proba_smoothed``, ``early`` and ``model_version`` when the decision has them
    (the online loop's).

    Parameters
    ----------
    decision : Decision | dict
        A decision from :meth:`OnlineClassifier.step` or the loop, or a dict of its fields.

    Returns
    -------
    public : dict
        JSON-serialisable (plain Python types): :meth:`Decision.public
        <sblr_rt.online.decision.Decision.public>`.
    """
    return _as_decision(decision).public()


def decision_to_json(decision) -> str:
    """Serialize a decision as pushed on ``SBLR-Predictions``.

    Parameters
    ----------
    decision : Decision | dict
        A decision from :meth:`OnlineClassifier.step` or the loop.

    Returns
    -------
    text : str
        The JSON object with keys ``label``, ``proba``, ``window_end``, ``trial``, ``cue``
        (:meth:`Decision.to_json <sblr_rt.online.decision.Decision.to_json>`).
    """
    return _as_decision(decision).to_json()


def _as_decision(decision) -> Decision:
    if isinstance(decision, Decision):
        return decision
    names = {f.name for f in dataclasses.fields(Decision)}
    return Decision(**{"score": None, **{k: v for k, v in decision.items() if k in names}})


class OnlineClassifier:
    """A trained model ready for online use: a pure ``step`` and fast incremental forms.

    Parameters
    ----------
    model : BCIModel
        The trained model (:func:`sblr_rt.load_model`).
    fast : bool
        Use the folded (pure step) and projected (incremental) forms on the waveform path.
        False uses the plain pipeline everywhere (for checking and benchmarks).
    recentre : bool
        For a run-centred model (:attr:`BCIModel.run_centring
        <sblr_rt.bci_model.BCIModel.run_centring>`), re-estimate the stream's run mean
        from its trial windows (:mod:`sblr_rt.model.run_centring`); False keeps the
        calibration reference. :meth:`step` stays pure either way: the running mean lives
        in the :meth:`streaming` state.
    recentre_warmup : float | None
        Weight of the calibration reference in the running mean, in trials; None: the
        model's own.

    Attributes
    ----------
    model : BCIModel
        The wrapped model.
    ch_names : list of str
        Raw channels the model reads, in its order.
    sfreq : float
        Raw sampling rate in Hz.
    n_times_raw : int
        Samples in a raw window (``n_pad`` filter warm-up + ``n_window``).
    n_pad, n_window : int
        Filter warm-up and window samples.
    classes : list of str
        The user's labels.
    features : str
        The model's feature path (``"waveform"``, ``"bandpower"``, ``"spectral"``,
        ``"covariance"``), or ``"ensemble"``.
    form : str
        The form of the computation :meth:`step` uses: ``"folded"`` (a single waveform
        model) or ``"plain"``.
    run_info : RunInfo
        What the online loop reads from the model file: unit, calibration markers,
        smoothing, rejection settings, version (:class:`~sblr_rt.online.run_info.RunInfo`).
    scoring : Scoring
        How the scores are computed (factors, folded factors, intercept, window sizes):
        what the incremental forms are given (:class:`~sblr_rt.online.incremental.form.Scoring`).
    """

    def __init__(
        self, model, *, fast: bool = True, recentre: bool = True, recentre_warmup=None
    ) -> None:
        if not isinstance(model, BCIModel):
            raise TypeError(
                f"'model' must be a BCIModel (a SingleModel or an EnsembleModel), got "
                f"{type(model).__name__}"
            )
        self.model = model
        self.run_info = RunInfo.from_model(model)
        self.ch_names = list(model.ch_names)
        self.sfreq = float(model.sfreq)
        self.n_times_raw = int(model.n_times_raw)
        self.n_pad = int(model.n_pad)
        self.n_window = int(model.n_window)
        self.tmin = float(model.tmin)
        self.tmax = float(model.tmax)
        self.classes = [str(c) for c in model.classes]
        self.features = model.features
        self.fast = bool(fast)
        self.recentre = bool(recentre)
        self.recentre_warmup = recentre_warmup
        centring = model.run_centring
        if centring is not None and recentre_warmup is not None:
            centring = dataclasses.replace(centring, warmup=recentre_warmup)
        #: RunCentring | None: what the streaming states adapt with (None: no adaptation).
        self.run_centring = centring if self.recentre else None
        #: ProbabilityCalibration | None: the model's (:attr:`BCIModel.probability`).
        self.probability = model.probability
        #: DecisionRule: how scores become a decision (shared with the streaming states).
        self.rule = DecisionRule(
            tuple(self.classes),
            model.multi_class,
            1.0 if self.probability is None else self.probability.trial,
        )
        #: Scoring: how the scores are computed, for this class and its incremental forms.
        self.scoring = self._scoring(model)
        self.rank = self.scoring.rank
        self.form = "folded" if (self.fast and self.scoring.native is not None) else "plain"

    @functools.singledispatchmethod
    def _scoring(self, model) -> Scoring:
        """Return how ``model``'s scores are computed (one implementation per form)."""
        raise TypeError(f"no online scoring for a {type(model).__name__}")

    @_scoring.register
    def _single_scoring(self, model: SingleModel) -> Scoring:
        """Return a single model's scoring: its factors, folded onto the raw window if linear."""
        est = model.estimator
        # Model-grid factors, stacked per output column: (K, n_rows, r), (K, n_times, r).
        U = np.asarray(est.spatial_, dtype=np.float64)
        V = np.asarray(est.temporal_, dtype=np.float64)
        U = U[None] if U.ndim == 2 else U
        V = V[None] if V.ndim == 2 else V
        native = None
        if model.preprocessor.is_linear:
            Un, Vn, _ = model.native_factors()
            Un = Un[None] if Un.ndim == 2 else Un
            Vn = Vn[None] if Vn.ndim == 2 else Vn
            # Columns k * r + j: class k, component j.
            spatial = np.ascontiguousarray(Un.transpose(1, 0, 2).reshape(Un.shape[1], -1))
            temporal = np.ascontiguousarray(Vn.transpose(1, 0, 2).reshape(Vn.shape[1], -1))
            spatial.flags.writeable = temporal.flags.writeable = False
            native = (spatial, temporal)
        return Scoring(
            model=model,
            features=self.features,
            n_channels=len(self.ch_names),
            n_times_raw=self.n_times_raw,
            n_pad=self.n_pad,
            # W_k = U_k V_k^T on the model grid, for scores from model input in one pass.
            weights=np.einsum("ksr,ktr->kst", U, V),
            intercept=np.asarray(model.intercept, dtype=np.float64).reshape(-1),
            rank=U.shape[2],
            native=native,
        )

    @_scoring.register
    def _ensemble_scoring(self, model: EnsembleModel) -> Scoring:
        """Return an ensemble's scoring: its members' scorings and weights, none of its own.

        Each member is scored by its own online classifier, without run centring: the
        centring of the weighted mean is the ensemble's own, in the streaming state.
        """
        members = [OnlineClassifier(m, fast=self.fast, recentre=False) for m in model.members]
        return Scoring(
            model=model,
            features=self.features,
            n_channels=len(self.ch_names),
            n_times_raw=self.n_times_raw,
            n_pad=self.n_pad,
            weights=None,
            intercept=np.tensordot(
                model.member_weights, [m.scoring.intercept for m in members], axes=1
            ),
            rank=max(m.rank for m in members),
            native=None,
            members=tuple((m.auto_form(), m.scoring) for m in members),
            member_weights=model.member_weights,
        )

    def __repr__(self) -> str:
        return (
            f"<OnlineClassifier | {self.features}, {len(self.ch_names)} channels at "
            f"{self.sfreq:g} Hz, {self.n_times_raw} samples per window, rank {self.rank}, "
            f"{self.form} step>"
        )

    # ------------------------------------------------------------------ pure step
    def check_window(self, window) -> np.ndarray:
        """Validate a raw window.

        Parameters
        ----------
        window : array, shape (n_channels, n_times_raw)
            Raw samples in the model's channel order.

        Returns
        -------
        window : ndarray, shape (n_channels, n_times_raw)
            As a float array.
        """
        window = np.asarray(window)
        expected = (len(self.ch_names), self.n_times_raw)
        if window.shape != expected:
            raise ValueError(
                f"'window' must have shape (n_channels, n_times_raw) = {expected} (the model's "
                f"channels, and {self.n_pad} samples of filter warm-up before the "
                f"{self.n_window}-sample window), got {window.shape}"
            )
        if not np.issubdtype(window.dtype, np.number):
            raise TypeError(f"'window' must be numeric, got dtype {window.dtype}")
        return window

    def decision_function(self, window, *, form: str = "auto", path=None) -> np.ndarray:
        """Return the model's scores for one raw window.

        Parameters
        ----------
        window : array, shape (n_channels, n_times_raw)
            Raw samples in the model's channel order (:attr:`ch_names`), ``n_times =
            n_pad + n_window``.
        form : {"auto", "plain", "folded"}
            The form of the computation; ``"auto"`` uses :attr:`form`.
        path : str | None
            Deprecated alias of ``form``.

        Returns
        -------
        scores : ndarray, shape (n_outputs,)
            One score for two classes (positive means ``classes[1]``), else one per class.
        """
        form = renamed_keyword("path", "form", path, form, default="auto")
        if form not in _STEP_FORMS:
            raise ValueError(f"'form' must be one of {_STEP_FORMS}, got {form!r}")
        window = self.check_window(window)
        form = self.form if form == "auto" else form
        if form == "folded":
            # (n_ch, n_times) @ (n_times, K r), then the spatial factor, per column.
            cols = np.einsum(
                "ct,tj,cj->j", window, self.native_temporal, self.native_spatial, optimize=True
            )
            return self.scoring.scores_from_columns(cols)
        return self.scoring.plain_scores(window)  # an ensemble's: the members' weighted mean

    @property
    def n_outputs(self) -> int:
        """Scores per window: 1 for two classes, else one per class."""
        return self.scoring.n_outputs

    @property
    def intercept(self) -> np.ndarray:
        """The intercepts, shape (n_outputs,) (a copy)."""
        return self.scoring.intercept.copy()

    @property
    def native_spatial(self) -> np.ndarray:
        """Folded spatial factors on the raw channels, shape (n_channels, n_outputs * rank).

        Column ``k * rank + j`` is output ``k``, component ``j``
        (:meth:`BCIModel.native_factors`). Waveform models only (read-only array).
        """
        return self.scoring.folded("native_spatial")[0]

    @property
    def native_temporal(self) -> np.ndarray:
        """Folded temporal factors on the raw window, shape (n_times_raw, n_outputs * rank).

        Filtering, baseline, resampling and scaling are folded in. Waveform models only.
        """
        return self.scoring.folded("native_temporal")[1]

    def scores_from_columns(self, cols: np.ndarray) -> np.ndarray:
        """Return the scores from the products ``u_j^T X v_j``, shape (n_outputs * rank,).

        :meth:`Scoring.scores_from_columns <sblr_rt.online.incremental.form.Scoring.
        scores_from_columns>`.
        """
        return self.scoring.scores_from_columns(cols)

    def scores_from_features(self, X: np.ndarray) -> np.ndarray:
        """Return ``tr(U^T X V) + b`` per output, shape (..., n_outputs).

        ``X`` is one model input (n_rows, n_times) or a stack of them (..., n_rows, n_times)
        (:meth:`Scoring.scores_from_features <sblr_rt.online.incremental.form.Scoring.
        scores_from_features>`).
        """
        return self.scoring.scores_from_features(X)

    def decide(self, scores: np.ndarray) -> tuple[str, dict]:
        """Return the label and the probabilities for scores of :meth:`decision_function`.

        Parameters
        ----------
        scores : ndarray, shape (n_outputs,)
            Scores of one window.

        Returns
        -------
        label : str
            The user's label.
        proba : dict
            ``{label: probability}`` for every class, in the model's class order.
        """
        return self.rule.decide(scores)

    @fill_doc
    def step(
        self,
        window,
        *,
        window_end: float | None = None,
        trial: bool = False,
        cue: str | None = None,
        form: str = "auto",
        path=None,
    ) -> dict:
        """Classify one raw window: a pure function, no state is read or changed.

        Parameters
        ----------
        window : array, shape (n_channels, n_times_raw)
            Raw samples in the model's channel order, ``n_times = n_pad + n_window``
            (the raw epoch of :class:`~sblr_rt.bci_model.BCIModel`).
        %(window_end)s
        %(trial)s
        %(cue)s
        form : {"auto", "plain", "folded"}
            The form of the computation (same numbers to rounding).
        path : str | None
            Deprecated alias of ``form``.

        Returns
        -------
        decision : Decision
            ``label`` (str), ``proba`` ({label: float}), ``score`` (float for two
            classes, else list of float), ``window_end``, ``trial``, ``cue``
            (:class:`~sblr_rt.online.decision.Decision`). Windows
            holding NaN give NaN scores and ``label`` None: check with
            :func:`numpy.isfinite` before calling, as the loop does.
        """
        form = renamed_keyword("path", "form", path, form, default="auto")
        scores = self.decision_function(window, form=form)
        return self.decision(scores, window_end, trial, cue)

    @fill_doc
    def decision(self, scores, window_end=None, trial: bool = False, cue=None) -> Decision:
        """Return the decision for the scores of one window (see :meth:`step`).

        Parameters
        ----------
        scores : ndarray, shape (n_outputs,)
            Scores of one window.
        %(window_end)s
        %(trial)s
        %(cue)s

        Returns
        -------
        decision : Decision
            ``label`` (None when a score is not finite), ``proba``, ``score``,
            ``window_end``, ``trial``, ``cue``.
        """
        return self.rule.decision(scores, window_end, trial, cue)

    # ------------------------------------------------------------------ streaming
    def streaming(
        self, *, capacity: int | None = None, form: str = "auto", path=None
    ) -> StreamingState:
        """Return a fresh streaming state fed sample by sample (the loop's fast step).

        Parameters
        ----------
        capacity : int | None
            Samples of history kept (at least one window); default two windows.
        form : str
            A registered incremental form (:data:`sblr_rt.online.incremental.FORMS`):
            ``"projected"`` (waveform), ``"filtered"`` (band power) or ``"plain"`` (raw
            samples buffered, :meth:`step` on each window). ``"auto"``: the fast form of
            the model's ``features`` (:func:`~sblr_rt.online.incremental.form_for`), or
            plain when ``fast=False``.
        path : str | None
            Deprecated alias of ``form``.

        Returns
        -------
        state : StreamingState
            See :class:`StreamingState`.
        """
        form = renamed_keyword("path", "form", path, form, default="auto")
        if form == "auto":
            form = self.auto_form().name
        return StreamingState(self, capacity=capacity, form=form)

    def auto_form(self):
        """Return the incremental form class ``form="auto"`` takes for this model.

        The fast form of the model's ``features`` (:func:`~sblr_rt.online.incremental.
        form_for`; an ensemble's members each on theirs), or the plain form when
        ``fast=False``.
        """
        if not self.fast:
            return form_class("plain")
        return form_for(self.features)

    path = renamed_attribute("path", "form")

    def path_class(self):
        """Return :meth:`auto_form` (deprecated name, with a ``DeprecationWarning``)."""
        warn_renamed("path_class", "auto_form")
        return self.auto_form()

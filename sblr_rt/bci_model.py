"""The model object: saved preprocessing + fitted estimator + metadata, on raw epochs.

A :class:`BCIModel` takes raw epochs exactly as the recording (or stream) delivers them,
in its own channel order, units and sampling rate, applies the saved
:class:`~sblr_rt.preprocessing.Preprocessor` and the fitted
:class:`~sblr_rt.model.SparseBilinearLogisticRegression`, and answers with the user's
own class labels (marker values such as ``"T1"``, or names from the calibration map).

Raw epochs and causal filtering
-------------------------------
A raw epoch holds ``n_times_raw = n_pad + n_window`` samples: ``n_pad`` samples of
filter warm-up (the FIR length minus one; 0 without band-pass) followed by the window
``[tmin, tmax)`` relative to the cue. For a cue at sample ``onset`` that is samples
``onset + round(tmin * sfreq) - n_pad`` up to (excluding) ``onset + round(tmax * sfreq)``
(exactly ``n_times_raw`` of them). The online loop simply takes the latest
``n_times_raw`` samples of its buffer: the decision equals the offline one (to
floating-point rounding) because the causal FIR filter forgets its initial state after
``n_pad`` samples.

Examples
--------
A low-pass model on three channels: each raw epoch carries the filter's warm-up.

>>> import numpy as np
>>> from sblr_rt.model import SparseBilinearLogisticRegression
>>> from sblr_rt.preprocessing import Preprocessor
>>> pre = Preprocessor(ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0,
...                    h_freq=20.0)
>>> pre.n_pad, pre.n_window, pre.n_times_raw
(66, 100, 166)
>>> rng = np.random.default_rng(1)
>>> y = np.arange(60) % 2
>>> raw = rng.standard_normal((60, 3, pre.n_times_raw))
>>> raw[:, 2, pre.n_pad:] += y[:, None]  # class 1 raises C4 during the window
>>> est = SparseBilinearLogisticRegression(mu1=0.01).fit(pre.fit(raw).transform(raw), y)
>>> model = BCIModel(preprocessor=pre, estimator=est, classes=["rest", "move"])
>>> model.predict(raw[:4]).tolist()
['rest', 'move', 'rest', 'move']
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from sblr_rt.model.link import proba_from_scores
from sblr_rt.model.prior_pool import PriorPool
from sblr_rt.model.run_centring import RunCentring
from sblr_rt.montage import make_info
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.preprocessing.spatial import spatial_label
from sblr_rt.regions import weight_regions
from sblr_rt.verdict import describe_rank, model_verdict, spread_text

__all__ = ["BCIModel"]


class BCIModel:
    """Preprocessing, estimator and metadata as one classifier of raw epochs.

    Parameters
    ----------
    preprocessor : Preprocessor
        Fitted preprocessing.
    estimator : SparseBilinearLogisticRegression
        Fitted on ``preprocessor``'s output with labels ``0 .. n_classes - 1`` (the
        indices into ``classes``).
    classes : list of str
        The user's class labels; ``classes[k]`` is estimator label ``k``.
    metadata : dict | None
        JSON-serialisable information: hyper-parameters tried and chosen with their CV
        scores, epoch counts, rejection counts, software version, etc.
    run_centring : RunCentring | None
        The calibration reference of a model trained on run-centred features
        (:mod:`sblr_rt.model.run_centring`): every score is measured from it, and
        :meth:`decision_function_run` re-estimates a new run's mean as it goes. None: the
        estimator's scores as they are.

    Attributes
    ----------
    ch_names : list of str
        Channels of the raw data, in its own order.
    sfreq : float
        Sampling rate of the raw data.
    tmin, tmax : float
        Window relative to the cue, seconds.
    n_times_raw : int
        Samples per raw epoch (``n_pad`` warm-up + window).
    """

    def __init__(
        self,
        *,
        preprocessor: Preprocessor,
        estimator,
        classes: Sequence[str],
        metadata: dict | None = None,
        run_centring: RunCentring | None = None,
        members: Sequence[BCIModel] | None = None,
        member_weights: Sequence[float] | None = None,
        pool=None,
    ):
        if not isinstance(preprocessor, Preprocessor):
            raise TypeError(
                f"'preprocessor' must be a Preprocessor, got {type(preprocessor).__name__}"
            )
        if not preprocessor.is_fitted:
            raise RuntimeError("'preprocessor' is not fitted: call Preprocessor.fit() first")
        if not hasattr(estimator, "classes_"):
            raise RuntimeError("'estimator' is not fitted: call its fit() first")
        classes = [str(c) for c in classes]
        n_est = len(estimator.classes_)
        if len(classes) != n_est or len(set(classes)) != len(classes):
            raise ValueError(
                f"'classes' must be {n_est} distinct labels (one per estimator class), "
                f"got {classes}"
            )
        if not np.array_equal(np.asarray(estimator.classes_), np.arange(n_est)):
            raise ValueError(
                "the estimator must be fitted on labels 0..n_classes-1 (indices into "
                f"'classes'), got classes_={np.asarray(estimator.classes_).tolist()}"
            )
        self.preprocessor = preprocessor
        self.estimator = estimator
        self.classes = classes
        self.metadata = dict(metadata or {})
        if run_centring is not None:
            if not isinstance(run_centring, RunCentring):
                raise TypeError(
                    f"'run_centring' must be a RunCentring or None, got "
                    f"{type(run_centring).__name__}"
                )
            n_out = np.asarray(estimator.intercept_).size
            if run_centring.reference_score.size != n_out:
                raise ValueError(
                    f"'run_centring' must hold one score per model output ({n_out}), got "
                    f"{run_centring.reference_score.size}"
                )
        self.run_centring = run_centring
        self.members = _check_members(members, self)
        self.member_weights = _check_member_weights(member_weights, self.members)
        if pool is not None and not isinstance(pool, PriorPool):
            raise TypeError(f"'pool' must be a PriorPool or None, got {type(pool).__name__}")
        if pool is not None and self.members:
            raise ValueError("'pool' belongs to a single model (a prior), not to an ensemble")
        #: PriorPool | None: a prior's run-centred training features, which a person's
        #: labelled trials join with a weight (:mod:`sblr_rt.calibration.prior`).
        self.pool = pool

    @classmethod
    def ensemble(
        cls,
        members: Sequence[BCIModel],
        metadata: dict | None = None,
        weights: Sequence[float] | None = None,
    ) -> BCIModel:
        """Return the model whose score is the weighted mean of ``members``' scores.

        Every member reads the same raw channels, rate and window and has the same
        classes; each keeps its own feature path, scaling, estimator and run centring.
        The first member leads: its preprocessing and factors are what :attr:`preprocessor`
        and :attr:`estimator` show (the dashboard, ``inspect``). Run centring of the mean
        score is the weighted mean of the members' run centring, exactly (each is linear in the
        run's running mean), so the ensemble adapts to a run as its members would.

        Parameters
        ----------
        members : sequence of BCIModel
            At least two single models.
        metadata : dict | None
            As for :class:`BCIModel`.
        weights : sequence of float | None
            Each member's weight in the score, non-negative, normalised to sum to 1
            (:attr:`member_weights`); None: equal weights.

        Returns
        -------
        model : BCIModel
            With :attr:`members`.
        """
        members = list(members)
        if len(members) < 2 or not all(isinstance(m, BCIModel) for m in members):
            raise ValueError(
                f"'members' must be two or more BCIModel, got {len(members)} "
                f"({sorted({type(m).__name__ for m in members})})"
            )
        first = members[0]
        w = _check_member_weights(weights, members)
        centring = None
        if all(m.run_centring is not None for m in members):
            centre = np.tensordot(w, [m.run_centring.centre_score for m in members], axes=1)
            warmup = float(np.dot(w, [m.run_centring.warmup for m in members]))
            # The members' scores are already measured from their own references.
            centring = RunCentring(np.zeros_like(centre), centre, warmup)
        return cls(
            preprocessor=first.preprocessor,
            estimator=first.estimator,
            classes=first.classes,
            metadata=metadata,
            run_centring=centring,
            members=members,
            member_weights=w,
        )

    # ------------------------------------------------------------------ description

    ch_names = property(lambda self: list(self.preprocessor.ch_names), doc="Raw channels.")
    sfreq = property(lambda self: self.preprocessor.sfreq, doc="Raw sampling rate (Hz).")
    tmin = property(lambda self: self.preprocessor.tmin, doc="Window start (s).")
    tmax = property(lambda self: self.preprocessor.tmax, doc="Window end (s).")
    n_window = property(lambda self: self.preprocessor.n_window, doc="Window samples.")

    @property
    def n_pad(self) -> int:
        """Filter warm-up samples before the window (an ensemble's: its longest)."""
        return max(m.preprocessor.n_pad for m in self.members or [self])

    @property
    def n_times_raw(self) -> int:
        """Samples of a raw epoch: ``n_pad`` of warm-up, then the window."""
        return self.n_pad + self.n_window

    @property
    def features(self) -> str:
        """The feature path; ``"ensemble"`` for an ensemble (:attr:`members`)."""
        return "ensemble" if self.members else self.preprocessor.features

    @property
    def is_ensemble(self) -> bool:
        """Whether the score is the weighted mean of :attr:`members`' scores."""
        return bool(self.members)

    @property
    def prior_share(self) -> float | None:
        """How much of the decision is still a prior's, in [0, 1]; None without a prior.

        A prior as built: 1. A prior refined with ``k`` of the person's trials: the pool's
        share of the training weight (:meth:`~sblr_rt.model.prior_pool.PriorPool.
        prior_share`). An ensemble: its members' shares weighted by their weights (a member
        without a prior counts 0).
        """
        if self.pool is not None:
            return float((self.metadata.get("prior") or {}).get("share", 1.0))
        shares = [m.prior_share for m in self.members]
        if not any(s is not None for s in shares):
            return None
        return float(sum(w * (s or 0.0) for w, s in zip(self.member_weights, shares, strict=True)))

    @property
    def info(self):
        """An :class:`mne.Info` of the model's channels, placed on the scalp.

        Its channels are the picked channels in the order of the estimator's rows, at the
        raw sampling rate, so a component of U draws as a scalp map without more code::

            mne.viz.plot_topomap(model.estimator.spatial_[:, 0], model.info)

        (``patterns_[0]`` for the Haufe pattern). On the band-power path the rows are
        band-major, ``n_bands`` blocks of these channels: draw
        ``spatial_.reshape(n_bands, n_channels, rank)[band, :, k]``. Channels without a
        known position are left unplaced (see :func:`sblr_rt.montage.make_info`).
        """
        return make_info(self.preprocessor.picks, self.sfreq)

    def scalp_maps(self, component: int = 0, *, patterns: bool = False, klass: int = 0):
        """Return component ``component`` of U as scalp maps over :attr:`info`'s channels.

        One map on the waveform and spectral paths (rows are channels); one per band on
        the band-power path (rows are band-major blocks of channels), in the order of
        ``preprocessor.bands``. So, whatever the path::

            for values in model.scalp_maps(0):
                mne.viz.plot_topomap(values, model.info)

        Parameters
        ----------
        component : int
            Column of U (``0 .. rank - 1``).
        patterns : bool
            The Haufe activation patterns (``spatial_patterns_``) instead of the filters.
        klass : int
            With three or more classes, the class whose factor to draw.

        Returns
        -------
        maps : ndarray, shape (n_maps, n_channels)
        """
        est = self.estimator
        U = est.spatial_patterns_ if patterns else est.spatial_
        if U is None:
            raise ValueError("this model has no spatial patterns; use patterns=False")
        U = np.asarray(U)
        if U.ndim == 3:
            U = U[klass]
        if not 0 <= component < U.shape[1]:
            raise ValueError(
                f"'component' must lie in [0, {U.shape[1] - 1}] (the rank), got {component}"
            )
        n_channels = len(self.preprocessor.picks)
        return U[:, component].reshape(-1, n_channels)

    def __repr__(self) -> str:
        est = self.estimator
        return (
            f"<BCIModel | {self.features}, classes {self.classes}, rank {est.rank}, "
            f"{len(self.ch_names)} channels at {self.sfreq:g} Hz, "
            f"window [{self.tmin:g}, {self.tmax:g}) s, {self.n_times_raw} raw samples>"
        )

    # ------------------------------------------------------------------ prediction

    def transform(self, epochs: np.ndarray) -> np.ndarray:
        """Return the estimator's input ``X`` (n_epochs, n_rows, n_times) of raw ``epochs``.

        ``epochs`` (n_epochs, n_channels, n_times_raw) are in the recording's channel
        order, units and rate, with ``n_pad`` samples of filter warm-up per epoch.
        """
        epochs = np.asarray(epochs)
        return self.preprocessor.transform(
            epochs[..., epochs.shape[-1] - self.preprocessor.n_times_raw :]
        )

    def decision_function(self, epochs: np.ndarray) -> np.ndarray:
        """Return the scores ``tr(U^T X V) + b`` of raw ``epochs`` (see :meth:`transform`).

        Shape (n_epochs,) for two classes, positive meaning ``classes[1]``; else
        (n_epochs, n_classes). A run-centred model's scores are measured from its
        calibration reference (:attr:`run_centring`); each epoch is scored alone.
        """
        if self.members:
            epochs = np.asarray(epochs)
            if epochs.ndim != 3 or epochs.shape[-1] != self.n_times_raw:
                raise ValueError(
                    "'epochs' must have shape (n_epochs, n_channels, n_times_raw = "
                    f"{self.n_times_raw}), got {epochs.shape}"
                )
            return np.tensordot(
                self.member_weights,
                [m.decision_function(epochs[..., self.n_times_raw - m.n_times_raw :])
                 for m in self.members],
                axes=1,
            )  # fmt: skip
        return self.decision_function_features(self.transform(epochs))

    def decision_function_features(self, X: np.ndarray) -> np.ndarray:
        """Scores from already preprocessed input (:meth:`transform`'s output)."""
        if self.members:
            raise ValueError(
                "an ensemble has no single model input: score raw epochs with "
                "decision_function(), got features of its first member"
            )
        scores = self.estimator.decision_function(X)
        if self.run_centring is None:
            return scores
        ref = self.run_centring.reference_score
        return scores - (ref[0] if scores.ndim == 1 else ref)

    def decision_function_run(self, epochs: np.ndarray) -> np.ndarray:
        """Scores of one run's trials in their order, with unsupervised run centring.

        Each trial is scored after the run's running mean has taken it in
        (:class:`~sblr_rt.model.run_centring.RunCentringState`), exactly as the online
        loop scores the trial windows of a stream. Without :attr:`run_centring` this is
        :meth:`decision_function`.

        Parameters
        ----------
        epochs : ndarray, shape (n_epochs, n_channels, n_times_raw)
            The run's raw trial epochs in time order.

        Returns
        -------
        scores : ndarray, shape (n_epochs,) or (n_epochs, n_classes)
        """
        scores = self.decision_function(epochs)
        if self.run_centring is None:
            return scores
        state = self.run_centring.start()
        out = np.array([state.step(np.atleast_1d(s)) for s in scores])
        return out.reshape(scores.shape)

    def predict_proba(self, epochs: np.ndarray) -> np.ndarray:
        """Return class probabilities (n_epochs, n_classes) of raw ``epochs``.

        Columns follow :attr:`classes`; ``epochs`` as in :meth:`transform`.
        """
        return self.labels_from_scores(self.decision_function(epochs))[1]

    def predict(self, epochs: np.ndarray) -> np.ndarray:
        """Return the predicted user labels (n_epochs,), elements of :attr:`classes`.

        ``epochs`` as in :meth:`transform`.
        """
        return self.labels_from_scores(self.decision_function(epochs))[0]

    def predict_run(self, epochs: np.ndarray) -> np.ndarray:
        """Labels of one run's trials in order, run-centred (:meth:`decision_function_run`)."""
        return self.labels_from_scores(self.decision_function_run(epochs))[0]

    def labels_from_scores(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """User labels and probabilities from :meth:`decision_function` scores.

        Parameters
        ----------
        scores : ndarray, shape (n_epochs,) or (n_epochs, n_classes)
            Scores, e.g. computed by a folded fast path.

        Returns
        -------
        labels : ndarray of str, shape (n_epochs,)
        proba : ndarray, shape (n_epochs, n_classes)
        """
        proba = proba_from_scores(scores, getattr(self.estimator, "multi_class", "ovr"))
        return np.asarray(self.classes)[np.argmax(proba, axis=1)], proba

    @property
    def intercept(self) -> np.ndarray:
        """The estimator's intercept as the model scores it (run centring's reference off).

        ``tr(U^T X V) + intercept`` is :meth:`decision_function`, shape as the estimator's
        ``intercept_``.
        """
        b = np.asarray(self.estimator.intercept_, dtype=np.float64)
        if self.run_centring is None:
            return b
        return b - self.run_centring.reference_score.reshape(b.shape)

    # ------------------------------------------------------------------ folding

    def native_factors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fold the waveform path into factors on raw padded epochs.

        ``score = tr(U_n^T X_raw V_n) + b`` for a raw epoch ``X_raw`` of shape
        ``(n_channels, n_times_raw)``, equal to :meth:`decision_function` to floating
        point tolerance (filter, baseline, resampling and scaling are all folded).

        Returns
        -------
        U_n : ndarray, shape (n_channels, rank) or (n_classes, n_channels, rank)
        V_n : ndarray, shape (n_times_raw, rank) or (n_classes, n_times_raw, rank)
        b : ndarray, shape (1,) or (n_classes,)
        """
        if self.members:
            raise ValueError("an ensemble does not fold into one pair of factors")
        S, T = self.preprocessor.linear_operators(include_filter=True)
        U, V = self.estimator.spatial_, self.estimator.temporal_
        return S.T @ U, T @ V, self.intercept

    # ------------------------------------------------------------------ adapting

    def for_channels(self, ch_names: Sequence[str]) -> BCIModel:
        """Return a copy reading raw data with another channel order (or a superset).

        Parameters
        ----------
        ch_names : list of str
            Channel names of the new source; every model channel must be among them.

        Returns
        -------
        model : BCIModel
            Same estimator and metadata; only the channel pick changes.
        """
        if self.members:
            return BCIModel.ensemble(
                [m.for_channels(ch_names) for m in self.members],
                copy.deepcopy(self.metadata),
                self.member_weights,
            )
        return BCIModel(
            preprocessor=self.preprocessor.for_channels(ch_names),
            estimator=self.estimator,
            classes=self.classes,
            metadata=copy.deepcopy(self.metadata),
            run_centring=self.run_centring,
            pool=self.pool,
        )

    def member_lines(self) -> list[str]:
        """Return one line per member of an ensemble (none for a single model).

        Each names the member's feature path and spatial stage, its weight in the decision,
        its rank (used of fitted), whether it is a prior, its weight by scalp region and its
        leading channels, and a flag when its eye or visual share is above the limit of
        :mod:`sblr_rt.regions`.
        """
        lines = []
        for k, (m, w) in enumerate(zip(self.members, self.member_weights, strict=True)):
            est = m.estimator
            regions = weight_regions(m, n_leading=3)
            lead = ", ".join(c for c, _ in regions.leading)
            share = ", ".join(f"{r} {regions.shares[r]:.0%}" for r in ("sensorimotor", "eye"))
            what = f"{m.features}/{spatial_label(m.preprocessor.spatial)}"
            prior = " (a prior across people)" if m.pool is not None else ""
            flag = "; WARNING: eye or visual channels above the limit" if regions.warning else ""
            lines.append(
                f"  member {k}: {what}{prior}, weight {w:.2f}, rank {_rank_used(est)} of "
                f"{est.rank}; {share}; leading {lead}{flag}"
            )
        return lines

    def summary(self) -> str:
        """Return a human-readable multi-line description (used by ``sblr-rt inspect``)."""
        est = self.estimator
        pre = self.preprocessor
        md = self.metadata
        about = [md.get("software_version"), md.get("format_version")]
        about = ", ".join(str(a) if i == 0 else f"format {a}" for i, a in enumerate(about) if a)
        lines = [
            "sblr-rt model"
            + (f" ({about})" if about else "")
            + (f", created {md['created']}" if md.get("created") else ""),
            f"classes: {self.classes}",
            *model_verdict(self).lines(),
        ]
        if self.members:
            names = [
                f"{m.features}/{spatial_label(m.preprocessor.spatial)} "
                f"({m.preprocessor.n_times} times{', prior' if m.pool is not None else ''}) "
                f"weight {w:.2f}"
                for m, w in zip(self.members, self.member_weights, strict=True)
            ]
            lines.append(
                f"ensemble: the weighted mean score of {len(names)} models "
                f"({', '.join(names)}); the first is described below"
            )
        if self.pool is not None:
            lines.append(self.pool.describe())
            lines += _prior_lines(self.metadata.get("prior") or {})
        lines += self.member_lines()
        if self.run_centring is not None:
            lines.append(
                "run centring: on (each new run's mean re-estimated from its trials, warm-up "
                f"{self.run_centring.warmup:g} trial(s))"
            )
        lines += [
            f"features: {pre.features}; window [{pre.tmin:g}, {pre.tmax:g}) s at "
            f"{pre.sfreq:g} Hz = {pre.n_window} samples (+{pre.n_pad} filter warm-up)",
            f"channels: {len(pre.picks)} used of {len(pre.ch_names)} raw",
            f"model input: {pre.n_rows} rows x {pre.n_times} times; scaling {pre.scaling}",
        ]
        lines.append(f"spatial stage: {spatial_label(pre.spatial)}")
        if pre.features == "waveform":
            band = f"band-pass {pre.l_freq}-{pre.h_freq} Hz" if pre.filters else "no band-pass"
            lines.append(f"preprocessing: {band}; baseline {pre.baseline}")
        else:
            what = "over the window" if pre.features == "spectral" else "in time bins"
            bands = ", ".join(f"{lo:g}-{hi:g}" for lo, hi in pre.bands)
            lines.append(
                f"preprocessing: bands {bands} Hz, log mean power {what}, relative to the "
                f"mean over {pre.reference or 'nothing'}"
            )
        lines.append(
            f"estimator: rank {describe_rank(est)}, mu1 {est.mu1:.4g}, mu2 {est.mu2:.4g}, "
            f"nu1 {est.nu1:.4g}, nu2 {est.nu2:.4g}, multi_class {est.multi_class}"
        )
        U = np.asarray(est.spatial_)
        V = np.asarray(est.temporal_)
        lines.append(
            f"sparsity: U {np.count_nonzero(U)}/{U.size} non-zero, "
            f"V {np.count_nonzero(V)}/{V.size} non-zero"
        )
        lines.append(weight_regions(self).describe())  # the warning is in the verdict
        sel = md.get("selection")
        if sel:
            best = sel.get("best", {})
            lines.append(
                f"selection: {sel.get('cv', '?')} CV, search {sel.get('search', '?')}"
                + (f", {len(sel['grid'])} grid points" if sel.get("grid") else "")
                + "; best CV accuracy "
                f"{_number(best.get('mean'))}{spread_text(best.get('std'))}"
            )
            for r in sel.get("ranks", []):
                spread = spread_text(r["std"])
                lines.append(f"  rank {r['rank']}: CV accuracy {r['mean']:.3f}{spread}")
        lines += _auto_lines(sel.get("auto") if sel else None)
        ep = md.get("epochs")
        if ep:
            lines.append(f"epochs: {ep.get('per_class')} used; rejected {ep.get('rejected')}")
        return "\n".join(lines)


def _prior_lines(info: dict) -> list[str]:
    """Return a prior's people and its leave-one-person-out accuracy, for the summary."""
    lines = []
    people = info.get("people") or []
    if people:
        lines.append(f"prior across {len(people)} people: {', '.join(people)}")
    lopo = info.get("lopo") or {}
    per_person = {p: a for p, a in (lopo.get("per_person") or {}).items() if a is not None}
    if per_person:
        worst = min(per_person, key=per_person.get)
        lines.append(
            f"  leave-one-person-out accuracy (each person's runs, run-centred, by the prior of "
            f"the others): mean {np.mean(list(per_person.values())):.3f}, worst "
            f"{per_person[worst]:.3f} ({worst})"
        )
    if info.get("n_trials") is not None:
        lines.append(
            f"  refined with {info['n_trials']} of the person's trials; "
            f"{100 * float(info.get('share', 1.0)):.0f}% of the training weight is the pool's"
        )
    return lines


def _rank_used(est) -> int:
    """Return the components whose spatial and temporal columns are both non-zero."""
    U = np.asarray(est.spatial_).reshape(-1, *np.shape(est.spatial_)[-2:])
    V = np.asarray(est.temporal_).reshape(-1, *np.shape(est.temporal_)[-2:])
    used = np.any(U != 0, axis=(0, 1)) & np.any(V != 0, axis=(0, 1))
    return int(used.sum())


def _check_member_weights(weights, members) -> np.ndarray:
    """Return the members' weights normalised to sum to 1 (empty for a single model)."""
    if not members:
        if weights is not None and len(weights):
            raise ValueError(f"'member_weights' need members, got {len(weights)} weights")
        return np.zeros(0)
    if weights is None:
        return np.full(len(members), 1.0 / len(members))
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.size != len(members) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"'member_weights' must be {len(members)} finite non-negative numbers with a "
            f"positive sum (one per member), got {np.asarray(weights).tolist()}"
        )
    return w / w.sum()


def _check_members(members, model) -> list:
    """Return the ensemble's members as a list (empty: a single model), checked."""
    if members is None:
        return []
    members = list(members)
    for m in members:
        if not isinstance(m, BCIModel) or m.members:
            raise TypeError(
                f"'members' must be single BCIModel (not ensembles), got {type(m).__name__}"
            )
        same = (m.ch_names, m.sfreq, m.tmin, m.tmax, m.classes)
        if same != (model.ch_names, model.sfreq, model.tmin, model.tmax, model.classes):
            raise ValueError(
                "every member must read the same channels, rate and window and have the same "
                f"classes: expected {model.ch_names[:3]}..., {model.sfreq}, "
                f"[{model.tmin}, {model.tmax}), {model.classes}; got {m.ch_names[:3]}..., "
                f"{m.sfreq}, [{m.tmin}, {m.tmax}), {m.classes}"
            )
    return members


def auto_candidate_name(candidate: dict) -> str:
    """Return the name of one ``features="auto"`` candidate of a model file's report.

    Parameters
    ----------
    candidate : dict
        One entry of ``metadata["selection"]["auto"]["candidates"]``.

    Returns
    -------
    name : str
        ``"path/spatial"``, with ``/<n>t`` for a waveform candidate on the coarse grid
        (``"waveform/car/10t"``); files written before the coarse grid have no stored name.

    Examples
    --------
    >>> auto_candidate_name({"features": "spectral", "spatial": None})
    'spectral/none'
    """
    name = candidate.get("name")
    return name or f"{candidate.get('features')}/{candidate.get('spatial') or 'none'}"


def _auto_lines(auto: dict | None) -> list[str]:
    """Return the table of ``features="auto"``: every candidate's cross-validated scores."""
    if not auto:
        return []
    ensemble = auto.get("ensemble") or []
    lines = [
        f"auto: {auto.get('cv', '?')}, chosen by {auto.get('criterion', '?')}: "
        f"{auto.get('chosen', '?')}",
    ]
    dropped, level = auto.get("dropped") or [], auto.get("chance_level")
    if len(ensemble) > 1:
        n = f"{len(ensemble)} of the {len(ensemble) + len(dropped)}" if dropped else len(ensemble)
        lines.append(
            f"  the model averages the {n} candidates of lowest log-loss (* and +): "
            "averaging beat picking one across runs"
        )
    if dropped:
        accs = [c.get("accuracy") for c in auto.get("candidates", []) if auto_candidate_name(c)
                == auto.get("chosen")]  # fmt: skip
        alone = bool(accs) and accs[0] is not None and level is not None and accs[0] <= level
        lines.append(
            f"  left out (CV accuracy not above the chance level {_number(level)}): "
            + ", ".join(f"{d['name']} ({_number(d.get('accuracy'))})" for d in dropped)
            + ("; none beats it, so the first is kept alone" if alone else "")
        )
    lines.append("  path/spatial          log-loss  accuracy   AUC   rank")
    for c in auto.get("candidates", []):
        name = auto_candidate_name(c)
        mark = "*" if name == auto.get("chosen") else "+" if name in ensemble else " "
        lines.append(
            f" {mark}{name:21} {_number(c.get('log_loss')):>8} "
            f"{_number(c.get('accuracy')):>9} {_number(c.get('auc')):>5} "
            f"{c.get('rank', '?'):>5}"
        )
    return lines


def _number(value) -> str:
    """Format a score from the model file (``null`` where it was not finite)."""
    return "n/a" if value is None else f"{value:.3f}"

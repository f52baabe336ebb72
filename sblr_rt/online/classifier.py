"""Classify raw EEG windows: a pure ``step(window)`` and a streaming fast path (no LSL).

:class:`OnlineClassifier` wraps a :class:`~sblr_rt.bci_model.BCIModel` for the online loop.
Its :meth:`~OnlineClassifier.step` is a pure function of a raw window (the model's raw
epoch: ``n_pad`` samples of filter warm-up, then the window ``[tmin, tmax)``), in the
spirit of timeflux's ``update()`` nodes: no I/O, no hidden state, testable on arrays.

Three computation paths give the same scores (to floating-point rounding):

``plain``
    The offline pipeline: filter, baseline, resample, scale (``BCIModel.transform``), then
    ``tr(U^T X V) + b``. The reference.
``folded`` (waveform path)
    Every waveform step is linear, so the whole chain folds into native-rate factors
    ``score = tr(U_n^T X_raw V_n) + b`` (:meth:`BCIModel.native_factors`): one pass over
    the raw window, no filtering or resampling at decision time.
``projected`` (waveform path, streaming)
    Better still, each sample is projected onto the ``r`` folded spatial factors as it
    arrives (:meth:`OnlineClassifier.streaming`), so only ``r`` virtual channels (per class
    for three or more classes) are buffered; a decision is ``r`` dot products of length
    ``n_times_raw``. Filtering needs no state: the FIR filter is folded into ``V_n``.

The band-power path cannot fold the squaring; its streaming state filters each sample
once as it arrives (a block Toeplitz product, so BLAS does the work), buffers the squared
band signals and, per decision, only bins, logs, scales and applies the factors.

Examples
--------
>>> import numpy as np

>>> from sblr_rt.model import SparseBilinearLogisticRegression
>>> from sblr_rt.bci_model import BCIModel
>>> from sblr_rt.preprocessing import Preprocessor
>>> rng = np.random.default_rng(0)
>>> pre = Preprocessor(ch_names=["C3", "C4"], sfreq=100.0, tmin=0.0, tmax=0.5)
>>> raw = rng.standard_normal((40, 2, pre.n_times_raw))
>>> y = np.repeat([0, 1], 20)
>>> raw[y == 1, 0] += 1.0
>>> est = SparseBilinearLogisticRegression().fit(pre.fit(raw).transform(raw), y)
>>> clf = OnlineClassifier(BCIModel(preprocessor=pre, estimator=est, classes=["a", "b"]))
>>> clf.step(raw[-1])["label"]
'b'
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from sblr_rt.model.link import proba_from_scores

__all__ = [
    "OnlineClassifier",
    "StreamingState",
    "check_stream_info",
    "public_decision",
]

#: Keys of a decision as published on ``SBLR-Predictions``.
PUBLIC_KEYS = ("label", "proba", "window_end", "trial", "cue")

_PATHS = ("auto", "plain", "folded")


def public_decision(decision: dict) -> dict:
    """Return the part of a decision that is published: ``label, proba, window_end, trial, cue``.

    Parameters
    ----------
    decision : dict
        A decision from :meth:`OnlineClassifier.step` or :meth:`StreamingState.decide`.

    Returns
    -------
    public : dict
        JSON-serialisable (plain Python types).
    """
    end = decision.get("window_end")
    return {
        "label": decision["label"],
        "proba": decision["proba"],
        "window_end": None if end is None else float(end),
        "trial": bool(decision.get("trial", False)),
        "cue": decision.get("cue"),
    }


def check_stream_info(
    classifier: OnlineClassifier, ch_names: Sequence[str], sfreq: float, *, stream: str = ""
) -> np.ndarray | None:
    """Check a stream's channels and rate against the model.

    Parameters
    ----------
    classifier : OnlineClassifier
        The classifier (its model's raw channels and rate).
    ch_names : list of str
        The stream's channel labels, in its order.
    sfreq : float
        The stream's nominal rate in Hz.
    stream : str
        How to name the stream in messages.

    Returns
    -------
    picks : ndarray of int, shape (n_model_channels,) | None
        Indices of the model's raw channels in the stream's order (None when the stream
        has exactly the model's channels in the model's order).

    Raises
    ------
    ValueError
        If the rate differs (the model's filters and time grid are fixed at its own rate;
        it cannot resample), or if channels the model needs are missing. Extra channels
        and another channel order are accepted (the model's channels are picked by label).
    """
    what = stream or "the stream"
    model_names = list(classifier.ch_names)
    ch_names = [str(c) for c in ch_names]
    if not math.isclose(float(sfreq), classifier.sfreq, rel_tol=1e-9):
        raise ValueError(
            f"{what} runs at {float(sfreq):g} Hz but the model was calibrated at "
            f"{classifier.sfreq:g} Hz; this model cannot resample (its filters and time "
            f"grid are fixed at {classifier.sfreq:g} Hz): stream at {classifier.sfreq:g} Hz "
            f"or calibrate again at {float(sfreq):g} Hz."
        )
    missing = [c for c in model_names if c not in ch_names]
    if missing:
        extra = [c for c in ch_names if c not in model_names]
        more = f"; the stream has instead {_names(extra)}" if extra else ""
        raise ValueError(
            f"{what} lacks {len(missing)} of the model's {len(model_names)} channels: "
            f"{_names(missing)}{more} (got {len(ch_names)} channels)."
        )
    if ch_names == model_names:
        return None
    return np.array([ch_names.index(c) for c in model_names], dtype=np.intp)


def _names(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


class OnlineClassifier:
    """A trained model ready for online use: a pure ``step`` and streaming fast paths.

    Parameters
    ----------
    model : BCIModel
        The trained model (:func:`sblr_rt.load_model`).
    fast : bool
        Use the folded (pure step) and projected (streaming) paths on the waveform path.
        False uses the plain pipeline everywhere (for checking and benchmarks).

    Attributes
    ----------
    model : BCIModel
        The wrapped model.
    ch_names : list of str
        Raw channels the model reads, in its order.
    sfreq : float
        Raw sampling rate in Hz.
    n_times : int
        Samples in a raw window (``n_pad`` filter warm-up + ``n_window``).
    n_pad, n_window : int
        Filter warm-up and window samples.
    classes : list of str
        The user's labels.
    features : str
        ``"waveform"`` or ``"bandpower"``.
    path : str
        The path :meth:`step` uses: ``"folded"`` or ``"plain"``.
    """

    def __init__(self, model, *, fast: bool = True) -> None:
        for attr in ("preprocessor", "estimator", "classes"):
            if not hasattr(model, attr):
                raise TypeError(
                    f"'model' must be a BCIModel (with preprocessor, estimator and classes), "
                    f"got {type(model).__name__}"
                )
        self.model = model
        pre = model.preprocessor
        self.ch_names = list(pre.ch_names)
        self.sfreq = float(pre.sfreq)
        self.n_times = int(pre.n_times_raw)
        self.n_pad = int(pre.n_pad)
        self.n_window = int(pre.n_window)
        self.tmin = float(pre.tmin)
        self.tmax = float(pre.tmax)
        self.classes = [str(c) for c in model.classes]
        self.features = pre.features
        self.fast = bool(fast)
        est = model.estimator
        self._multi_class = getattr(est, "multi_class", "ovr")
        self._binary = len(self.classes) == 2
        # Model-grid factors, stacked per output column: (K, n_rows, r), (K, n_times, r).
        U = np.asarray(est.spatial_, dtype=np.float64)
        V = np.asarray(est.temporal_, dtype=np.float64)
        self._U = U[None] if U.ndim == 2 else U
        self._V = V[None] if V.ndim == 2 else V
        self._b = np.asarray(est.intercept_, dtype=np.float64).reshape(-1)
        self.rank = self._U.shape[2]
        self._n_out = self._U.shape[0]
        self.path = "folded" if (self.fast and pre.is_linear) else "plain"
        if pre.is_linear:
            Un, Vn, _ = model.native_factors()
            Un = Un[None] if Un.ndim == 2 else Un
            Vn = Vn[None] if Vn.ndim == 2 else Vn
            # Columns k * r + j: class k, component j.
            self._Un = np.ascontiguousarray(Un.transpose(1, 0, 2).reshape(Un.shape[1], -1))
            self._Vn = np.ascontiguousarray(Vn.transpose(1, 0, 2).reshape(Vn.shape[1], -1))
            self._Vn_flat = self._Vn.reshape(-1)
        # W_k = U_k V_k^T on the model grid, for scores from model input in one pass.
        self._W = np.einsum("ksr,ktr->kst", self._U, self._V)

    def __repr__(self) -> str:
        return (
            f"<OnlineClassifier | {self.features}, {len(self.ch_names)} channels at "
            f"{self.sfreq:g} Hz, {self.n_times} samples per window, rank {self.rank}, "
            f"{self.path} step>"
        )

    # ------------------------------------------------------------------ pure step
    def check_window(self, window) -> np.ndarray:
        """Validate a raw window.

        Parameters
        ----------
        window : array, shape (n_channels, n_times)
            Raw samples in the model's channel order.

        Returns
        -------
        window : ndarray, shape (n_channels, n_times)
            As a float array.
        """
        window = np.asarray(window)
        expected = (len(self.ch_names), self.n_times)
        if window.shape != expected:
            raise ValueError(
                f"'window' must have shape (n_channels, n_times) = {expected} (the model's "
                f"channels, and {self.n_pad} samples of filter warm-up before the "
                f"{self.n_window}-sample window), got {window.shape}"
            )
        if not np.issubdtype(window.dtype, np.number):
            raise TypeError(f"'window' must be numeric, got dtype {window.dtype}")
        return window

    def decision_function(self, window, *, path: str = "auto") -> np.ndarray:
        """Return the model's scores for one raw window.

        Parameters
        ----------
        window : array, shape (n_channels, n_times)
            Raw samples in the model's channel order (:attr:`ch_names`), ``n_times =
            n_pad + n_window``.
        path : {"auto", "plain", "folded"}
            ``"auto"`` uses :attr:`path`.

        Returns
        -------
        scores : ndarray, shape (n_outputs,)
            One score for two classes (positive means ``classes[1]``), else one per class.
        """
        if path not in _PATHS:
            raise ValueError(f"'path' must be one of {_PATHS}, got {path!r}")
        window = self.check_window(window)
        path = self.path if path == "auto" else path
        if path == "folded":
            if not hasattr(self, "_Un"):
                raise ValueError(
                    "'path'='folded' needs the waveform feature path, got "
                    f"features={self.features!r}"
                )
            # (n_ch, n_times) @ (n_times, K r), then the spatial factor, per column.
            cols = np.einsum("ct,tj,cj->j", window, self._Vn, self._Un, optimize=True)
            return cols.reshape(self._n_out, self.rank).sum(axis=1) + self._b
        X = self.model.transform(window[None])[0]
        return self.scores_from_features(X)

    def scores_from_features(self, X: np.ndarray) -> np.ndarray:
        """Return ``tr(U^T X V) + b`` per output for one model input ``X`` (n_rows, n_times)."""
        return np.einsum("kst,st->k", self._W, X) + self._b

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
        scores = np.asarray(scores, dtype=np.float64)
        rows = scores[:1] if self._binary else scores[None]
        proba = proba_from_scores(rows, self._multi_class)[0].tolist()
        label = self.classes[int(np.argmax(proba))]
        return label, dict(zip(self.classes, proba, strict=True))

    def step(
        self,
        window,
        *,
        window_end: float | None = None,
        trial: bool = False,
        cue: str | None = None,
        path: str = "auto",
    ) -> dict:
        """Classify one raw window: a pure function, no state is read or changed.

        Parameters
        ----------
        window : array, shape (n_channels, n_times)
            Raw samples in the model's channel order, ``n_times = n_pad + n_window``
            (the raw epoch of :class:`~sblr_rt.bci_model.BCIModel`).
        window_end : float | None
            Timestamp of the window's last sample (copied into the decision).
        trial : bool
            Whether this is a trial (cue-locked) decision.
        cue : str | None
            The cue's marker value, for trial decisions.
        path : {"auto", "plain", "folded"}
            Computation path (same numbers to rounding).

        Returns
        -------
        decision : dict
            ``label`` (str), ``proba`` ({label: float}), ``score`` (float for two
            classes, else list of float), ``window_end``, ``trial``, ``cue``. Windows
            holding NaN give NaN scores and ``label`` None: check with
            :func:`numpy.isfinite` before calling, as the loop does.
        """
        scores = self.decision_function(window, path=path)
        return self._decision(scores, window_end, trial, cue)

    def _decision(self, scores, window_end, trial, cue) -> dict:
        if not np.all(np.isfinite(scores)):
            label, proba = None, dict.fromkeys(self.classes, float("nan"))
        else:
            label, proba = self.decide(scores)
        return {
            "label": label,
            "proba": proba,
            "score": float(scores[0]) if self._binary else [float(s) for s in scores],
            "window_end": window_end,
            "trial": bool(trial),
            "cue": cue,
        }

    # ------------------------------------------------------------------ streaming
    def streaming(self, *, capacity: int | None = None, path: str = "auto") -> StreamingState:
        """Return a fresh streaming state fed sample by sample (the loop's fast path).

        Parameters
        ----------
        capacity : int | None
            Samples of history kept (at least one window); default two windows.
        path : {"auto", "plain", "projected", "filtered"}
            ``"projected"`` (waveform), ``"filtered"`` (band power) or ``"plain"`` (raw
            samples buffered, :meth:`step` on each window). ``"auto"``: the fast one of
            the model's feature path, or plain when ``fast=False``.

        Returns
        -------
        state : StreamingState
            See :class:`StreamingState`.
        """
        if path == "auto":
            if not self.fast:
                path = "plain"
            else:
                path = "projected" if self.features == "waveform" else "filtered"
        return StreamingState(self, capacity=capacity, path=path)


class _Ring:
    """Rows of samples with absolute indices; every span of ``capacity`` rows is contiguous.

    Each row is written twice (at ``i % capacity`` and ``+ capacity``), so a window is a
    view, never a copy, whatever the wrap-around.
    """

    def __init__(self, n_cols: int, capacity: int, dtype=np.float64) -> None:
        self.capacity = int(capacity)
        self.data = np.zeros((2 * self.capacity, n_cols), dtype=dtype)
        self.n = 0

    def push(self, rows: np.ndarray) -> None:
        n = rows.shape[0]
        if n > self.capacity:
            self.n += n - self.capacity
            rows = rows[-self.capacity :]
            n = self.capacity
        pos = self.n % self.capacity
        first = min(n, self.capacity - pos)
        cap = self.capacity
        self.data[pos : pos + first] = rows[:first]
        self.data[pos + cap : pos + cap + first] = rows[:first]
        if first < n:
            self.data[: n - first] = rows[first:]
            self.data[cap : cap + n - first] = rows[first:]
        self.n += n

    def skip(self, n: int) -> None:
        self.n += int(n)

    def view(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start..stop-1`` (absolute); the caller checks they are held."""
        pos = start % self.capacity
        return self.data[pos : pos + (stop - start)]


class StreamingState:
    """Samples in, decisions on any recent window out: the fast path of the online loop.

    Obtained from :meth:`OnlineClassifier.streaming`. Feed raw chunks with :meth:`push`
    (model channel order); samples get absolute indices from 0. Then
    :meth:`decide(stop) <decide>` classifies the raw window of samples ``stop - n_times``
    up to ``stop - 1``, with the same result (to rounding) as :meth:`OnlineClassifier.step`
    on those samples. Not thread-safe: one thread feeds and decides.

    Samples with NaN are stored as zeros and remembered; a window that holds one, or that
    straddles a break (:meth:`mark_break`, :meth:`skip`), is refused by :meth:`why_not`.
    No filter state needs resetting: the FIR filter forgets everything older than
    ``n_pad`` samples, and that warm-up is part of every window.

    Parameters
    ----------
    classifier : OnlineClassifier
        The classifier.
    capacity : int | None
        Samples of history kept; default two windows.
    path : {"projected", "filtered", "plain"}
        See :meth:`OnlineClassifier.streaming`.

    Attributes
    ----------
    n_pushed : int
        Samples pushed (or skipped) so far; the next sample's index.
    n_times : int
        Samples per raw window.
    path : str
        The computation path.
    """

    _BLOCK = 64  # samples per Toeplitz filter block (bounds the matrix size)

    def __init__(self, classifier: OnlineClassifier, *, capacity=None, path="projected"):
        clf = classifier
        self.classifier = clf
        self.n_times = clf.n_times
        capacity = 2 * clf.n_times if capacity is None else int(capacity)
        if capacity < clf.n_times:
            raise ValueError(
                f"'capacity' must hold at least one window ({clf.n_times} samples), got {capacity}"
            )
        self.capacity = capacity
        self.path = path
        self._n_ch = len(clf.ch_names)
        self._times = _Ring(1, capacity)
        # Recent runs of samples with NaN, [first, last] absolute; recent breaks (index of
        # the first sample after a discontinuity). Pruned once older than the history.
        self._nan_runs: deque[list[int]] = deque()
        self._breaks: deque[int] = deque()
        self._skipped: deque[list[int]] = deque()  # runs of lost samples, like _nan_runs
        if path == "projected":
            if not hasattr(clf, "_Un"):
                raise ValueError(
                    "'path'='projected' needs the waveform feature path, got "
                    f"features={clf.features!r}"
                )
            self._ring = _Ring(clf._Un.shape[1], capacity)
        elif path == "filtered":
            self._init_filtered(clf)
        elif path == "plain":
            self._ring = _Ring(self._n_ch, capacity)
        else:
            raise ValueError(
                f"'path' must be one of ('projected', 'filtered', 'plain'), got {path!r}"
            )

    def _init_filtered(self, clf) -> None:
        pre = clf.model.preprocessor
        if pre.features != "bandpower":
            raise ValueError(
                f"'path'='filtered' is for the bandpower feature path, got {pre.features!r}"
            )
        self._picks = np.asarray(pre.pick_indices, dtype=np.intp)
        self._taps = np.stack([np.asarray(b, dtype=np.float64) for b in pre.filters])
        self._m = self._taps.shape[1]
        n_pick = len(self._picks)
        # Raw picked history: the filter needs the last m - 1 samples before each block.
        self._raw = _Ring(n_pick, max(self._m - 1 + self._BLOCK, 2 * self._BLOCK))
        self._raw.push(np.zeros((self._m - 1, n_pick)))  # zero initial state
        # Running sums of the squared band signals (band-major columns): a bin's power is a
        # difference of two rows, so a decision reads n_bins + 1 rows, not the window.
        self._ring = _Ring(n_pick * self._taps.shape[0], self.capacity)
        self._csum = np.zeros(n_pick * self._taps.shape[0])
        self._since_rebase = 0
        self._toeplitz: dict[int, np.ndarray] = {}
        edges = np.asarray(pre._edges)
        self._edges = edges
        self._counts = np.diff(edges).astype(np.float64)
        self._tiny = np.finfo(np.float64).tiny

    # ------------------------------------------------------------------ feeding
    @property
    def n_pushed(self) -> int:
        """Samples pushed or skipped so far (the next sample's absolute index)."""
        return self._times.n

    def count_nan(self, chunk: np.ndarray) -> int:
        """Return the number of samples (rows) of ``chunk`` holding NaN (no side effect)."""
        if chunk.size == 0:
            return 0
        return int(np.count_nonzero(np.isnan(chunk).any(axis=1)))

    def push(self, chunk: np.ndarray, timestamps: np.ndarray) -> None:
        """Append raw samples.

        Parameters
        ----------
        chunk : ndarray, shape (n_samples, n_channels)
            Raw samples in the model's channel order (LSL's layout).
        timestamps : ndarray, shape (n_samples,)
            Their timestamps.
        """
        n = chunk.shape[0]
        if n == 0:
            return
        if chunk.ndim != 2 or chunk.shape[1] != self._n_ch:
            raise ValueError(
                f"'chunk' must have shape (n_samples, {self._n_ch}), got {chunk.shape}"
            )
        start = self.n_pushed
        bad = np.isnan(chunk).any(axis=1)
        if bad.any():
            self._note_nan(start + np.flatnonzero(bad))
            chunk = np.where(bad[:, None], 0.0, chunk)
        if self.path == "projected":
            self._ring.push(chunk @ self.classifier._Un)
        elif self.path == "plain":
            self._ring.push(chunk)
        else:
            self._push_filtered(chunk[:, self._picks])
        self._times.push(np.asarray(timestamps, dtype=np.float64)[:, None])
        if self._nan_runs or self._breaks or self._skipped:
            self._prune()

    def _note_nan(self, indices: np.ndarray) -> None:
        runs = self._nan_runs
        cuts = np.flatnonzero(np.diff(indices) > 1)
        for first, last in zip(
            indices[np.r_[0, cuts + 1]], indices[np.r_[cuts, len(indices) - 1]], strict=True
        ):
            if runs and runs[-1][1] + 1 >= first:
                runs[-1][1] = int(last)
            else:
                runs.append([int(first), int(last)])
        self._prune()

    def _prune(self) -> None:
        oldest = self.n_pushed - self.capacity
        while self._nan_runs and self._nan_runs[0][1] < oldest:
            self._nan_runs.popleft()
        while self._skipped and self._skipped[0][1] < oldest:
            self._skipped.popleft()
        while self._breaks and self._breaks[0] <= oldest:
            self._breaks.popleft()

    def _push_filtered(self, picked: np.ndarray) -> None:
        for i in range(0, picked.shape[0], self._BLOCK):
            block = picked[i : i + self._BLOCK]
            h = block.shape[0]
            self._raw.push(block)
            n = self._raw.n
            hist = self._raw.view(n - h - self._m + 1, n)  # (m - 1 + h, n_pick)
            y = self._toeplitz_for(h) @ hist  # (n_bands * h, n_pick)
            n_bands = self._taps.shape[0]
            # (n_bands, h, n_pick) -> (h, n_bands * n_pick): band-major columns.
            power = np.square(y).reshape(n_bands, h, -1).transpose(1, 0, 2).reshape(h, -1)
            csum = np.cumsum(power, axis=0)
            csum += self._csum
            self._csum = csum[-1].copy()
            self._ring.push(csum)
            self._since_rebase += h
        if self._since_rebase >= self.capacity:
            # Keep the running sums small (their rounding error grows with their size):
            # subtract the oldest held row from every stored row; differences are unchanged.
            base = self._ring.view(self._ring.n - self.capacity, self._ring.n)[0].copy()
            self._ring.data -= base
            self._csum -= base
            self._since_rebase = 0

    def _toeplitz_for(self, h: int) -> np.ndarray:
        T = self._toeplitz.get(h)
        if T is None:
            m = self._m
            n_bands = self._taps.shape[0]
            T = np.zeros((n_bands * h, m - 1 + h))
            rev = self._taps[:, ::-1]
            for j in range(h):
                T[j::h][:, j : j + m] = rev
            self._toeplitz[h] = T
        return T

    def skip(self, n: int) -> None:
        """Advance by ``n`` samples that were lost (no window may span them)."""
        n = int(n)
        if n <= 0:
            return
        self.mark_break()
        self._skipped.append([self.n_pushed, self.n_pushed + n - 1])
        self._ring.skip(n)
        self._times.skip(n)
        if self.path == "filtered":
            self._raw.push(np.zeros((min(n, self._raw.capacity), self._raw.data.shape[1])))
        self.mark_break()

    def mark_break(self) -> None:
        """Declare a discontinuity before the next sample (a gap in the stream)."""
        if not self._breaks or self._breaks[-1] != self.n_pushed:
            self._breaks.append(self.n_pushed)
        self._prune()

    reset = mark_break

    # ------------------------------------------------------------------ deciding
    def timestamp(self, index: int) -> float:
        """Timestamp of the held sample at absolute ``index``."""
        return float(self._times.view(index, index + 1)[0, 0])

    def trial_stop(self, t_cue: float) -> int | None:
        """Return the ``stop`` index of the trial window of a cue at time ``t_cue``.

        The cue's sample is the held sample nearest to ``t_cue``; the window ends at
        ``onset + round(tmax * sfreq)`` (exclusive), as in
        :class:`~sblr_rt.bci_model.BCIModel`'s epoch convention.

        Parameters
        ----------
        t_cue : float
            The marker's timestamp (same clock as the samples).

        Returns
        -------
        stop : int | None
            None while no sample at or after ``t_cue`` has arrived; ``-1`` if the cue
            precedes the samples held.
        """
        n = self.n_pushed
        first = max(0, n - self.capacity)
        if n == 0:
            return None
        times = self._times.view(first, n)[:, 0]
        if t_cue > times[-1]:
            return None
        k = int(np.searchsorted(times, t_cue))
        if k == 0:
            if t_cue < times[0] - 0.5 / self.classifier.sfreq:
                return -1
            onset = first
        else:
            onset = first + (k if times[k] - t_cue < t_cue - times[k - 1] else k - 1)
        clf = self.classifier
        # Window [onset + round(tmin sfreq), + n_window); raw epoch n_pad earlier.
        return onset + round(clf.tmin * clf.sfreq) + clf.n_window

    def why_not(self, stop: int) -> str | None:
        """Return why the window ending before ``stop`` cannot be classified, or None.

        Returns
        -------
        reason : str | None
            ``"future"`` (not all samples arrived), ``"unavailable"`` (before the first
            sample, or overwritten), ``"gap"`` (straddles a break), ``"nan"`` (holds NaN),
            or None when the window can be classified.
        """
        start = stop - self.n_times
        n = self.n_pushed
        if stop > n:
            return "future"
        if start < 0 or start < n - self.capacity:
            return "unavailable"
        if any(start < b < stop for b in self._breaks) or any(
            first < stop and last >= start for first, last in self._skipped
        ):
            return "gap"
        if any(first < stop and last >= start for first, last in self._nan_runs):
            return "nan"
        return None

    def decide(self, stop: int, *, trial: bool = False, cue: str | None = None) -> dict:
        """Classify the raw window of samples ``stop - n_times`` .. ``stop - 1``.

        Parameters
        ----------
        stop : int
            Absolute index one past the window's last sample.
        trial : bool
            Whether this is a trial decision.
        cue : str | None
            The cue's marker value.

        Returns
        -------
        decision : dict
            As :meth:`OnlineClassifier.step`, with ``window_end`` the last sample's
            timestamp.

        Raises
        ------
        ValueError
            If the window cannot be classified (see :meth:`why_not`).
        """
        reason = self.why_not(stop)
        if reason is not None:
            raise ValueError(
                f"the window ending before sample {stop} cannot be classified: {reason} "
                f"(check StreamingState.why_not first); got 'stop'={stop}"
            )
        clf = self.classifier
        start = stop - self.n_times
        view = self._ring.view(start, stop)
        if self.path == "projected":
            if clf._n_out == 1:  # two classes: one dot product over the window's r columns
                scores = np.dot(view.reshape(-1), clf._Vn_flat) + clf._b
            else:
                cols = np.einsum("tj,tj->j", view, clf._Vn)
                scores = cols.reshape(clf._n_out, clf.rank).sum(axis=1) + clf._b
        elif self.path == "plain":
            scores = clf.decision_function(view.T, path="plain")
        else:
            # Running sums just before each bin edge; the first edge is the window's first
            # sample, whose predecessor is in the warm-up part of the view (n_pad >= 1).
            csum = view[clf.n_pad - 1 + self._edges]  # (n_bins + 1, n_rows)
            sums = np.diff(csum, axis=0)
            Z = np.log(np.maximum(sums.T / self._counts, self._tiny))
            pre = clf.model.preprocessor
            X = (Z - pre.row_offset_[:, None]) / (
                pre.row_scale_[:, None] * pre.col_scale_[None, :]
            )
            scores = clf.scores_from_features(X)
        return clf._decision(scores, self.timestamp(stop - 1), trial, cue)

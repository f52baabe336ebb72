"""From a raw window at the source rate to the model's input: one object, offline and online.

A :class:`Preprocessor` is configured once (during calibration), fitted once (only the
scaling is learned from data) and saved inside the model file. It owns what every feature
path shares: channel selection and order by label, the epoch window, the causal filters
(:mod:`.filters`), the scaling (:mod:`.scaling`) and (de)serialising; what differs between
paths lives in :mod:`.features`: ``"waveform"`` (the paper's input, every step linear:
band-pass, baseline, resampling to the model's grid, scaling) and ``"bandpower"`` (log
mean power in time bins per band, rows channels x bands, band-major).

Causal filtering and exactness
------------------------------
All filters are causal FIR filters (:mod:`.filters`). Because a filter has a finite
impulse response of ``n_pad = numtaps - 1`` samples, its output no longer depends on the
initial state once ``n_pad`` samples have been seen: a stream joined at any time gives
the offline numbers after that warm-up. A raw *epoch* handed to :meth:`Preprocessor.
transform` (and to :class:`sblr_rt.bci_model.BCIModel`) therefore carries ``n_pad``
samples of pre-padding before the window: ``n_times_raw = n_pad + n_window`` samples, the
last ``n_window`` of which span ``[tmin, tmax)`` relative to the cue. Without a filter,
``n_pad == 0``.

Sample conventions: for a cue at sample ``onset`` (``round(t_cue * sfreq)``), the window
holds samples ``onset + round(tmin * sfreq) + arange(n_window)`` with ``n_window =
round((tmax - tmin) * sfreq)``; the raw epoch starts ``n_pad`` samples earlier.

Examples
--------
>>> import numpy as np
>>> pre = Preprocessor(ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0,
...                    n_times=50)
>>> rng = np.random.default_rng(0)
>>> pre.fit(rng.standard_normal((10, 3, pre.n_times_raw))).transform(
...     rng.standard_normal((4, 3, pre.n_times_raw))).shape
(4, 3, 50)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sblr_rt.preprocessing._checks import (
    PARAMETER_RULES,
    check_epochs,
    check_picks,
    check_spatial_matrix,
    window_samples,
)
from sblr_rt.preprocessing._serialise import saved_config
from sblr_rt.preprocessing.features import FEATURE_PATHS, FeaturePath, centres_rows
from sblr_rt.preprocessing.filters import StreamingFilter, filter_padded_epochs
from sblr_rt.preprocessing.operators import fir_matrix
from sblr_rt.preprocessing.scaling import apply_scaling, fit_scaling
from sblr_rt.preprocessing.spatial import apply_spatial, spatial_operator

__all__ = ["Preprocessor"]


class Preprocessor(TransformerMixin, BaseEstimator):
    """Turn raw windows ``(n_channels, n_times_raw)`` into model input, offline and online.

    Parameters
    ----------
    ch_names : list of str
        Channel names of the raw data in its own order (the recording's or stream's).
    sfreq : float
        Sampling rate of the raw data in Hz.
    tmin, tmax : float
        Epoch window relative to the cue in seconds, ``[tmin, tmax)``.
    picks : list of str | None
        Model channels by label, in the model's order; None keeps every channel.
    features : {"waveform", "bandpower", "spectral"}
        The feature path (:mod:`.features`).
    l_freq, h_freq : float | None
        Waveform path: optional causal band-pass edges in Hz (None: no filter on that
        side; both None: no filter).
    bands : sequence of (float, float) | None
        Power paths: the frequency bands in Hz (None: the path's default, 8-13 and
        13-30 Hz for band power, 2 Hz bands from 6 to 34 Hz for the spectral path).
    n_times : int | None
        Points of the model's time grid: waveform, resampled points (default
        ``min(100, n_window)``); bandpower, time bins (default 8).
    baseline : (float, float) | None
        Waveform path: subtract each channel's mean over this interval (seconds, same
        reference as ``tmin``; it must lie in the window) before resampling.
    scaling : {"channel", "channel_time", None}
        Divide each row (channel, or channel x band) by its RMS over the training epochs
        and time points; ``"channel_time"`` then also divides each time point by its RMS
        (a separable product, which keeps the bilinear structure, unlike per-entry
        z-scoring). The bandpower path also centres each row (log powers have arbitrary
        offsets). The waveform path never centres, so it stays linear.
    filter_length : float | None
        FIR length in seconds; None chooses it from the transition width
        (:func:`design_fir`).
    spatial : {None, "car", "csd"}
        The spatial stage applied to the picked channels before any filter
        (:mod:`.spatial`): none, common average reference, or surface Laplacian.
    reference : {"default", "channels", "bands", None}
        Power paths: the per-window log-power reference (:mod:`.features`);
        ``"default"`` takes the path's own (``"channels"`` for band power, ``"bands"``
        for the spectral path).
    spatial_matrix : array, shape (n_picks, n_picks) | None
        The spatial stage's operator when it is already known (a loaded model); None
        computes it from ``spatial`` and the picks.

    Attributes
    ----------
    row_offset_, row_scale_ : ndarray, shape (n_rows,)
        Fitted centring (bandpower only; zeros otherwise) and scale of each row.
    col_scale_ : ndarray, shape (n_columns,)
        Fitted scale of each time point (ones unless ``scaling="channel_time"``).

    Notes
    -----
    A scikit-learn estimator whose parameters are kept as given: :meth:`get_params`
    returns them, :func:`sklearn.base.clone` copies an unfitted preprocessor of the same
    design, and :meth:`set_params` designs it again. Unlike most estimators it checks its
    parameters and designs its filters when it is made, so that a wrong design fails where
    it is written and an epoch's length (:attr:`n_times_raw`) is known before any data.
    What the parameters resolve to is read through :attr:`pick_names`,
    :attr:`freq_bands`, :attr:`n_columns`, :attr:`log_power_reference` and
    :attr:`spatial_operator`; :meth:`get_config` stores those, so a saved model reads
    the same however its design was written.
    """

    def __init__(
        self,
        *,
        ch_names: Sequence[str],
        sfreq: float,
        tmin: float,
        tmax: float,
        picks: Sequence[str] | None = None,
        features: str = "waveform",
        l_freq: float | None = None,
        h_freq: float | None = None,
        bands: Sequence[Sequence[float]] | None = None,
        n_times: int | None = None,
        baseline: Sequence[float] | None = None,
        scaling: str | None = "channel",
        filter_length: float | None = None,
        spatial: str | None = None,
        reference: str | None = "default",
        spatial_matrix: np.ndarray | None = None,
    ):
        self.ch_names = ch_names
        self.sfreq = sfreq
        self.tmin = tmin
        self.tmax = tmax
        self.picks = picks
        self.features = features
        self.l_freq = l_freq
        self.h_freq = h_freq
        self.bands = bands
        self.n_times = n_times
        self.baseline = baseline
        self.scaling = scaling
        self.filter_length = filter_length
        self.spatial = spatial
        self.reference = reference
        self.spatial_matrix = spatial_matrix
        self._design()

    def _design(self) -> None:
        """Check the parameters and design the preprocessing from them (private state).

        Every parameter keeps the value it was given (:meth:`get_params` returns it, so
        :func:`sklearn.base.clone` and :meth:`set_params` round-trip); what they resolve
        to is read through :attr:`pick_names`, :attr:`freq_bands`, :attr:`n_columns`,
        :attr:`log_power_reference` and :attr:`spatial_operator`.
        """
        p = {name: rule.check(name, getattr(self, name)) for name, rule in PARAMETER_RULES.items()}
        self._ch_names = p["ch_names"]
        self._sfreq, self._tmin, self._tmax = p["sfreq"], p["tmin"], p["tmax"]
        self._n_window = window_samples(self._sfreq, self._tmin, self._tmax)
        self._picks, self._pick_indices = check_picks(p["picks"], self._ch_names)
        self._l_freq, self._h_freq, self._baseline = p["l_freq"], p["h_freq"], p["baseline"]
        path = FEATURE_PATHS[p["features"]]
        self._bands = list(path.default_bands() if p["bands"] is None else p["bands"])
        self._scaling, self._filter_length = p["scaling"], p["filter_length"]
        numtaps = None if self._filter_length is None else round(self._filter_length * self._sfreq)
        self._path: FeaturePath = path.from_params(
            sfreq=self._sfreq,
            tmin=self._tmin,
            tmax=self._tmax,
            n_window=self._n_window,
            l_freq=self._l_freq,
            h_freq=self._h_freq,
            bands=self._bands,
            n_times=p["n_times"],
            baseline=self._baseline,
            numtaps=numtaps,
            reference=p["reference"],
            n_picks=len(self._picks),
        )
        matrix = self.spatial_matrix
        if matrix is None:
            matrix = spatial_operator(self.spatial, self._picks)
        self._spatial = check_spatial_matrix(matrix, self.spatial, len(self._picks))

    def set_params(self, **params) -> Preprocessor:
        """Set parameters and design the preprocessing again; the scaling must be refitted.

        Returns
        -------
        self : Preprocessor
            Not fitted.

        Raises
        ------
        ValueError, TypeError
            If the new design is invalid; the preprocessor is then left as it was.
        """
        before = self.get_params(deep=False)
        try:
            super().set_params(**params)
            self._design()
        except Exception:
            super().set_params(**before)
            self._design()
            raise
        for name in ("row_offset_", "row_scale_", "col_scale_"):
            self.__dict__.pop(name, None)
        return self

    # ------------------------------------------------------------ resolved design

    @property
    def pick_names(self) -> list[str]:
        """The model's channels by label, in the model's order (``picks`` resolved)."""
        return self._picks

    @property
    def pick_indices(self) -> np.ndarray:
        """Index of each of :attr:`pick_names` in ``ch_names``, shape (n_picks,)."""
        return self._pick_indices

    @property
    def freq_bands(self) -> list[tuple[float, ...]]:
        """The power paths' bands in Hz (``bands`` resolved; the path's default for None)."""
        return self._bands

    @property
    def n_columns(self) -> int:
        """Columns of the model input: time points, time bins, bands or channels.

        ``n_times`` resolved (the path's default for None).
        """
        return self._path.n_times

    @property
    def log_power_reference(self) -> str | None:
        """The power paths' per-window log-power reference (``reference`` resolved).

        ``"channels"``, ``"bands"`` or None (:mod:`.features`); None for the waveform path.
        """
        return getattr(self._path, "reference", None)

    @property
    def spatial_operator(self) -> np.ndarray | None:
        """The spatial stage's operator ``(n_picks, n_picks)``, or None without a stage."""
        return self._spatial

    @property
    def n_window(self) -> int:
        """Samples of the epoch window ``[tmin, tmax)`` at ``sfreq``."""
        return self._n_window

    @property
    def filters(self) -> list[np.ndarray]:
        """The causal FIR filters' coefficients (one per band on the power paths)."""
        return self._path.filters

    @property
    def n_pad(self) -> int:
        """Samples of filter warm-up before the window in a raw epoch (0 without a filter)."""
        return len(self.filters[0]) - 1 if self.filters else 0

    # ---------------------------------------------------------------- description

    def __repr__(self) -> str:
        fitted = "fitted" if self.is_fitted else "not fitted"
        return (
            f"<Preprocessor | {self.features}, {len(self._picks)}/{len(self._ch_names)} "
            f"channels at {self._sfreq:g} Hz, window [{self._tmin:g}, {self._tmax:g}) s -> "
            f"({self.n_rows}, {self.n_columns}), {fitted}>"
        )

    @property
    def is_fitted(self) -> bool:
        """Whether the scaling has been fitted."""
        return getattr(self, "row_scale_", None) is not None

    @property
    def centres_rows(self) -> bool:
        """Whether the scaling centres each row first (:func:`.features.centres_rows`)."""
        return centres_rows(self.features)

    @property
    def is_linear(self) -> bool:
        """True for the waveform path (foldable into native-rate factors)."""
        return self._path.linear

    @property
    def n_times_raw(self) -> int:
        """Samples of a raw epoch: ``n_pad`` of filter warm-up, then the window."""
        return self.n_pad + self.n_window

    @property
    def n_rows(self) -> int:
        """Rows of the model input (channels, or channels x bands)."""
        return self._path.n_rows(len(self._picks))

    @property
    def row_names(self) -> list[str]:
        """Names of the model input's rows (``"C3"`` or ``"C3 8-13Hz"``)."""
        return self._path.row_names(self._picks)

    @property
    def times(self) -> np.ndarray:
        """Time of each model grid point relative to the cue, in seconds."""
        return self._tmin + self._path.grid_index() / self._sfreq

    @property
    def bin_edges(self) -> np.ndarray:
        """Power paths: sample edges of the time bins in the window, (n_bins + 1,)."""
        if self.is_linear:
            raise ValueError(f"'bin_edges' exists for the power paths only, got {self.features!r}")
        return self._path.edges.copy()

    @property
    def freqs(self) -> np.ndarray:
        """Spectral path: centre frequency of each model column in Hz, (n_times,)."""
        if self.features != "spectral":
            raise ValueError(f"'freqs' exists for the spectral path only, got {self.features!r}")
        return self._path.freqs

    @property
    def temporal_matrix(self) -> np.ndarray:
        """Waveform path: baseline and resampling, ``(n_window, n_times)``."""
        return self._path.temporal

    @property
    def window_times(self) -> np.ndarray:
        """Time of each raw window sample relative to the cue, shape (n_window,)."""
        return self._tmin + np.arange(self.n_window) / self._sfreq

    # ------------------------------------------------------------------- filtering

    def make_streaming_filter(self) -> StreamingFilter:
        """Return a fresh :class:`StreamingFilter` for raw chunks in ``ch_names`` order.

        Returns
        -------
        filt : StreamingFilter
            ``filt.process(chunk (n_channels, n_samples)) -> (n_filtered, n_samples)``
            with the picked channels filtered (band-major for the bandpower path).
        """
        return StreamingFilter(
            self.filters, self.pick_indices, len(self._ch_names), spatial=self._spatial
        )

    def filter_continuous(self, data: np.ndarray) -> np.ndarray:
        """Pick and filter a continuous recording from a zero initial state.

        Parameters
        ----------
        data : array, shape (n_channels, n_samples)
            Raw data in ``ch_names`` order.

        Returns
        -------
        filtered : ndarray, shape (n_filtered, n_samples)
            Equal (to rounding) to feeding the same samples to
            :meth:`make_streaming_filter`'s filter in chunks of any size.
        """
        return self.make_streaming_filter().process(data)

    def filter_epochs(self, epochs: np.ndarray, *, spatial: bool = True) -> np.ndarray:
        """Filter padded raw epochs and drop the pad.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order with ``n_pad`` samples of pre-padding.
        spatial : bool
            Apply the spatial stage (False: leave it to :meth:`apply_spatial`, e.g. to
            filter once for several stages).

        Returns
        -------
        windows : ndarray, shape (n_epochs, n_filtered, n_window)
            Equal to the same window cut from :meth:`filter_continuous`'s output.
        """
        epochs = check_epochs(epochs, len(self._ch_names), self.n_pad, self.n_window)
        picked = np.ascontiguousarray(epochs[:, self.pick_indices], dtype=np.float64)
        if self.filters:
            picked = filter_padded_epochs(self.filters, picked, self.n_pad)
        return self.apply_spatial(picked) if spatial else picked

    def filter_stretch(self, stretch: np.ndarray) -> np.ndarray:
        """Filter one padded raw stretch of any length and drop the pad.

        Parameters
        ----------
        stretch : array, shape (n_channels, n_pad + n_samples)
            Raw samples in ``ch_names`` order, ``n_samples >= 1``.

        Returns
        -------
        filtered : ndarray, shape (n_filtered, n_samples)
            Its ``n_window`` samples from any ``i`` equal, to rounding, :meth:`filter_epochs`
            of the padded epoch ``stretch[:, i : i + n_pad + n_window]``: the filters are
            FIR of ``n_pad + 1`` taps, so each output sample reads only its own pad.
        """
        stretch = np.asarray(stretch)
        if stretch.ndim != 2 or stretch.shape[0] != len(self._ch_names):
            raise ValueError(
                f"'stretch' must have shape ({len(self._ch_names)}, n_pad + n_samples), got "
                f"{stretch.shape}"
            )
        if stretch.shape[1] <= self.n_pad:
            raise ValueError(
                f"'stretch' must hold more than the {self.n_pad} samples of filter warm-up, "
                f"got {stretch.shape[1]}"
            )
        picked = np.ascontiguousarray(stretch[None, self.pick_indices], dtype=np.float64)
        if self.filters:
            picked = filter_padded_epochs(self.filters, picked, self.n_pad)
        return self.apply_spatial(picked)[0]

    def apply_spatial(self, windows: np.ndarray) -> np.ndarray:
        """Apply the spatial stage to picked, filtered windows (:func:`.spatial.apply_spatial`).

        Filtering acts on each channel alone, so the stage commutes with it: this equals
        filtering spatially transformed samples (what the stream does), to rounding.
        """
        return apply_spatial(self._spatial, windows)

    # ------------------------------------------------------------------- features

    def features_from_filtered(self, windows: np.ndarray) -> np.ndarray:
        """Unscaled features from filtered windows.

        Parameters
        ----------
        windows : array, shape (n_epochs, n_filtered, n_window)
            Filtered windows (:meth:`filter_epochs`, or cut from
            :meth:`filter_continuous`).

        Returns
        -------
        Z : ndarray, shape (n_epochs, n_rows, n_times)
            Resampled (waveform) or binned log power (bandpower), before scaling.
        """
        windows = np.asarray(windows, dtype=np.float64)
        n_filtered = len(self._picks) * max(1, len(self.filters))
        if windows.ndim != 3 or windows.shape[1:] != (n_filtered, self.n_window):
            raise ValueError(
                f"'windows' must have shape (n_epochs, {n_filtered}, {self.n_window}) "
                f"(picked channels x filters, window samples), got {windows.shape}"
            )
        return self._path.features(windows)

    def features_from_log_power(self, log_power: np.ndarray) -> np.ndarray:
        """Power paths: unscaled features ``(n_epochs, n_rows, n_times)`` from log power.

        ``log_power`` ``(n_epochs, n_filtered, n_bins)`` is the log mean power of every
        filtered row (band-major) in every bin of :attr:`bin_edges`, however computed (the
        online loop uses running sums); the result equals :meth:`features_from_filtered`.
        """
        if self.is_linear:
            raise ValueError(
                f"'features_from_log_power' exists for the power paths only, got {self.features!r}"
            )
        return self._path.from_log_power(np.asarray(log_power, dtype=np.float64))

    def fit_scaling(self, Z: np.ndarray) -> Preprocessor:
        """Fit the scaling on unscaled training features.

        Parameters
        ----------
        Z : array, shape (n_epochs, n_rows, n_times)
            Output of :meth:`features_from_filtered` on training epochs.

        Returns
        -------
        self : Preprocessor
            Fitted.
        """
        self.row_offset_, self.row_scale_, self.col_scale_ = fit_scaling(
            Z, self._scaling, center=self.centres_rows
        )
        return self

    def use_scaling(self, scaling: tuple) -> Preprocessor:
        """Take a scaling fitted elsewhere by this preprocessor's rule, instead of refitting.

        For a caller that fitted it on the same features with :func:`.scaling.fit_scaling`
        (``self.scaling``, centred as this feature path is), e.g. the selection's
        all-epoch scaling that its final fit was trained on.

        Parameters
        ----------
        scaling : tuple of ndarray
            ``(row_offset, row_scale, col_scale)``, shapes ``(n_rows,)``, ``(n_rows,)``,
            ``(n_times,)``.

        Returns
        -------
        self : Preprocessor
            Fitted.
        """
        arrays = [np.asarray(a, dtype=np.float64) for a in scaling]
        shapes = [(self.n_rows,), (self.n_rows,), (self.n_columns,)]
        if len(arrays) != 3 or any(a.shape != s for a, s in zip(arrays, shapes, strict=True)):
            raise ValueError(
                f"'scaling' must be (row_offset, row_scale, col_scale) of shapes {shapes}, "
                f"got {[a.shape for a in arrays]}"
            )
        self.row_offset_, self.row_scale_, self.col_scale_ = arrays
        return self

    def scale(self, Z: np.ndarray) -> np.ndarray:
        """Apply the fitted scaling to unscaled features.

        Parameters
        ----------
        Z : array, shape (n_epochs, n_rows, n_times)
            Unscaled features.

        Returns
        -------
        X : ndarray, shape (n_epochs, n_rows, n_times)
            Model input.
        """
        self._check_fitted("scale")
        return apply_scaling(Z, self.row_offset_, self.row_scale_, self.col_scale_)

    def fit(self, epochs: np.ndarray, y=None) -> Preprocessor:
        """Fit the scaling on padded raw training epochs.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order, with ``n_pad`` samples of pre-padding.
        y : None
            Ignored.

        Returns
        -------
        self : Preprocessor
            Fitted.
        """
        return self.fit_scaling(self.features_from_filtered(self.filter_epochs(epochs)))

    def transform(self, epochs: np.ndarray) -> np.ndarray:
        """Model input from padded raw epochs.

        Parameters
        ----------
        epochs : array, shape (n_epochs, n_channels, n_times_raw)
            Raw epochs in ``ch_names`` order, with ``n_pad`` samples of pre-padding.

        Returns
        -------
        X : ndarray, shape (n_epochs, n_rows, n_times)
            Model input.
        """
        self._check_fitted("transform")
        return self.scale(self.features_from_filtered(self.filter_epochs(epochs)))

    def transform_filtered(self, windows: np.ndarray) -> np.ndarray:
        """Model input ``(n_epochs, n_rows, n_times)`` from filtered windows.

        ``windows`` ``(n_epochs, n_filtered, n_window)`` are already filtered, e.g. the last
        ``n_window`` samples of a :class:`StreamingFilter`'s output (the online path).
        """
        self._check_fitted("transform_filtered")
        return self.scale(self.features_from_filtered(windows))

    def _check_fitted(self, what: str) -> None:
        if not self.is_fitted:
            raise RuntimeError(f"Preprocessor is not fitted: call fit() before {what}()")

    # ----------------------------------------------------------- linear operators

    def linear_operators(self, *, include_filter: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Spatial and temporal matrices of the fitted waveform path.

        Parameters
        ----------
        include_filter : bool
            False: ``X = S @ filtered_window @ T`` where ``filtered_window``
            ``(n_channels, n_window)`` is the band-passed raw window in ``ch_names`` order
            (every channel filtered alike; filtering commutes with ``S``). True: the FIR
            filter is folded into ``T`` too (:func:`.operators.fir_matrix`), ``X = S @
            raw_epoch @ T`` on the padded raw epoch ``(n_channels, n_times_raw)``, equal to
            floating-point tolerance.

        Returns
        -------
        S : ndarray, shape (n_rows, n_channels)
            Channel pick and order, spatial stage and row scaling.
        T : ndarray, shape (n_window, n_times) or (n_times_raw, n_times)
            Baseline, resampling and time scaling (and the filter if requested).
        """
        if not self.is_linear:
            raise ValueError(
                "'linear_operators' exists for the waveform path only (band power squares "
                f"the signal), got features={self.features!r}"
            )
        self._check_fitted("linear_operators")
        S = np.zeros((self.n_rows, len(self._ch_names)))
        spatial = np.eye(self.n_rows) if self._spatial is None else self._spatial
        S[:, self.pick_indices] = spatial / self.row_scale_[:, None]
        T = self.temporal_matrix / self.col_scale_[None, :]
        if include_filter and self.filters:
            T = fir_matrix(self.filters[0], self.n_window, self.n_pad).T @ T
        elif include_filter:
            T = T.copy()
        return S, T

    # ------------------------------------------------------------- (de)serialising

    def get_config(self) -> dict:
        """Return the constructor parameters as a JSON-serialisable dict."""
        return {
            "ch_names": list(self._ch_names),
            "sfreq": self._sfreq,
            "tmin": self._tmin,
            "tmax": self._tmax,
            "picks": list(self._picks),
            "features": self.features,
            "l_freq": self._l_freq,
            "h_freq": self._h_freq,
            "bands": [list(b) for b in self._bands],
            "n_times": self.n_columns,
            "baseline": None if self._baseline is None else list(self._baseline),
            "scaling": self._scaling,
            "filter_length": self._filter_length,
            "spatial": self.spatial,
            "reference": self.log_power_reference,
        }

    def get_arrays(self) -> dict[str, np.ndarray]:
        """Return the fitted arrays and the filter coefficients (for the model file).

        Also the spatial operator, when there is one.
        """
        self._check_fitted("get_arrays")
        arrays = {"row_offset": self.row_offset_, "row_scale": self.row_scale_}
        arrays["col_scale"] = self.col_scale_
        for k, b in enumerate(self.filters):
            arrays[f"filter_{k}"] = b
        if self._spatial is not None:
            arrays["spatial_matrix"] = self._spatial
        return arrays

    @classmethod
    def from_config(cls, config: dict, arrays: dict[str, np.ndarray] | None = None):
        """Rebuild a preprocessor from :meth:`get_config` and :meth:`get_arrays` output.

        Parameters
        ----------
        config : dict
            Constructor parameters (a header of any age: :func:`._serialise.saved_config`).
        arrays : dict | None
            Fitted arrays; the stored filter coefficients and spatial operator replace
            the re-computed ones, so a loaded model computes exactly what was saved.

        Returns
        -------
        pre : Preprocessor
            Fitted when ``arrays`` is given.
        """
        pre = cls(**saved_config(config, arrays))
        if arrays is not None:
            pre._restore_fitted(arrays)
        return pre

    def _restore_fitted(self, arrays: dict) -> None:
        """Set the saved filters and scaling from the model file's arrays.

        The stored filter coefficients replace the re-designed ones, so that a loaded model
        computes exactly what was saved; every array's shape is checked first.
        """
        n_rows, n_times = self.n_rows, self.n_columns
        expect = {"row_offset": (n_rows,), "row_scale": (n_rows,), "col_scale": (n_times,)}
        for k, b in enumerate(self.filters):
            expect[f"filter_{k}"] = b.shape
        for name, shape in expect.items():
            if name not in arrays or arrays[name].shape != shape:
                got = None if name not in arrays else arrays[name].shape
                raise ValueError(
                    f"preprocessing array {name!r} must have shape {shape}, got {got}"
                )
        self._path.filters = [np.asarray(arrays[f"filter_{k}"]) for k in range(len(self.filters))]
        self.row_offset_ = np.asarray(arrays["row_offset"], dtype=np.float64)
        self.row_scale_ = np.asarray(arrays["row_scale"], dtype=np.float64)
        self.col_scale_ = np.asarray(arrays["col_scale"], dtype=np.float64)

    def for_channels(self, ch_names: Sequence[str]) -> Preprocessor:
        """Return a copy reading raw data with another channel order (or a superset).

        Parameters
        ----------
        ch_names : list of str
            The new raw data's channel names; every model channel must be present.

        Returns
        -------
        pre : Preprocessor
            Same picks, filters and fitted scaling, new ``ch_names``.
        """
        config = self.get_config()
        config["ch_names"] = list(ch_names)
        return Preprocessor.from_config(config, self.get_arrays() if self.is_fitted else None)

"""Calibration configuration: one frozen dataclass per concern, loadable from TOML.

:class:`CalibrationConfig` holds five settings objects: :class:`EpochSettings` (classes,
window), :class:`PreprocessingSettings` (feature path, channels, filters, scaling),
:class:`RejectionSettings`, :class:`SelectionSettings` (cross-validation, searches,
solver) and :class:`RunSettings` (the run configuration stored with the model). Every
field has a default suited to the simulated source and to epoched files; a TOML file may
set any of them by name, at top level or inside tables (``[epochs]``,
``[preprocessing]``, ``[rejection]``, ``[selection]``, ``[online]``: the table names only
group keys for reading).
``classes`` is either a list of marker values or a table mapping marker values to class
labels (several markers may map to one class). A marker the recordings spell with a
prefix is found by its last part when that is unambiguous: ``T1`` is ``Comment/T1`` in a
BrainVision export of a PhysioNet run, and ``S1`` (or ``"S  1"``) is ``Stimulus/S  1``
from BrainVision Recorder; the report lists the markers used (``markers: 'Comment/T1'
-> T1``). For a BrainVision Recorder session::

    sblr-rt calibrate --recording session.vhdr --config recorder.toml --out m.sblr.npz

with ``recorder.toml`` holding ``classes = { S1 = "left", S2 = "right" }``.

Example ``calibration.toml``::

    features = "bandpower"
    tmin = 0.5
    tmax = 3.5

    [classes]
    T1 = "fists"
    T2 = "feet"

    [preprocessing]
    bands = [[8.0, 13.0], [13.0, 30.0]]

    [rejection]
    reject = 150e-6   # peak-to-peak, in the recording's units (volts for EDF/FIF)

    [selection]
    cv = 5            # or "loo"
    search = "paper"  # the paper's full 6 x 5 x 6 x 5 grid
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from sblr_rt.limits import check_n_jobs, check_number
from sblr_rt.online.settings import refuse_unknown, take_options

__all__ = [
    "CONCERNS",
    "FEATURE_CHOICES",
    "CalibrationConfig",
    "EpochSettings",
    "PreprocessingSettings",
    "RejectionSettings",
    "RunSettings",
    "SelectionSettings",
    "load_config",
]

#: Values of ``features``: ``"auto"`` or a feature path.
FEATURE_CHOICES = ("auto", "waveform", "bandpower", "spectral", "covariance")


@dataclass(frozen=True)
class EpochSettings:
    """Which epochs calibration cuts: the classes and the window around each cue.

    Parameters
    ----------
    classes : tuple of (str, str) | None
        ``(marker value, class label)`` pairs; None: every marker value found is a class
        (for epoched files, their labels). A marker value the recordings lack matches
        one whose part after the last ``/`` is that value (white space ignored at
        need), if only one does (:func:`sblr_rt.calibration.epochs.resolve_markers`).
    tmin, tmax : float | None
        Epoch window relative to each cue in seconds, ``[tmin, tmax)``, each within
        +/-60 s (:data:`sblr_rt.limits.LIMITS`, as on the command line). None: for epoched
        files the whole trial; for continuous recordings ``tmin=0.0``, ``tmax=3.5`` (the
        paper's cue length).
    """

    classes: tuple[tuple[str, str], ...] | None = None
    tmin: float | None = None
    tmax: float | None = None

    def __post_init__(self):
        if self.classes is not None:
            object.__setattr__(self, "classes", _normalise_classes(self.classes))
        _check_numbers(self)
        for name in ("tmin", "tmax"):  # the command line's --tmin/--tmax range
            if getattr(self, name) is not None:
                check_number(name, getattr(self, name), "epoch", low_open=False)
        if self.tmin is not None and self.tmax is not None and self.tmax <= self.tmin:
            raise ValueError(f"'tmax' must exceed 'tmin', got tmin={self.tmin}, tmax={self.tmax}")

    @property
    def class_map(self) -> dict[str, str] | None:
        """Marker value -> class label, or None for "every value found"."""
        return None if self.classes is None else dict(self.classes)


@dataclass(frozen=True)
class PreprocessingSettings:
    """What the model reads: the feature path, channels, spatial stage, filters, scaling.

    Parameters
    ----------
    features : {"auto", "waveform", "bandpower", "spectral", "covariance"}
        Feature path (:class:`sblr_rt.preprocessing.Preprocessor`). ``"auto"`` (the
        default) evaluates every path with every spatial stage that applies by repeated
        cross-validation on the calibration epochs and averages the best few
        (``auto_ensemble``; :mod:`sblr_rt.calibration.auto`).
    spatial : {"default", None, "car", "csd"}
        Spatial stage of a fixed path (``"auto"`` chooses it): none, common average
        reference, or surface Laplacian from the channels' positions. ``"default"``: none
        for the waveform path (the paper's input), the common average for the power paths
        (their per-window reference and a common average work together: across runs of
        PhysioNet S002-S009 band power scored 0.72 with both, 0.48-0.56 with the reference
        alone).
    reference : {"default", "channels", "bands", None}
        Per-window log-power reference of the power paths (``"default"``: the path's own,
        which cancels run-to-run gain changes; None: plain log power).
    picks : tuple of str | None
        Model channels by label (None: all).
    eog : tuple of str | None
        Channels regressed out of the others before the spatial stage, and not read by the
        model (:func:`sblr_rt.preprocessing.spatial.eog_regression`, fitted on the
        calibration runs, applied online by the same matrix): the recording's EOG
        channels, or Fp1 and Fp2 as a proxy. None: no regression.
    l_freq, h_freq : float | None
        Waveform band-pass (None: none).
    bands : tuple of (float, float) | None
        Power paths' bands in Hz (None: the path's default: 8-13 and 13-30 Hz for band
        power, 2 Hz bands from 6 to 34 Hz for the spectral path).
    n_times : int | None
        Model time grid (waveform: points, default 100; bandpower: bins, default 8).
    baseline : (float, float) | None
        Waveform baseline interval in seconds.
    scaling : {"channel", "channel_time", None}
        Scaling of the model input (fitted on training folds only during selection).
    filter_length : float | None
        FIR length in seconds (None: automatic).
    """

    features: str = "auto"
    spatial: str | None = "default"
    reference: str | None = "default"
    picks: tuple[str, ...] | None = None
    eog: tuple[str, ...] | None = None
    l_freq: float | None = None
    h_freq: float | None = None
    bands: tuple[tuple[float, float], ...] | None = None
    n_times: int | None = None
    baseline: tuple[float, float] | None = None
    scaling: str | None = "channel"
    filter_length: float | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        if self.picks is not None:
            if isinstance(self.picks, str):
                raise TypeError("'picks' must be a list of channel names, got a str")
            set_(self, "picks", tuple(str(p) for p in self.picks))
        if self.eog is not None:
            if isinstance(self.eog, str):
                raise TypeError("'eog' must be a list of channel names, got a str")
            set_(self, "eog", tuple(str(c) for c in self.eog) or None)
        _check_numbers(self)
        if self.features not in FEATURE_CHOICES:
            raise ValueError(f"'features' must be one of {FEATURE_CHOICES}, got {self.features!r}")
        if self.spatial not in ("default", None, "none", "car", "csd"):
            raise ValueError(
                f"'spatial' must be 'default', None, 'car' or 'csd', got {self.spatial!r}"
            )
        if self.spatial == "none":
            set_(self, "spatial", None)
        if self.scaling == "none":  # TOML has no null
            set_(self, "scaling", None)
        if self.reference not in ("default", "channels", "bands", None, "none"):
            raise ValueError(
                "'reference' must be 'default', 'channels', 'bands' or None, got "
                f"{self.reference!r}"
            )
        if self.reference == "none":
            set_(self, "reference", None)


@dataclass(frozen=True)
class RejectionSettings:
    """Which epochs calibration leaves out (and the online loop's windows too).

    Parameters
    ----------
    reject : float | None
        Reject epochs whose peak-to-peak amplitude on any used channel exceeds this, in
        the recording's units (None: no threshold).
    flat : float
        Reject epochs with a used channel whose peak-to-peak is at most this (0: only
        exactly constant channels).
    clip_run : int | None
        Reject epochs with a used channel stuck at its recording-wide minimum or maximum
        for at least this many consecutive samples (amplifier clipping); None: off.
    """

    reject: float | None = None
    flat: float = 0.0
    clip_run: int | None = 5

    def __post_init__(self):
        _check_numbers(self)


@dataclass(frozen=True)
class SelectionSettings:
    """How the model is chosen and fitted: cross-validation, the searches, the solver.

    Parameters
    ----------
    cv : int | "loo"
        Stratified k-fold (shuffled with ``random_state``) or leave-one-out.
    cv_repeats : int
        ``"auto"``: how many times the stratified k-fold CV is repeated with other
        shuffles (out-of-fold log-loss averaged over repeats; 30 epochs give 6 per fold).
    auto_ranks, auto_l2, auto_l1 : tuple
        ``"auto"``'s grid per candidate: ranks, ``mu2 = nu2`` values, and the l1 path (as
        fractions of the largest useful penalty, warm-started in order).
    auto_max_iter : int
        Solver iterations per grid point during ``"auto"``'s cross-validation (the final
        model uses ``max_iter``).
    auto_keep : int
        Candidates that ``"auto"`` carries from the first CV repetition to the others.
    auto_ensemble : int
        How many of those (at most ``auto_keep``), best first by CV log-loss, the model
        averages (their run-centred scores; :meth:`BCIModel.ensemble
        <sblr_rt.bci_model.BCIModel.ensemble>`); 1: the best candidate alone. Averaging
        beat picking one for every size from 2 to 10, measured cross-run on PhysioNet
        S002-S014 (``benchmarks/accuracy.py``).
    search : {"fast", "paper", "none"}
        ``"paper"``: rank with zero penalties, then the full 6 x 5 x 6 x 5 grid over
        (mu1, mu2, nu1, nu2). ``"fast"`` (default): the same rank step, then 6 x 6 x 5
        over (mu1, nu1, mu2 = nu2), which loses nothing where both l2 penalties are
        positive because rescaling U -> U/c, V -> cV maps any (mu2, nu2) onto equal
        values. ``"none"``: rank step only, no penalties.
    ranks : tuple of int
        Ranks tried in the first step: a list of integers (a string such as ``"12"`` is
        refused, not read digit by digit).
    l1_fractions : tuple of float
        mu1 and nu1 values as fractions of the largest useful penalty (gradient
        sup-norm at the start, :func:`sblr_rt.model.l1_penalty_max`); all below 1.
    l2_values : tuple of float
        mu2 and nu2 values (data are scaled to unit RMS per channel).
    max_iter, tol : int, float
        Solver limits of the final fit (and of the fixed paths' search iterations).
    search_tol : float | None
        The stopping rule ``q^k <= search_tol`` of every cross-validated fit (``auto``'s
        and the fixed paths' search); the chosen point is refitted on all epochs at
        ``tol``. None (default): ``tol`` on small folds and ``large_search_tol`` on large
        ones (:meth:`cv_tol_for`). A looser rule makes the search faster but moves the
        choice: measured cross-run on PhysioNet S001-S014 (``benchmarks/accuracy.py``,
        ``features="auto"``), 3e-3 scored one test trial lower for S004 and S014 and one
        higher for S005 (S002-S014 mean 0.810 against 0.815), 2e-3 one lower for S014
        and one higher for S005 (mean unchanged).
    large_fold : int
        Training folds of at least this many values (epochs x rows x times, one pass of
        the solver over the fold) are *large*: their cross-validated fits stop at
        ``large_search_tol``, and the fixed paths' final fit reads the epochs in
        ``search_dtype`` (float32: half the memory traffic per pass; at (210, 118, 100)
        0.23 s against 0.60 s, the same accuracy on new epochs). The search's time grows
        with this size, and at the paper's size (168 x 118 x 100 per fold, 2.0 million
        values) the stopping rule decides whether the search takes 10 s or 3 s. The
        default, one million, leaves every calibration of ``benchmarks/accuracy.py``
        (PhysioNet 24 x 64 x 100, BCI Competition 2003 IV 138 x 28 x 50) as before, bit
        for bit.
    large_search_tol : float
        The stopping rule of the cross-validated fits on large folds (when
        ``search_tol`` is None). Measured at (210, 118, 100) on eight synthetic data sets
        (``benchmarks/calibration.py``, part ``tolerance``: the final model, refitted at
        ``tol``, scored on 2,000 new epochs of each): against ``tol`` everywhere, 2e-2
        scored higher on 3 data sets, lower on 2 and the same on 3, mean 0.884 against
        0.883, with a search about 4x faster; 1e-2 scored lower on 2 and higher on 2
        (mean 0.881). The differences (up to 0.02) are the CV's choice between
        near-equal grid points, which the stopping rule tips either way.
    race_margin : float | None
        Racing in the fixed paths' penalty search: every ten iterations of a grid point
        (:data:`~sblr_rt.calibration.selection.RACE_EVERY`), the point is ended where it is
        when its test accuracy on the fold is more than ``race_margin`` below the best
        point already finished on that fold (the path goes on from there; the report
        counts such points as ``"raced"``). The chosen point is refitted on all epochs at
        ``tol`` whatever the search did. None (default): every point runs to
        ``search_tol``. Off by default because it moved the choice where it acts: on
        the paper-scale synthetic problem (``benchmarks/calibration.py``, 5-fold) 0.2 and
        0.1 kept the chosen point and the final model bit for bit and took 30 % and 47 %
        less CPU, but on BCI Competition 2003 IV (``benchmarks/accuracy.py``, waveform,
        about 35 test epochs per inner fold) the accuracy fell from 0.792 to 0.787 (0.2)
        and 0.778 (0.1).
    race_min_test : int
        Racing acts only on folds with at least this many test epochs: on fewer, a fold's
        accuracy moves in steps too coarse to tell a hopeless point from a noisy one. On
        PhysioNet (30 trials, 6 test epochs per fold) racing every fold lowered fixed
        paths' cross-run accuracy (0.1: S001 covariance, S002 band power; 0.2: S001-S005,
        a path each or two; ``search_tol`` 2e-3 likewise lowered S001, S002, S005, S007
        and S008), so the default 20 leaves such calibrations exactly as without racing.
    multi_class : {"ovr", "multinomial"}
        Three or more classes.
    class_weight : {"balanced", None}
        ``"balanced"``: each class weighs ``n_epochs / (n_classes * count)`` in the loss
        of every fit (the cross-validated ones and the final one), so that a 1:5
        imbalanced ERP calibration counts both classes equally (see the estimator's
        ``class_weight``). None (TOML ``"none"``): every epoch weighs the same.
    skip_unbounded : bool
        Do not refit grid points where exactly one factor is unpenalised (they have no
        minimiser and equal the unpenalised problem, see :mod:`sblr_rt.calibration.selection`).
    search_dtype : {"float32", "float64"}
        Data type of the CV fits' input (float32 halves the memory traffic of the two
        passes over the data per iteration; factors, losses and the final model stay
        float64).
    n_jobs : int
        joblib workers for the CV: 1 to 4 per CPU, or -1 for all cores (-k: all but k - 1;
        :func:`sblr_rt.limits.check_n_jobs`).
    random_state : int
        Seed of the fold shuffling.
    """

    cv: int | str = 5
    cv_repeats: int = 2
    auto_ranks: tuple[int, ...] = (1, 2)
    auto_l2: tuple[float, ...] = (0.01, 1.0)
    auto_l1: tuple[float, ...] = (0.05, 0.0)
    auto_max_iter: int = 60
    auto_keep: int = 4
    auto_ensemble: int = 4
    search: str = "fast"
    ranks: tuple[int, ...] = (1, 2, 3)
    l1_fractions: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2, 0.4)
    l2_values: tuple[float, ...] = (0.0, 0.001, 0.01, 0.1, 1.0)
    max_iter: int = 500
    tol: float = 1e-3
    search_tol: float | None = None
    large_fold: int = 1_000_000
    large_search_tol: float = 2e-2
    race_margin: float | None = None
    race_min_test: int = 20
    multi_class: str = "ovr"
    class_weight: str | None = None
    skip_unbounded: bool = True
    search_dtype: str = "float32"
    n_jobs: int = -1
    random_state: int = 0

    def __post_init__(self):
        set_ = object.__setattr__
        _check_numbers(self)
        set_(self, "ranks", _int_tuple("ranks", self.ranks))
        set_(self, "auto_ranks", _int_tuple("auto_ranks", self.auto_ranks))
        check_n_jobs("n_jobs", self.n_jobs)
        if not self.auto_ranks or min(self.auto_ranks) < 1:
            raise ValueError(f"'auto_ranks' must be positive integers, got {self.auto_ranks}")
        if not self.auto_l1 or any(not 0 <= f < 1 for f in self.auto_l1):
            raise ValueError(f"'auto_l1' must be fractions in [0, 1), got {self.auto_l1}")
        if not self.auto_l2 or any(v < 0 for v in self.auto_l2):
            raise ValueError(f"'auto_l2' must be values >= 0, got {self.auto_l2}")
        if self.class_weight == "none":
            set_(self, "class_weight", None)
        if self.class_weight not in (None, "balanced"):
            raise ValueError(
                f"'class_weight' must be 'balanced' or None, got {self.class_weight!r}"
            )
        if isinstance(self.auto_ensemble, bool) or not isinstance(self.auto_ensemble, int):
            raise TypeError(f"'auto_ensemble' must be an integer, got {self.auto_ensemble!r}")
        if self.auto_ensemble < 1:
            raise ValueError(
                f"'auto_ensemble' must be a positive integer, got {self.auto_ensemble}"
            )
        if self.auto_keep < 1:
            raise ValueError(f"'auto_keep' must be a positive integer, got {self.auto_keep}")
        if self.cv_repeats < 1:
            raise ValueError(f"'cv_repeats' must be a positive integer, got {self.cv_repeats}")
        if isinstance(self.race_min_test, bool) or not isinstance(self.race_min_test, int):
            raise TypeError(f"'race_min_test' must be an integer, got {self.race_min_test!r}")
        if self.race_margin is not None and not 0 < self.race_margin < 1:
            raise ValueError(
                f"'race_margin' must lie in (0, 1) or be None, got {self.race_margin}"
            )
        if isinstance(self.large_fold, bool) or not isinstance(self.large_fold, int):
            raise TypeError(f"'large_fold' must be an integer, got {self.large_fold!r}")
        if self.large_fold < 0:
            raise ValueError(f"'large_fold' must be >= 0, got {self.large_fold}")
        for name in ("tol", "search_tol", "large_search_tol"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"'{name}' must be a positive number, got {value}")
        if self.search not in ("fast", "paper", "none"):
            raise ValueError(f"'search' must be 'fast', 'paper' or 'none', got {self.search!r}")
        if self.search_dtype not in ("float32", "float64"):
            raise ValueError(
                f"'search_dtype' must be 'float32' or 'float64', got {self.search_dtype!r}"
            )
        cv = self.cv
        if isinstance(cv, str):
            if cv.lower() == "loo":
                set_(self, "cv", "loo")
            elif cv.isdigit():
                set_(self, "cv", int(cv))
            else:
                raise ValueError(f"'cv' must be an integer >= 2 or 'loo', got {cv!r}")
        if self.cv != "loo" and (isinstance(self.cv, bool) or int(self.cv) < 2):
            raise ValueError(f"'cv' must be an integer >= 2 or 'loo', got {self.cv!r}")
        if not self.ranks or min(self.ranks) < 1:
            raise ValueError(f"'ranks' must be positive integers, got {self.ranks}")
        if any(not 0 <= f < 1 for f in self.l1_fractions):
            raise ValueError(
                "'l1_fractions' must lie in [0, 1) (at 1 and above the factors collapse to "
                f"zero), got {self.l1_fractions}"
            )
        if any(v < 0 for v in self.l2_values):
            raise ValueError(f"'l2_values' must be >= 0, got {self.l2_values}")

    def cv_tol_for(self, fold_shape) -> float:
        """Return the stopping rule of the cross-validated fits on training folds of a shape.

        Parameters
        ----------
        fold_shape : tuple of int
            ``(n_epochs, n_rows, n_times)`` of the largest training fold.

        Returns
        -------
        tol : float
            ``search_tol`` if set; else ``large_search_tol`` (never below ``tol``) for a
            fold of at least ``large_fold`` values, and ``tol`` for a smaller one.

        Examples
        --------
        >>> s = SelectionSettings()
        >>> s.cv_tol_for((24, 64, 100)), s.cv_tol_for((168, 118, 100))
        (0.001, 0.02)
        """
        if self.search_tol is not None:
            return self.search_tol
        if self.is_large(fold_shape):
            return max(self.tol, self.large_search_tol)
        return self.tol

    def is_large(self, fold_shape) -> bool:
        """Return whether training folds of this shape are large (``large_fold``).

        Parameters
        ----------
        fold_shape : tuple of int
            As in :meth:`cv_tol_for`.

        Returns
        -------
        large : bool
            Whether the fold holds at least ``large_fold`` values.
        """
        return math.prod(int(n) for n in fold_shape) >= self.large_fold

    def fit_params(self) -> dict:
        """Return the estimator's settings of a final fit: the one place they are gathered.

        The cross-validated fits take the same with their own ``max_iter`` and ``tol``.

        Returns
        -------
        params : dict
            ``multi_class``, ``max_iter``, ``tol`` and ``class_weight``.

        Examples
        --------
        >>> sorted(SelectionSettings().fit_params().items())
        [('class_weight', None), ('max_iter', 500), ('multi_class', 'ovr'), ('tol', 0.001)]
        """
        return {
            "multi_class": self.multi_class,
            "max_iter": self.max_iter,
            "tol": self.tol,
            "class_weight": self.class_weight,
        }


@dataclass(frozen=True)
class RunSettings:
    """The run configuration stored with the model: what ``sblr-rt run`` starts from.

    Parameters
    ----------
    smoothing : {"none", "ema", "mean"}
        The run configuration stored with the model (``sblr-rt run`` reads it; its
        options win): how the online loop accumulates evidence over a trial, an
        exponential moving average of the log-odds or the mean since the cue
        (:class:`sblr_rt.online.evidence.Smoothing`).
    tau : float | None
        Time constant of the ``"ema"`` smoothing, in seconds; None: the model's window
        length, ``tmax - tmin`` (the online loop reads it so).
    early : float | None
        Decide a trial as soon as the smoothed probability of a class reaches this;
        None: at ``tmax``.
    early_after : float
        Seconds after the cue before an early decision may be taken.
    recentre : bool
        Unsupervised run centring (:mod:`sblr_rt.model.run_centring`): each calibration
        run's features are centred on that run's own mean, and the model stores the
        calibration reference, from which the online loop (and
        :meth:`~sblr_rt.bci_model.BCIModel.decision_function_run` offline) re-estimates
        each new run's mean from its trial windows, without labels.
    recentre_warmup : float
        Weight, in trials, of the calibration reference in the new run's running mean
        (1: the first trial counts as much as the whole calibration).
    """

    smoothing: str = "none"
    tau: float | None = None
    early: float | None = None
    early_after: float = 0.0
    recentre: bool = True
    recentre_warmup: float = 1.0

    def __post_init__(self):
        _check_numbers(self)
        if self.recentre_warmup <= 0:
            raise ValueError(
                "'recentre_warmup' must be a positive number of trials, got "
                f"{self.recentre_warmup}"
            )
        check_number("recentre_warmup", self.recentre_warmup, "trials")  # as --recentre-warmup
        from sblr_rt.online.evidence import Smoothing

        # the online loop's checks
        Smoothing(self.smoothing, self.tau or 1.0, self.early, self.early_after)


#: The concerns of a calibration configuration, in order: attribute -> settings class. The
#: TOML tables of the same names group keys for reading only.
CONCERNS = {
    "epochs": EpochSettings,
    "preprocessing": PreprocessingSettings,
    "rejection": RejectionSettings,
    "selection": SelectionSettings,
    "online": RunSettings,
}
#: Every field, in order, and the concern holding it.
_CONCERN_OF = {f.name: group for group, cls in CONCERNS.items() for f in fields(cls)}


@dataclass(frozen=True, init=False)
class CalibrationConfig:
    """Everything calibration needs besides the data, one settings object per concern.

    Parameters
    ----------
    epochs : EpochSettings | None
        The classes and the epoch window.
    preprocessing : PreprocessingSettings | None
        The feature path, channels, spatial stage, filters and scaling.
    rejection : RejectionSettings | None
        Which epochs (and online windows) are left out.
    selection : SelectionSettings | None
        Cross-validation, the searches and the solver's limits.
    online : RunSettings | None
        The run configuration stored with the model.
    **fields
        Any field of those, by name, a shorthand that wins over the objects':
        ``CalibrationConfig(tmin=0.5, cv=10)`` sets ``epochs.tmin`` and
        ``selection.cv``. A TOML file (:func:`load_config`) names the fields so, at top
        level or in tables of the concerns' names.

    Notes
    -----
    ``config.tmin`` reads ``config.epochs.tmin`` (every field reads so, by its name), and
    :meth:`to_dict` gives the fields flat, as model files store them.

    Examples
    --------
    >>> config = CalibrationConfig(tmin=0.5, tmax=3.5, cv="loo", smoothing="ema")
    >>> config.epochs.tmax, config.selection.cv, config.online.smoothing
    (3.5, 'loo', 'ema')
    >>> config.tmax
    3.5
    """

    epochs: EpochSettings
    preprocessing: PreprocessingSettings
    rejection: RejectionSettings
    selection: SelectionSettings
    online: RunSettings

    def __init__(
        self,
        *,
        epochs: EpochSettings | None = None,
        preprocessing: PreprocessingSettings | None = None,
        rejection: RejectionSettings | None = None,
        selection: SelectionSettings | None = None,
        online: RunSettings | None = None,
        **fields,
    ) -> None:
        given = dict(
            epochs=epochs,
            preprocessing=preprocessing,
            rejection=rejection,
            selection=selection,
            online=online,
        )
        for name, cls in CONCERNS.items():
            object.__setattr__(self, name, take_options(fields, cls, given[name]))
        refuse_unknown(fields, "CalibrationConfig()", *CONCERNS.values())

    def __getattr__(self, name: str):
        # Called only for names that are not attributes: a field, read from its concern.
        concern = _CONCERN_OF.get(name)
        if concern is None:
            raise AttributeError(f"'CalibrationConfig' object has no attribute {name!r}")
        return getattr(getattr(self, concern), name)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Return the name of every field of every concern, in order."""
        return tuple(_CONCERN_OF)

    @property
    def class_map(self) -> dict[str, str] | None:
        """Marker value -> class label, or None for "every value found"."""
        return self.epochs.class_map

    def cv_tol_for(self, fold_shape) -> float:
        """Return the search's stopping rule (:meth:`SelectionSettings.cv_tol_for`)."""
        return self.selection.cv_tol_for(fold_shape)

    def is_large(self, fold_shape) -> bool:
        """Return whether folds of a shape are large (:meth:`SelectionSettings.is_large`)."""
        return self.selection.is_large(fold_shape)

    def fit_params(self) -> dict:
        """Return a final fit's estimator settings (:meth:`SelectionSettings.fit_params`)."""
        return self.selection.fit_params()

    def replace(self, **changes) -> CalibrationConfig:
        """Return a copy with some fields changed (None values are ignored).

        Parameters
        ----------
        **changes
            Field values by name; a value of None leaves the field as it is.

        Returns
        -------
        config : CalibrationConfig
            The new configuration.
        """
        unknown = set(changes) - set(_CONCERN_OF)
        if unknown:
            raise ValueError(
                f"unknown configuration keys {sorted(unknown)}; valid: {sorted(_CONCERN_OF)}"
            )
        changes = {k: v for k, v in changes.items() if v is not None}
        return CalibrationConfig(**{name: getattr(self, name) for name in CONCERNS}, **changes)

    def to_dict(self) -> dict:
        """Return the fields, flat, as JSON-serialisable values (as model files keep them)."""
        out = {}
        for name in CONCERNS:
            out.update(dataclasses.asdict(getattr(self, name)))
        if self.classes is not None:
            out["classes"] = {m: c for m, c in self.classes}
        return out


#: Float fields (None allowed where the field's default is None).
_FLOATS = (
    "tmin",
    "tmax",
    "l_freq",
    "h_freq",
    "filter_length",
    "reject",
    "flat",
    "tol",
    "search_tol",
    "large_search_tol",
    "race_margin",
    "tau",
    "early",
    "early_after",
    "recentre_warmup",
)
#: Fields holding sequences of floats.
_FLOAT_SEQUENCES = ("baseline", "l1_fractions", "l2_values", "auto_l2", "auto_l1")
#: Integer fields (None allowed where the field's default is None).
_INTS = (
    "n_times",
    "clip_run",
    "cv_repeats",
    "auto_max_iter",
    "auto_keep",
    "auto_ensemble",
    "max_iter",
    "large_fold",
    "race_min_test",
    "n_jobs",
    "random_state",
)


def _finite(name: str, value) -> float:
    """Return ``value`` as a finite float, or raise naming the field."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name!r} must be a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name!r} must be a finite number, got {value}")
    return float(value)


def _integer(name: str, value) -> int:
    """Return ``value`` as an int, or raise naming the field (a float or string is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name!r} must be an integer, got {value!r:.80}")
    return int(value)


def _int_tuple(name: str, values) -> tuple[int, ...]:
    """Return a list of integers as a tuple; a string is refused, not read digit by digit."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(
            f"{name!r} must be a list of integers (TOML: {name} = [1, 2]), got "
            f"{type(values).__name__} {values!r:.80}"
        )
    return tuple(_integer(name, v) for v in values)


def _float_tuple(name: str, values) -> tuple[float, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{name!r} must be a list of numbers, got {values!r}")
    return tuple(_finite(name, v) for v in values)


def _check_numbers(config) -> None:
    """Make every float field a finite float and every integer field an int (None stays)."""
    set_ = object.__setattr__
    names = {f.name for f in fields(config)}
    for name in names.intersection(_INTS):
        value = getattr(config, name)
        if value is not None:
            set_(config, name, _integer(name, value))
    for name in names.intersection(_FLOATS):
        value = getattr(config, name)
        if value is not None:
            set_(config, name, _finite(name, value))
    for name in names.intersection(_FLOAT_SEQUENCES):
        value = getattr(config, name)
        if value is not None:
            set_(config, name, _float_tuple(name, value))
    if getattr(config, "bands", None) is None:
        return
    if isinstance(config.bands, str | bytes) or not isinstance(config.bands, Sequence):
        raise TypeError(f"'bands' must be a list of (low, high) pairs, got {config.bands!r}")
    bands = []
    for band in config.bands:
        band = _float_tuple("bands", band)
        if len(band) != 2:
            raise ValueError(f"'bands' must be a list of (low, high) pairs, got {config.bands!r}")
        bands.append(band)
    set_(config, "bands", tuple(bands))


def _normalise_classes(classes) -> tuple[tuple[str, str], ...]:
    if isinstance(classes, str):
        classes = [c.strip() for c in classes.split(",") if c.strip()]
    if isinstance(classes, dict):
        pairs = [(str(k), str(v)) for k, v in classes.items()]
    else:
        pairs = []
        for c in classes:
            if isinstance(c, list | tuple):
                if len(c) != 2:
                    raise ValueError(f"'classes' pairs must be (marker, label), got {c!r}")
                pairs.append((str(c[0]), str(c[1])))
            else:
                pairs.append((str(c), str(c)))
    if not pairs:
        raise ValueError("'classes' must name at least two marker values, got none")
    markers = [m for m, _ in pairs]
    if len(set(markers)) != len(markers):
        raise ValueError(f"'classes' lists a marker value twice: {markers}")
    if len({c for _, c in pairs}) < 2:
        raise ValueError(f"'classes' must map to at least two class labels, got {pairs}")
    return tuple(pairs)


def load_config(path=None, **overrides) -> CalibrationConfig:
    """Read a TOML configuration and apply overrides.

    Parameters
    ----------
    path : str | Path | None
        TOML file; None uses the defaults.
    **overrides
        Field values that win over the file (None values are ignored).

    Returns
    -------
    config : CalibrationConfig
        The configuration.
    """
    values: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"configuration file not found: {path}")
        try:
            with path.open("rb") as fh:
                doc = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path} is not valid TOML: {exc}") from exc
        for key, value in doc.items():
            if key in CONCERNS and isinstance(value, dict):
                for sub, subvalue in value.items():
                    if sub in values:
                        raise ValueError(f"{path}: key {sub!r} is set twice")
                    values[sub] = subvalue
            else:
                values[key] = value
        valid = set(CalibrationConfig.field_names())
        unknown = sorted(set(values) - valid)
        if unknown:
            raise ValueError(
                f"{path}: unknown configuration keys {unknown}; valid: {sorted(valid)}"
            )
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return CalibrationConfig(**values)
    except TypeError as exc:  # an unknown keyword or a field of the wrong type
        raise ValueError(f"invalid configuration: {exc}") from exc

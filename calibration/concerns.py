"""The five concerns of a calibration configuration: a frozen dataclass each, and their rules.

:class:`EpochSettings` (classes, window), :class:`PreprocessingSettings` (feature path,
channels, filters, scaling), :class:`RejectionSettings`, :class:`SelectionSettings`
(cross-validation, searches, solver) and :class:`RunSettings` (the run configuration stored
with the model). Each checks its fields on construction against :data:`CONSTRAINTS`, the one
table of every setting's type and range (:mod:`sblr_rt.validation.constraints`), and the
relations between its own fields. :class:`~sblr_rt.calibration.config.CalibrationConfig`
holds one of each and reads them from TOML.

Examples
--------
>>> EpochSettings(classes={"T1": "fists", "T2": "feet"}, tmin=0.5, tmax=3.5).class_map
{'T1': 'fists', 'T2': 'feet'}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sblr_rt.io.labels import ChannelRenaming
from sblr_rt.online.evidence import SMOOTHING_RULES
from sblr_rt.preprocessing import PARAMETER_RULES
from sblr_rt.validation.constraints import (
    Rule,
    any_value,
    apply_constraints,
    boolean,
    custom,
    fractions,
    integer,
    integers,
    names,
    non_negative,
    number,
    numbers_list,
    option,
    positive,
)
from sblr_rt.validation.limits import LIMITS, check_n_jobs

__all__ = [
    "CONSTRAINTS",
    "FEATURE_CHOICES",
    "EpochSettings",
    "PreprocessingSettings",
    "RejectionSettings",
    "RunSettings",
    "SelectionSettings",
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
        +/-60 s (:data:`sblr_rt.validation.limits.LIMITS`, as on the command line).
        None: for epoched files the whole trial; for continuous recordings ``tmin=0.0``,
        ``tmax=3.5`` (the paper's cue length).
    """

    classes: tuple[tuple[str, str], ...] | None = None
    tmin: float | None = None
    tmax: float | None = None

    def __post_init__(self):
        apply_constraints(self, CONSTRAINTS)
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
        (their per-window reference and a common average work together).
    reference : {"default", "channels", "bands", None}
        Per-window log-power reference of the power paths (``"default"``: the path's own,
        which cancels run-to-run gain changes; None: plain log power).
    picks : tuple of str | None
        Model channels by label (None: all).
    rename_channels : ChannelRenaming | None
        Old label -> new label, applied to every recording as it is read, before
        anything else (``picks``, ``eog`` and the model name the new labels): the labels
        of another cap mapped onto 10-10 names (``{ "EEG C3-REF" = "C3" }``). The rules of
        :func:`mne.rename_channels`: an old label a recording lacks is refused (close
        labels named), and so are two channels with one label
        (:class:`sblr_rt.io.labels.ChannelRenaming`). None: the recordings' own labels.
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
    rename_channels: ChannelRenaming | None = None
    eog: tuple[str, ...] | None = None
    l_freq: float | None = None
    h_freq: float | None = None
    bands: tuple[tuple[float, float], ...] | None = None
    n_times: int | None = None
    baseline: tuple[float, float] | None = None
    scaling: str | None = "channel"
    filter_length: float | None = None

    def __post_init__(self):
        apply_constraints(self, CONSTRAINTS)


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
        apply_constraints(self, CONSTRAINTS)


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
        averages (their run-centred scores; :class:`~sblr_rt.bci_model.EnsembleModel`); 1:
        the best candidate alone.
    criterion : {None, "accuracy", "log-loss"}
        What ranks the grid points (:mod:`~sblr_rt.calibration.criteria`). None: the
        search plan's own, the mean CV accuracy for ``search`` (the paper's) and the
        out-of-fold log-loss for ``"auto"``.
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
        ones (:meth:`cv_tol_for`). A looser rule makes the search faster but may move the
        choice between near-equal grid points.
    large_fold : int
        Training folds of at least this many values (epochs x rows x times, one pass of
        the solver over the fold) are *large*: their cross-validated fits stop at
        ``large_search_tol``, and the fixed paths' final fit reads the epochs in
        ``search_dtype`` (float32: half the memory traffic per pass). The default, one
        million, is above the folds of a typical one-person calibration (30-150 trials of
        at most 64 x 100), which therefore run at ``tol`` in float64, and below the paper's
        size (168 x 118 x 100 per fold).
    large_search_tol : float
        The stopping rule of the cross-validated fits on large folds (when
        ``search_tol`` is None); the final fit is at ``tol`` whatever this is.
    race_margin : float | None
        Racing in the fixed paths' penalty search: every ten iterations of a grid point
        (:data:`~sblr_rt.calibration.search.RACE_EVERY`), the point is ended where it is
        when its test accuracy on the fold is more than ``race_margin`` below the best
        point already finished on that fold (the path goes on from there; the report
        counts such points as ``"raced"``). The chosen point is refitted on all epochs at
        ``tol`` whatever the search did. None (default): every point runs to
        ``search_tol``, and the search scores every point it lists.
    race_min_test : int
        Racing acts only on folds with at least this many test epochs: on fewer, a fold's
        accuracy moves in steps too coarse to tell a hopeless point from a noisy one. With
        the default 20, a calibration of fewer than 100 trials at 5 folds never races.
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
        :func:`sblr_rt.validation.limits.check_n_jobs`).
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
    criterion: str | None = None
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
        apply_constraints(self, CONSTRAINTS)

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
        apply_constraints(self, CONSTRAINTS)


def _cv(name: str, cv) -> int | str:
    """``cv``: an integer >= 2 (a string of digits too) or ``"loo"``."""
    if isinstance(cv, str) and cv.lower() == "loo":
        return "loo"
    if isinstance(cv, str) and cv.isdigit():
        cv = int(cv)
    if isinstance(cv, bool) or not isinstance(cv, int) or cv < 2:
        raise ValueError(f"{name!r} must be an integer >= 2 or 'loo', got {cv!r}")
    return cv


def _n_jobs(name: str, value) -> int:
    return check_n_jobs(name, integer().check(name, value))


def _iterations(value) -> bool:
    lo, hi, _, _ = LIMITS["iterations"]
    return lo <= value <= hi


#: The solver's iterations: bounded so that no setting (a file's neither) makes a fit endless.
_ITERATIONS = "be an integer from 1 to {1} ({3})".format(*LIMITS["iterations"])


#: Every setting's rule, the one place of its type and range (:mod:`.constraints`), by the
#: setting's name (which is also its TOML key). Relations between settings (``tmax >
#: tmin``; smoothing with ``tau`` and ``early``) are checked by their settings class.
CONSTRAINTS: dict[str, Rule] = {
    # EpochSettings; tmin/tmax within the command line's --tmin/--tmax range
    "classes": custom(lambda name, value: _normalise_classes(value), none=True),
    "tmin": replace(PARAMETER_RULES["tmin"], none=True),  # None: from the annotations
    "tmax": replace(PARAMETER_RULES["tmax"], none=True),
    # PreprocessingSettings
    "features": option(*FEATURE_CHOICES),
    "spatial": option("default", None, "car", "csd", aliases={"none": None}),
    "reference": PARAMETER_RULES["reference"],
    "picks": PARAMETER_RULES["picks"],
    "rename_channels": custom(
        lambda name, value: ChannelRenaming.parse(value, name=name) or None, none=True
    ),
    "eog": names(empty_is_none=True),
    # the preprocessor's own rules
    "l_freq": PARAMETER_RULES["l_freq"],
    "h_freq": PARAMETER_RULES["h_freq"],
    "bands": PARAMETER_RULES["bands"],
    "n_times": PARAMETER_RULES["n_times"],
    "baseline": PARAMETER_RULES["baseline"],
    "scaling": PARAMETER_RULES["scaling"],
    "filter_length": PARAMETER_RULES["filter_length"],
    # RejectionSettings
    "reject": number(none=True),
    "flat": number(),
    "clip_run": integer(none=True),
    # SelectionSettings
    "cv": custom(_cv),
    "cv_repeats": integer(positive, "be a positive integer"),
    "auto_ranks": integers(lambda v: v and min(v) >= 1, "be positive integers"),
    "auto_l2": numbers_list(lambda v: v and non_negative(v), "be values >= 0"),
    "auto_l1": numbers_list(lambda v: v and fractions(v), "be fractions in [0, 1)"),
    "auto_max_iter": integer(_iterations, _ITERATIONS),
    "auto_keep": integer(positive, "be a positive integer"),
    "auto_ensemble": integer(positive, "be a positive integer"),
    "criterion": option(None, "accuracy", "log-loss", aliases={"none": None}),
    "search": option("fast", "paper", "none"),
    "ranks": integers(lambda v: v and min(v) >= 1, "be positive integers"),
    "l1_fractions": numbers_list(
        fractions, "lie in [0, 1) (at 1 and above the factors collapse to zero)"
    ),
    "l2_values": numbers_list(non_negative, "be >= 0"),
    "max_iter": integer(_iterations, _ITERATIONS),
    "tol": number(positive, "be a positive number"),
    "search_tol": number(positive, "be a positive number", none=True),
    "large_fold": integer(lambda v: v >= 0, "be >= 0"),
    "large_search_tol": number(positive, "be a positive number"),
    "race_margin": number(lambda v: 0 < v < 1, "lie in (0, 1) or be None", none=True),
    "race_min_test": integer(),
    "multi_class": option("ovr", "multinomial"),
    "class_weight": option("balanced", None, aliases={"none": None}),
    "skip_unbounded": any_value(),
    "search_dtype": option("float32", "float64"),
    "n_jobs": custom(_n_jobs),
    "random_state": integer(),
    # RunSettings; recentre_warmup within the command line's --recentre-warmup range
    # the online loop's own rules (sblr_rt.online.evidence.Smoothing)
    "smoothing": SMOOTHING_RULES["smoothing"],
    # None: the model's window length (RunInfo.from_model)
    "tau": replace(SMOOTHING_RULES["tau"], none=True),
    "early": SMOOTHING_RULES["early"],
    "early_after": SMOOTHING_RULES["early_after"],
    "recentre": boolean(),
    "recentre_warmup": number(limit="trials"),
}


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

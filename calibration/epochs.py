"""Labelled epochs from recordings: markers -> classes, window, rejection, features.

For each cue whose marker value is a class, the raw epoch (``n_pad`` samples of filter
warm-up, then the window ``[tmin, tmax)``) is checked and, if kept, turned into the
model's *unscaled* input by the preprocessor's own per-epoch path
(:meth:`~sblr_rt.preprocessing.Preprocessor.filter_epochs`), i.e. exactly what
:class:`~sblr_rt.bci_model.BCIModel` computes from the same raw epoch. Scaling is fitted
later, on training folds only.

Rejection reasons, counted (never silently used): ``"edge"`` (the raw epoch would start
before the recording, or the trial of an epoched file, or end after it), ``"gap"`` (the
raw epoch spans one of the recording's :attr:`~sblr_rt.io.Recording.gaps`), ``"nan"`` (NaN,
infinite samples, or samples beyond 1 V in the recording's unit: not measurements, see
:func:`~sblr_rt.units.max_abs_sample`; the online loop refuses the same windows),
``"flat"`` (a used channel's peak-to-peak at most ``flat``),
``"clipped"`` (a used channel stuck at its recording-wide extreme for ``clip_run``
samples), ``"amplitude"`` (peak-to-peak beyond ``reject``).
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from dataclasses import dataclass, field

import numpy as np
from sblr_rt.calibration.concerns import RejectionSettings

from sblr_rt.model.run_centring import centre_runs
from sblr_rt.preprocessing import Preprocessor
from sblr_rt.units import invalid_samples, max_abs_sample

logger = logging.getLogger("sblr_rt.calibration")

__all__ = [
    "MARKER_RULES",
    "REJECT_REASONS",
    "EpochSet",
    "RawEpochs",
    "TooFewTrials",
    "class_labels",
    "cut_raw_epochs",
    "extract_epochs",
    "resolve_markers",
]


class TooFewTrials(ValueError):
    """A class has fewer trials than a fit needs (a session waits for more).

    Not a failure of the data: the first trials of every session adapting from scratch end
    here, and so does a refit whose rejection leaves a class short.

    Attributes
    ----------
    counts : dict
        Trials per class.
    min_per_class : int
        Trials each class needs.
    """

    def __init__(self, counts: dict, min_per_class: int) -> None:
        self.counts, self.min_per_class = dict(counts), int(min_per_class)
        super().__init__(
            f"too few trials of a class: need at least {min_per_class} per class, got {counts}"
        )

    def __reduce__(self):  # raised in a refit process, re-raised in the session's
        return type(self), (self.counts, self.min_per_class)


REJECT_REASONS = ("edge", "gap", "nan", "flat", "clipped", "amplitude")


@dataclass(kw_only=True)
class _Labelled:
    """The labels and counts of the kept epochs, shared by raw epochs and features."""

    y: np.ndarray
    classes: list[str]
    onsets: list[tuple[int, int]] = field(default_factory=list)
    rejected: dict = field(default_factory=lambda: dict.fromkeys(REJECT_REASONS, 0))
    n_found: int = 0
    markers: dict = field(default_factory=dict)

    @property
    def runs(self) -> np.ndarray:
        """The recording (run) index of each epoch, shape (n_epochs,)."""
        return np.array([run for run, _ in self.onsets], dtype=int)

    def per_class(self) -> dict[str, int]:
        """Kept epochs per class label."""
        return {c: int(np.sum(self.y == k)) for k, c in enumerate(self.classes)}


@dataclass(kw_only=True)
class EpochSet(_Labelled):
    """Unscaled model input of the kept epochs with their labels and counts.

    Attributes
    ----------
    Z : ndarray, shape (n_epochs, n_rows, n_times)
        Unscaled features (:meth:`Preprocessor.features_from_filtered`).
    y : ndarray of int, shape (n_epochs,)
        Class index into ``classes``.
    classes : list of str
        Class labels.
    onsets : list of (int, int)
        ``(recording index, cue sample)`` of each kept epoch.
    rejected : dict
        Count per rejection reason.
    n_found : int
        Cues of a class found before rejection.
    calibration_mean : ndarray, shape (n_rows, n_times) | None
        The calibration reference when ``Z`` is run-centred (:meth:`centred`): the mean
        of the runs' means; None: ``Z`` as computed.
    markers : dict
        The marker -> class map used, the recordings' own spelling of each marker
        (``"Comment/T1": "T1"`` when the class map said ``T1``, see :func:`class_labels`).
    """

    Z: np.ndarray
    calibration_mean: np.ndarray | None = None

    def centred(self, runs=None) -> EpochSet:
        """Return a copy whose features are centred on each run's own mean.

        See :func:`sblr_rt.model.run_centring.centre_runs`; ``calibration_mean`` holds the mean of
        the runs' means.

        Parameters
        ----------
        runs : array-like of int, shape (n_recordings,) | None
            The run of each recording (None: every recording is a run of its own).
        """
        if self.calibration_mean is not None:
            raise RuntimeError("the epochs are already run-centred")
        by_epoch = self.runs if runs is None else np.asarray(runs)[self.runs]
        Z, mean = centre_runs(self.Z, by_epoch)
        return dataclasses.replace(self, Z=Z, calibration_mean=mean)


@dataclass(kw_only=True)
class RawEpochs(_Labelled):
    """The kept raw epochs with their labels and counts, before any feature path.

    What :func:`cut_raw_epochs` returns: ``auto`` computes every candidate's features from
    the same raw epochs (:meth:`with_features`).

    Attributes
    ----------
    data : ndarray, shape (n_epochs, n_channels, n_times_raw)
        Raw epochs in the preprocessor's channel order.
    y, classes, onsets, rejected, n_found, markers
        As in :class:`EpochSet`.
    """

    data: np.ndarray

    def with_features(self, Z: np.ndarray, calibration_mean: np.ndarray | None = None) -> EpochSet:
        """Return the :class:`EpochSet` of these epochs with features ``Z``.

        Parameters
        ----------
        Z : ndarray, shape (n_epochs, n_rows, n_times)
            Unscaled features of these epochs, in their order.
        calibration_mean : ndarray | None
            The calibration reference when ``Z`` is run-centred.

        Returns
        -------
        epochs : EpochSet
        """
        if len(Z) != len(self.y):
            raise ValueError(f"'Z' must hold {len(self.y)} epochs, got {len(Z)}")
        labels = {f.name: getattr(self, f.name) for f in dataclasses.fields(_Labelled)}
        return EpochSet(Z=Z, calibration_mean=calibration_mean, **labels)


def _squeeze(text: str) -> str:
    return "".join(str(text).split())


#: How a marker of the class map finds a recording's marker, in the order tried: the same
#: value; the same as the part after the last "/" (BrainVision's ``Comment/T1``,
#: ``Stimulus/T1``); that part without white space (``S1`` for ``Stimulus/S  1``).
MARKER_RULES = (
    ("exact", lambda m, v: v == m),
    ("after '/'", lambda m, v: "/" in v and v.rsplit("/", 1)[1] == m),
    (
        "after '/', spaces ignored",
        lambda m, v: "/" in v and _squeeze(v.rsplit("/", 1)[1]) == _squeeze(m),
    ),
)


def resolve_markers(class_map: dict[str, str], found) -> tuple[dict[str, str], dict]:
    """Return the class map in the recordings' spelling, and what was matched how.

    A marker of the class map that the recordings lack is looked for by the
    :data:`MARKER_RULES`, the first rule that finds any: ``T1`` is ``Comment/T1`` in a
    BrainVision export of a PhysioNet run, ``S1`` or ``S  1`` is ``Stimulus/S  1`` from
    BrainVision Recorder. Two markers found by the same rule (``Comment/T1`` and
    ``Stimulus/T1``) are refused: spell the one meant.

    Parameters
    ----------
    class_map : dict
        Marker value -> class label, as configured.
    found : iterable of str
        The marker values of the recordings.

    Returns
    -------
    class_map : dict
        Recording marker -> class label.
    matched : dict
        ``{configured marker: (recording marker, rule)}`` of the markers not found as
        given.
    """
    found = list(found)
    out, matched = {}, {}
    for m, label in class_map.items():
        if m in found:
            out[m] = label
            continue
        for rule, fits in MARKER_RULES[1:]:
            hits = [v for v in found if fits(m, v)]
            if len(hits) > 1:
                raise ValueError(
                    f"class map marker {m!r} fits {len(hits)} markers of the recording "
                    f"({rule}): {hits}; spell the one meant in the class map, e.g. "
                    f"classes = {{{hits[0]!r} = {label!r}}}"
                )
            if hits:
                out[hits[0]] = label
                matched[m] = (hits[0], rule)
                logger.info("class %r: marker %r taken for %r (%s)", label, hits[0], m, rule)
                break
        else:
            out[m] = label  # not there at all: class_labels says so
    return out, matched


def class_labels(recordings, class_map: dict[str, str] | None) -> tuple[dict[str, str], list]:
    """Resolve the marker -> class map against the recordings' markers.

    Markers of the map that the recordings spell with a prefix are found as
    :func:`resolve_markers` says (``T1`` for ``Comment/T1``).

    Parameters
    ----------
    recordings : list of Recording
        The recordings.
    class_map : dict | None
        Marker value -> class label; None: every marker value found is its own class.

    Returns
    -------
    class_map : dict
        The map actually used.
    classes : list of str
        Class labels in a stable order (order of first appearance in ``class_map``, or
        sorted marker values).
    """
    found: dict[str, int] = {}
    for rec in recordings:
        for v in rec.marker_values:
            found[v] = found.get(v, 0) + 1
    if not found:
        raise ValueError(
            "the recording has no markers, so no labelled epochs: record the cue stream too "
            f"(sources: {[rec.source for rec in recordings]})"
        )
    if class_map is None:
        class_map = {v: v for v in sorted(found)}
    class_map, _ = resolve_markers(class_map, found)
    missing = [m for m in class_map if m not in found]
    labels = list(dict.fromkeys(class_map.values()))
    present = {class_map[m] for m in class_map if m in found}
    absent = [c for c in labels if c not in present]
    if absent:
        raise ValueError(
            f"the recording's labels do not match the class map: no marker for class(es) "
            f"{absent} (map {class_map}); marker values found: {sorted(found)}"
        )
    if missing:
        logger.warning("marker values %s of the class map never occur", missing)
    if len(labels) < 2:
        raise ValueError(f"calibration needs at least two classes, got {labels}")
    return class_map, labels


def _longest_run(mask: np.ndarray) -> np.ndarray:
    """Longest run of True along the last axis, per row (mask 2-D)."""
    n_rows, n = mask.shape
    best = np.zeros(n_rows, dtype=int)
    cur = np.zeros(n_rows, dtype=int)
    for j in range(n):
        cur = np.where(mask[:, j], cur + 1, 0)
        best = np.maximum(best, cur)
    return best


@dataclass
class _Kept:
    """The epochs that pass every check: where they start, their labels and the counts."""

    runs: list  # (channel-ordered data, [raw epoch starts]) per recording
    y: list
    classes: list
    onsets: list
    rejected: dict
    n_found: int
    markers: dict = field(default_factory=dict)


def _rows(data: np.ndarray, picks) -> np.ndarray:
    """Return ``data[picks]``: the array itself (no copy) when ``picks`` are all its rows."""
    picks = np.asarray(picks)
    if picks.shape == (data.shape[0],) and np.array_equal(picks, np.arange(data.shape[0])):
        return data
    return data[picks]


def _finite_range(used: np.ndarray, max_abs: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Return each row's smallest and largest valid value (+inf, -inf: none is valid).

    Valid: finite and at most ``max_abs`` in magnitude. A row of valid values only takes
    the plain minimum and maximum (the same values); only the other rows pay for the
    slower masked reduction.
    """
    gmin, gmax = used.min(axis=1), used.max(axis=1)
    odd = np.flatnonzero(invalid_samples(gmin, max_abs) | invalid_samples(gmax, max_abs))
    if odd.size:
        rows = used[odd]
        valid = ~invalid_samples(rows, max_abs)
        gmin[odd] = rows.min(axis=1, initial=np.inf, where=valid)
        gmax[odd] = rows.max(axis=1, initial=-np.inf, where=valid)
    return gmin, gmax


def _rejection(rejection: RejectionSettings | None, thresholds: dict) -> RejectionSettings:
    """Return the rejection settings given, as an object or as the deprecated keywords."""
    if not thresholds:
        return RejectionSettings() if rejection is None else rejection
    unknown = sorted(set(thresholds) - {"reject", "flat", "clip_run"})
    if unknown:
        raise TypeError(f"expected the keywords reject, flat or clip_run, got {unknown}")
    if rejection is not None:
        raise TypeError(f"expected 'rejection' or {sorted(thresholds)}, got both")
    warnings.warn(
        f"{', '.join(map(repr, thresholds))} are deprecated: pass "
        "rejection=RejectionSettings(...) (a configuration's 'rejection')",
        DeprecationWarning,
        stacklevel=3,
    )
    return RejectionSettings(**thresholds)


def _keep_epochs(recordings, pre, class_map, rejection: RejectionSettings) -> _Kept:
    """Check every cue's raw epoch of every recording; return the kept ones."""
    class_map, classes = class_labels(recordings, class_map)
    code = {m: classes.index(c) for m, c in class_map.items()}
    kept = _Kept([], [], classes, [], dict.fromkeys(REJECT_REASONS, 0), 0, dict(class_map))
    off_start = round(pre.tmin * pre.sfreq) - pre.n_pad
    beyond = set()  # recordings with epochs rejected for finite samples beyond 1 V
    for r_idx, rec in enumerate(recordings):
        data = _model_order(rec, pre)
        n_samples = data.shape[1]
        used = _rows(data, pre.pick_indices)
        max_abs = max_abs_sample(rec.unit)
        gmin, gmax = _finite_range(used, max_abs)
        starts = []
        for t, value in zip(rec.marker_times, rec.marker_values, strict=True):
            if value not in code:
                continue
            kept.n_found += 1
            onset = round(float(t) * rec.sfreq)
            lo, hi = onset + off_start, onset + off_start + pre.n_times_raw
            lo_ok, hi_ok = (
                (onset, onset + rec.epoch_length) if rec.epoch_length else (0, n_samples)
            )
            if lo < lo_ok or hi > hi_ok:
                kept.rejected["edge"] += 1
                continue
            if any(lo < g < hi for g, _ in rec.gaps):  # samples lo..hi-1 not contiguous
                kept.rejected["gap"] += 1
                continue
            reason = _reject_reason(used[:, lo:hi], gmin, gmax, rejection, max_abs=max_abs)
            if reason is not None:
                kept.rejected[reason] += 1
                if reason == "nan" and np.isfinite(used[:, lo:hi]).all():
                    beyond.add(f"{rec.source or f'recording {r_idx}'} ({max_abs:g} {rec.unit})")
                continue
            starts.append(lo)
            kept.y.append(code[value])
            kept.onsets.append((r_idx, onset))
        kept.runs.append((data, starts))
    hint = (
        f"; 'nan' counts samples beyond 1 V too (beyond {', '.join(sorted(beyond))}): "
        "check the recording's unit"
        if beyond
        else ""
    )
    if not kept.y:
        raise ValueError(
            f"no usable epoch: {kept.n_found} cues of classes {classes} found, all rejected "
            f"({kept.rejected}); the raw epoch spans samples [{off_start}, "
            f"{off_start + pre.n_times_raw}) around each cue ({pre.n_pad} of filter "
            f"warm-up){hint}"
        )
    n_rej = sum(kept.rejected.values())
    if n_rej:
        logger.info("rejected %d of %d epochs: %s%s", n_rej, kept.n_found, kept.rejected, hint)
    return kept


def _model_order(rec, pre) -> np.ndarray:
    """Return the recording's data in the preprocessor's channel order, checked."""
    if abs(rec.sfreq - pre.sfreq) > 1e-9 * pre.sfreq:
        raise ValueError(
            f"all recordings must have the model's rate {pre.sfreq} Hz, got {rec.sfreq} Hz "
            f"for {rec.source}"
        )
    missing = [pre.ch_names[i] for i in pre.pick_indices if pre.ch_names[i] not in rec.ch_names]
    if missing:
        raise ValueError(
            f"channels named by the configuration are missing from {rec.source}: {missing}"
        )
    order = np.array([rec.ch_names.index(c) for c in pre.ch_names if c in rec.ch_names])
    if len(order) != len(pre.ch_names):
        raise ValueError(
            f"{rec.source} lacks channels of the first recording: "
            f"{sorted(set(pre.ch_names) - set(rec.ch_names))}"
        )
    return rec.data[order]


def _reject_reason(seg, gmin, gmax, rejection, *, max_abs=np.inf) -> str | None:
    """Return why a raw epoch of the used channels is rejected, or None."""
    reject, flat, clip_run = rejection.reject, rejection.flat, rejection.clip_run
    if invalid_samples(seg, max_abs).any():  # NaN, inf, or no measurement (> 1 V)
        return "nan"
    ptp = np.ptp(seg, axis=1)
    if np.any(ptp <= flat):
        return "flat"
    if clip_run is not None:
        at_bound = (seg == gmax[:, None]) | (seg == gmin[:, None])
        # a run of clip_run needs that many samples at a bound: most epochs have none
        if at_bound.sum(axis=1).max() >= clip_run and np.any(_longest_run(at_bound) >= clip_run):
            return "clipped"
    if reject is not None and np.any(ptp > reject):
        return "amplitude"
    return None


def _labels(kept: _Kept) -> dict:
    """Return the :class:`_Labelled` fields of the kept epochs."""
    return dict(
        y=np.asarray(kept.y, dtype=int),
        classes=kept.classes,
        onsets=kept.onsets,
        rejected=kept.rejected,
        n_found=kept.n_found,
        markers=kept.markers,
    )


def extract_epochs(
    recordings,
    preprocessor: Preprocessor,
    class_map: dict[str, str] | None,
    rejection: RejectionSettings | None = None,
    *,
    batch: int = 32,
    **thresholds,
) -> EpochSet:
    """Cut, check and featurise the labelled epochs of one or more recordings.

    Parameters
    ----------
    recordings : list of Recording
        Runs with identical channels (any order) and rate; each is epoched on its own
        (filters never run across a boundary between runs).
    preprocessor : Preprocessor
        Built for the first recording's channels; its window defines the epochs.
    class_map : dict | None
        Marker value -> class label (None: every marker value).
    rejection : RejectionSettings | None
        Which epochs are left out (a configuration's ``rejection``); None: the defaults.
    batch : int
        Epochs filtered at once (memory bound).
    **thresholds
        ``reject``, ``flat``, ``clip_run``: deprecated, the fields of ``rejection``.

    Returns
    -------
    epochs : EpochSet
        Kept epochs and counts.
    """
    pre = preprocessor
    kept = _keep_epochs(recordings, pre, class_map, _rejection(rejection, thresholds))
    Zs = []
    for data, starts in kept.runs:
        for b0 in range(0, len(starts), batch):
            raw = np.stack([data[:, s : s + pre.n_times_raw] for s in starts[b0 : b0 + batch]])
            Zs.append(pre.features_from_filtered(pre.filter_epochs(raw)))
    return EpochSet(Z=np.concatenate(Zs), **_labels(kept))


def cut_raw_epochs(
    recordings,
    preprocessor,
    class_map: dict[str, str] | None,
    rejection: RejectionSettings | None = None,
    **thresholds,
) -> RawEpochs:
    """Cut and check the labelled raw epochs, without features (calibration-sized data).

    Parameters
    ----------
    recordings, class_map, rejection, **thresholds
        As in :func:`extract_epochs`.
    preprocessor : Preprocessor | BCIModel
        What reads the epochs: a preprocessing, or a model (its raw epoch, which every
        member of an ensemble reads from its end).

    Returns
    -------
    epochs : RawEpochs
        ``data`` holds the raw epochs, shape (n_epochs, n_channels, n_times_raw), in the
        preprocessor's channel order; a preprocessor with a shorter raw epoch (less filter
        warm-up) reads the last ``n_times_raw`` samples of each.
    """
    pre = preprocessor
    kept = _keep_epochs(recordings, pre, class_map, _rejection(rejection, thresholds))
    raw = [data[:, s : s + pre.n_times_raw] for data, starts in kept.runs for s in starts]
    return RawEpochs(data=np.stack(raw), **_labels(kept))

"""Score a model on labelled recordings, trial by trial, as ``sblr-rt run`` would decide.

:func:`evaluate_model` cuts each cue's raw epoch from each recording (the model's window,
channels in the model's order, the samples rescaled to the model's unit), leaves out the
epochs the online loop would refuse (calibration's rejection settings: a gap, non-finite
samples, flat, clipped, beyond ``reject``), and decides the others in time order:

- by default each recording is a run centred on its own running mean, trial after trial,
  from the calibration reference (:meth:`BCIModel.decision_function_run
  <sblr_rt.bci_model.BCIModel.decision_function_run>`): exactly what the online loop's
  trial decisions are for a replay of the recording, without smoothing or early decisions;
- ``static=True`` scores every trial alone from the calibration reference
  (:meth:`~sblr_rt.bci_model.BCIModel.decision_function`).

The scores are :func:`sblr_rt.scoring.score_trials`'s (accuracy and its interval against
chance, balanced accuracy, Cohen's kappa, confusion matrix, Wolpaw's bit rate with the
median time from one cue to the next), over all recordings together and per recording.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from sblr_rt.calibration.concerns import RejectionSettings
from sblr_rt.calibration.epochs import cut_raw_epochs

from sblr_rt.online.run_info import RunInfo
from sblr_rt.scoring import Score, score_trials
from sblr_rt.units import normalize_unit, unit_factor

__all__ = ["Evaluation", "TrialResult", "evaluate_model", "read_labelled"]


@dataclasses.dataclass(frozen=True)
class TrialResult:
    """One trial of a labelled recording, decided.

    Attributes
    ----------
    recording : str
        The recording's source (its file).
    index : int
        The trial's number in its recording, from 1 (cues of a class, in time order).
    time : float
        The cue's time in the recording (s).
    marker : str
        The cue's marker value.
    true : str
        The class the marker names.
    label : str | None
        The class decided (None: no finite score).
    proba : dict
        ``{class: probability}``.
    """

    recording: str
    index: int
    time: float
    marker: str
    true: str
    label: str | None
    proba: dict

    @property
    def correct(self) -> bool | None:
        """Whether the decision is right (None without one)."""
        return None if self.label is None else self.label == self.true


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """A model's scores on labelled recordings (see :func:`evaluate_model`).

    Attributes
    ----------
    score : Score
        Over every trial of every recording.
    per_recording : dict
        ``{recording: Score}``.
    trials : tuple of TrialResult
        Every decided trial, recording after recording, in time order.
    rejected : dict
        Cues of a class left out, by reason (``edge``, ``gap``, ``nan``, ``flat``,
        ``clipped``, ``amplitude``), over all recordings.
    run_centred : bool
        Whether each recording was scored as a run centred on its own running mean.
    """

    score: Score
    per_recording: dict
    trials: tuple
    rejected: dict
    run_centred: bool

    def to_dict(self) -> dict:
        """Return the evaluation as JSON-ready values, with a row per trial."""
        return {
            "run_centred": self.run_centred,
            "score": self.score.to_dict(),
            "per_recording": {k: v.to_dict() for k, v in self.per_recording.items()},
            "rejected": dict(self.rejected),
            "trials": [dataclasses.asdict(t) | {"correct": t.correct} for t in self.trials],
        }


def evaluate_model(model, recordings, *, class_map=None, static: bool = False) -> Evaluation:
    """Score ``model`` on labelled recordings, trial by trial.

    Parameters
    ----------
    model : BCIModel
        The model.
    recordings : list of Recording
        Labelled recordings, each a run; their rate must be the model's, and they must hold
        the channels it reads (in any order, among others).
    class_map : dict | None
        Marker value -> class label; None: the model's (its calibration configuration's
        ``classes``; without one, the class labels are the markers).
    static : bool
        Score every trial alone from the calibration reference instead of centring each
        recording on its own running mean (as ``sblr-rt run --no-recentre``).

    Returns
    -------
    evaluation : Evaluation

    Raises
    ------
    ValueError
        If a recording lacks a channel the model reads, has another rate or a unit that is
        not the model's and cannot be converted, or holds no usable cue of the classes.
    """
    info = RunInfo.from_model(model)
    # the model's own rejection rule, as its calibration applied it
    rejection = RejectionSettings(reject=info.reject, flat=info.flat, clip_run=info.clip_run)
    classes = [str(c) for c in model.classes]
    if class_map is None:  # the calibration's map; without one, the classes are markers
        class_map = dict(info.marker_classes) or {c: c for c in classes}
    class_map = {str(m): str(c) for m, c in class_map.items() if str(c) in classes}
    trials, per, rejected = [], {}, {}
    for rec in recordings:
        name = str(rec.source or f"recording {len(per) + 1}")
        m = _model_for(model, rec)
        rec = _in_unit(rec, info.unit)
        epochs = cut_raw_epochs([rec], m, class_map, rejection)
        for reason, n in epochs.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + int(n)
        scores = (
            m.decision_function(epochs.data) if static else m.decision_function_run(epochs.data)
        )
        labels, proba = m.labels_from_scores(scores)
        finite = np.isfinite(np.asarray(scores, dtype=float).reshape(len(labels), -1)).all(1)
        markers = _markers_at(rec, [onset for _, onset in epochs.onsets], epochs.markers)
        own = [
            TrialResult(
                recording=name,
                index=k + 1,
                time=onset / rec.sfreq,
                marker=markers[k],
                true=str(epochs.classes[y]),
                label=str(labels[k]) if finite[k] else None,
                proba={c: float(p) for c, p in zip(classes, proba[k], strict=True)}
                if finite[k]
                else {},
            )
            for k, ((_, onset), y) in enumerate(zip(epochs.onsets, epochs.y, strict=True))
        ]
        per[name] = _score(own, classes)
        trials.extend(own)
    return Evaluation(
        score=_score(trials, classes),
        per_recording=per,
        trials=tuple(trials),
        rejected=rejected,
        run_centred=not static and model.run_centring is not None,
    )


def _model_for(model, rec):
    """Return ``model`` reading the recording's channels (order, superset), or say why not."""
    if abs(rec.sfreq - model.sfreq) > 1e-9 * model.sfreq:
        raise ValueError(
            f"the recording must have the model's rate {model.sfreq:g} Hz, got "
            f"{rec.sfreq:g} Hz ({rec.source})"
        )
    if list(rec.ch_names) == list(model.ch_names):
        return model
    missing = [c for c in model.picks if c not in rec.ch_names]
    if missing:
        from sblr_rt.io.labels import close_matches_text

        raise ValueError(
            f"the recording must hold the channels the model reads, got none named {missing} "
            f"({rec.source}){close_matches_text(missing, rec.ch_names)}"
        )
    return model.for_channels(list(rec.ch_names))


def _in_unit(rec, unit):
    """Return the recording in the model's unit (as the online loop rescales a stream)."""
    if normalize_unit(unit) is None or normalize_unit(rec.unit) is None:
        return rec
    factor = unit_factor(rec.unit, unit)
    if factor == 1.0:
        return rec
    return dataclasses.replace(rec, data=rec.data * factor, unit=unit)


def _markers_at(rec, onsets, class_map) -> list[str]:
    """Return the class marker at each onset sample (the recording's spelling)."""
    pairs = zip(rec.marker_times, rec.marker_values, strict=True)
    at = {round(float(t) * rec.sfreq): str(v) for t, v in pairs if v in class_map}
    return [at.get(o, "") for o in onsets]


def _score(trials, classes) -> Score:
    """Score trials; the seconds per trial are the median time from one cue to the next."""
    times = np.array([t.time for t in trials], dtype=float)
    steps = np.diff(times)
    steps = steps[steps > 0]  # a new recording starts again at 0
    return score_trials(
        [t.true for t in trials],
        [t.label for t in trials],
        classes,
        seconds_per_trial=float(np.median(steps)) if steps.size else None,
    )


def read_labelled(paths, *, rename=None) -> list:
    """Read recordings given as paths (:class:`~sblr_rt.io.recording.Recording` objects pass).

    Parameters
    ----------
    paths : sequence of str | Path | Recording
    rename : ChannelRenaming | dict | str | None
        Old label -> new label, applied to each
        (:meth:`~sblr_rt.io.recording.Recording.rename_channels`); None: their own labels.

    Returns
    -------
    recordings : list of Recording
    """
    from sblr_rt.io import read_recording

    recs = [r if not isinstance(r, str | Path) else read_recording(r) for r in paths]
    return [r.rename_channels(rename) for r in recs]

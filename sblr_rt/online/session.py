"""A session of ``sblr-rt run``: its own folder, its decisions, when it ends, its summary.

- :func:`new_session_folder`: ``ROOT/2026-12-07_14-03-22`` (a suffix ``_2``, ``_3`` when two
  sessions start within the same second): created anew, so that nothing of an earlier
  session is ever written over.
- :class:`StreamGone`: whether the EEG stream has been stalled or lost for longer than a
  grace period, from the states the loop's snapshots report.
- :class:`SessionLog`: every decision as one JSON line in ``decisions.jsonl``; each trial
  decision scored against the class its cue names (a running accuracy); the latencies.
- :class:`SessionSummary`: what the session did, for the terminal (:meth:`~SessionSummary.
  lines`) and for ``summary.json`` (:meth:`~SessionSummary.to_dict`), the trials scored
  with :func:`sblr_rt.scoring.score_trials`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from sblr_rt.io.jsonable import dumps
from sblr_rt.scoring import Score, score_trials

__all__ = [
    "DECISIONS_FILE",
    "SUMMARY_FILE",
    "SessionLog",
    "SessionSummary",
    "StreamGone",
    "TrialOutcome",
    "new_session_folder",
]

#: The files of a session folder (beside ``versions/`` when it adapts).
DECISIONS_FILE = "decisions.jsonl"
SUMMARY_FILE = "summary.json"


def new_session_folder(root, *, now: _dt.datetime | None = None) -> Path:
    """Create and return a new, empty session folder in ``root``, named by date and time.

    Parameters
    ----------
    root : str | Path
        The folder of the sessions (created if missing).
    now : datetime | None
        The session's start (default: the local time now).

    Returns
    -------
    folder : Path
        ``root / "YYYY-MM-DD_HH-MM-SS"``, or with ``_2``, ``_3``, ... when that exists: a
        folder this call created, never an existing one.
    """
    now = _dt.datetime.now() if now is None else now
    stamp = now.strftime("%Y-%m-%d_%H-%M-%S")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        folder = root / (stamp if k == 1 else f"{stamp}_{k}")
        try:
            folder.mkdir()
        except FileExistsError:
            k += 1
            continue
        return folder


class StreamGone:
    """Whether the EEG stream has been gone (stalled or lost) longer than a grace period.

    Parameters
    ----------
    grace : float
        Seconds the stream may be gone before the session ends (> 0).

    Examples
    --------
    >>> gone = StreamGone(10.0)
    >>> gone.update("streaming", 0.0), gone.update("stalled", 1.0), gone.update("lost", 11.5)
    (False, False, True)
    >>> gone.update("streaming", 12.0), gone.gone_for(12.0)
    (False, 0.0)
    """

    #: The source states that count as gone (:class:`~sblr_rt.online.telemetry.
    #: StreamTelemetry`'s ``state``).
    GONE = ("stalled", "lost")

    def __init__(self, grace: float) -> None:
        if not (isinstance(grace, int | float) and grace > 0 and math.isfinite(grace)):
            raise ValueError(f"'grace' must be a finite number of seconds > 0, got {grace!r}")
        self.grace = float(grace)
        self._since: float | None = None

    def update(self, state: str, now: float) -> bool:
        """Take the stream's state at ``now`` (seconds); return whether it is gone too long."""
        if state not in self.GONE:
            self._since = None
            return False
        if self._since is None:
            self._since = now
        return now - self._since > self.grace

    def gone_for(self, now: float) -> float:
        """Return the seconds the stream has been gone at ``now`` (0 while it streams)."""
        return 0.0 if self._since is None else max(0.0, now - self._since)


@dataclasses.dataclass(frozen=True)
class TrialOutcome:
    """One trial decision of a session, scored.

    Attributes
    ----------
    index : int
        The trial's number in the session, from 1.
    cue : str | None
        The cue's marker value.
    true : str | None
        The class the cue names (None: it names no class of the model, not scored).
    label : str | None
        The class decided.
    correct : bool | None
        None when not scored.
    early : bool
        Decided before ``tmax`` (dynamic stopping).
    time : float | None
        The decided window's end (stream clock).
    n_scored, n_correct : int
        Trials scored and decided right so far, this one included.
    """

    index: int
    cue: str | None
    true: str | None
    label: str | None
    correct: bool | None
    early: bool
    time: float | None
    n_scored: int
    n_correct: int

    @property
    def running_accuracy(self) -> float | None:
        """``n_correct / n_scored`` (None before a scored trial)."""
        return self.n_correct / self.n_scored if self.n_scored else None


class SessionLog:
    """The decisions of a session: written as they come, trials scored as they come.

    Parameters
    ----------
    folder : str | Path
        The session folder; decisions go to ``folder / DECISIONS_FILE``.
    classes : sequence of str
        The model's classes.
    cue_classes : mapping
        ``{marker value: class}`` of the cues that name a class
        (:func:`sblr_rt.online.cues.cue_classes` of the model).
    """

    def __init__(self, folder, classes: Sequence[str], cue_classes: Mapping[str, str]) -> None:
        self.folder = Path(folder)
        self.classes = tuple(str(c) for c in classes)
        self.cue_classes = {str(k): str(v) for k, v in cue_classes.items()}
        self.path = self.folder / DECISIONS_FILE
        self._file = open(self.path, "a", encoding="utf-8")  # closed by close()
        self.n_decisions = 0
        self.trials: list[TrialOutcome] = []
        self._latencies: list[float] = []

    def add(self, decision) -> TrialOutcome | None:
        """Write a decision; score it if it is a trial's.

        Parameters
        ----------
        decision : Decision
            From :meth:`OnlineLoop.pop_decisions <sblr_rt.online.OnlineLoop.pop_decisions>`.

        Returns
        -------
        outcome : TrialOutcome | None
            For a trial decision; None for a sliding one.
        """
        line = decision.public()
        latency = None
        if decision.published is not None and decision.window_end is not None:
            latency = float(decision.published) - float(decision.window_end)
            self._latencies.append(latency)
        line["latency"] = latency
        self._file.write(dumps(line) + "\n")
        self.n_decisions += 1
        if not decision.trial:
            return None
        cue = None if decision.cue is None else str(decision.cue)
        true = self.cue_classes.get(cue) if cue is not None else None
        label = None if decision.label is None else str(decision.label)
        correct = None if true is None or label is None else label == true
        last = self.trials[-1] if self.trials else None
        n_scored = (last.n_scored if last else 0) + (correct is not None)
        n_correct = (last.n_correct if last else 0) + bool(correct)
        outcome = TrialOutcome(
            index=len(self.trials) + 1,
            cue=cue,
            true=true,
            label=label,
            correct=correct,
            early=bool(decision.early),
            time=None if decision.window_end is None else float(decision.window_end),
            n_scored=n_scored,
            n_correct=n_correct,
        )
        self.trials.append(outcome)
        return outcome

    def flush(self) -> None:
        """Write what is buffered to the file."""
        if not self._file.closed:
            self._file.flush()

    def close(self) -> None:
        """Close the decisions file (safe to call twice)."""
        self._file.close()

    def score(self) -> Score:
        """Return the scores of the trials whose cue names a class.

        A trial decision without a label (no finite score) counts as given no decision;
        the seconds per trial of the bit rate are the median time between two trial
        decisions.
        """
        scored = [t for t in self.trials if t.true is not None]
        times = np.array([t.time for t in self.trials if t.time is not None], dtype=float)
        seconds = float(np.median(np.diff(times))) if times.size >= 2 else None
        return score_trials(
            [t.true for t in scored],
            [t.label for t in scored],
            self.classes,
            seconds_per_trial=seconds,
        )

    def latency(self) -> dict:
        """Return the latency (window end to publication) over the session, in seconds.

        Returns
        -------
        latency : dict
            ``n``, ``p50``, ``p99``, ``max`` (None with no decision).
        """
        lat = np.asarray(self._latencies, dtype=float)
        if not lat.size:
            return {"n": 0, "p50": None, "p99": None, "max": None}
        p50, p99 = np.percentile(lat, [50, 99])
        return {"n": int(lat.size), "p50": float(p50), "p99": float(p99), "max": float(lat.max())}


@dataclasses.dataclass(frozen=True)
class SessionSummary:
    """What a session did: how it ended, its trials scored, its latency and its models.

    Attributes
    ----------
    folder : str
        The session folder.
    started, ended : str
        Local date and time (ISO 8601, seconds).
    seconds : float
        Wall-clock seconds from start to end.
    ended_by : str
        ``"duration"``, ``"stream gone"``, ``"SIGINT"``, ``"SIGTERM"`` or ``"error"``.
    reason : str
        The end in words (e.g. how long the stream had been gone).
    model : str
        The model file the session started from.
    mode : str
        ``"sliding"`` or ``"trial"``.
    n_decisions : int
        Decisions made (sliding and trial).
    score : Score
        The trials whose cue names a class (:func:`sblr_rt.scoring.score_trials`).
    n_trials : int
        Trial decisions, scored or not.
    n_early, n_early_correct : int
        Trials decided early (before ``tmax``), and of them those right.
    latency : dict
        ``n``, ``p50``, ``p99``, ``max`` seconds from a window's end to its publication.
    versions : dict
        ``start`` and ``final`` model version, ``n_refits``, ``n_failures``, ``final_file``
        (None when the session did not adapt).
    prior : dict | None
        The prior's ``share`` of the decision at the start and at the end, and the
        ``weight`` and ``reason`` the model records (None without a prior).
    paths : dict
        What the session wrote: ``folder``, ``decisions``, ``summary``, ``versions``.
    """

    folder: str
    started: str
    ended: str
    seconds: float
    ended_by: str
    reason: str
    model: str
    mode: str
    n_decisions: int
    score: Score
    n_trials: int
    n_early: int
    n_early_correct: int
    latency: dict
    versions: dict | None = None
    prior: dict | None = None
    paths: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, log: SessionLog, **fields) -> SessionSummary:
        """Build the summary of ``log`` with the other fields given by keyword."""
        early = [t for t in log.trials if t.early]
        return cls(
            n_decisions=log.n_decisions,
            score=log.score(),
            n_trials=len(log.trials),
            n_early=len(early),
            n_early_correct=sum(bool(t.correct) for t in early),
            latency=log.latency(),
            **fields,
        )

    def lines(self) -> list[str]:
        """Return the summary as lines for a terminal."""

        def ms(x):
            return "-" if x is None else f"{1e3 * x:.2f}"

        out = [
            f"session ended ({self.reason}) after {self.seconds:.0f} s: {self.n_decisions} "
            f"decisions, {self.n_trials} trial decisions",
        ]
        unscored = self.n_trials - self.score.n_trials - self.score.n_undecided
        if self.mode == "trial":
            out += self.score.lines()
            if unscored:
                out.append(f"{unscored} trial(s) whose cue names no class, not scored")
            out.append(
                f"early decisions: {self.n_early} of {self.n_trials} trials"
                + (f", {self.n_early_correct} correct" if self.n_early else "")
            )
        lat = self.latency
        out.append(
            f"latency (window end to publication) p50 {ms(lat['p50'])} ms, p99 "
            f"{ms(lat['p99'])} ms over {lat['n']} decisions"
        )
        if self.versions is not None:
            v = self.versions
            out.append(
                f"model versions: v{v['start']} to v{v['final']} ({v['n_refits']} refits, "
                f"{v['n_failures']} failed); last: {v['final_file']}"
            )
        if self.prior is not None:
            out.append(_prior_line(self.prior))
        out.append(f"wrote in {self.folder}: " + ", ".join(self._written()))
        return out

    def _written(self) -> list[str]:
        """Return the paths written, relative to the session folder where inside it."""
        folder, names = Path(self.folder), []
        for key, path in self.paths.items():
            if key == "folder" or not path:
                continue
            path = Path(path)
            name = path.relative_to(folder).as_posix() if path.is_relative_to(folder) else path
            names.append(f"{name}/" if key == "versions" else str(name))
        return names

    def to_dict(self) -> dict:
        """Return the summary as JSON-ready values (``summary.json``)."""
        out = dataclasses.asdict(self)
        out["score"] = self.score.to_dict()
        return out

    def write(self, path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` and return it."""
        path = Path(path)
        path.write_text(dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path


def _prior_line(prior: dict) -> str:
    def pct(x):
        return "?" if x is None else f"{100 * x:.0f}%"

    line = f"prior's share of the decision: {pct(prior.get('share_start'))} at the start"
    if prior.get("share_end") is not None:
        line += f", {pct(prior['share_end'])} at the end"
    if prior.get("weight") is not None:
        line += f"; its weight in the model {prior['weight']:.2f}"
    if prior.get("reason"):
        line += f" ({prior['reason']})"
    return line

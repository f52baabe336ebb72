"""The Graz-style trial sequence of the cue window, as pure data (no Qt, no LSL).

One trial: a fixation cross (``fixation`` seconds), the class cue (an arrow or a word,
``cue`` seconds) over the cross, the imagery period (``imagery`` seconds, the cross stays;
feedback is shown here in online mode), then a blank rest of jittered length, uniform in
``[rest_min, rest_max]``. Classes come in a randomised, balanced order
(``n_trials_per_class`` of each, at most ``max_repeat`` of the same class in a row).

Each phase onset is one marker: ``"fixation"``, the class label itself at the cue onset
(so ``calibration`` and the online loop's trial mode use it as the cue without a mapping),
``"imagery"``, ``"rest"``; ``"start"`` and ``"end"`` frame the run.

:func:`build_schedule` turns a :class:`ParadigmConfig` into the list of
:class:`TrialEvent`; :class:`TrialScheduler` hands them out as a clock passes their times,
so the same object drives the window and the tests (with a fake clock).

Examples
--------
>>> config = ParadigmConfig(classes=("left", "right"), n_trials_per_class=1, seed=0)
>>> [e.value for e in build_schedule(config)][:5]
['start', 'fixation', 'left', 'imagery', 'rest']
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sblr_rt.timing import DEFAULT_TIMING

__all__ = [
    "RESERVED_MARKERS",
    "ParadigmConfig",
    "TrialEvent",
    "TrialScheduler",
    "build_schedule",
    "load_paradigm_config",
]

#: Marker values of the phases; a class may not use one of them as its label.
RESERVED_MARKERS = ("start", "fixation", "imagery", "rest", "end")

#: Symbols shown for common class labels (anything else is shown as the word).
DEFAULT_SYMBOLS = {
    "left": "←",
    "right": "→",
    "feet": "↓",
    "foot": "↓",
    "tongue": "↑",
    "up": "↑",
    "down": "↓",
}


@dataclass(frozen=True)
class ParadigmConfig:
    """Timing and content of a cue-paradigm run.

    Parameters
    ----------
    classes : tuple of str
        Class labels; each is also the marker value sent at its cue.
    n_trials_per_class : int
        Trials of each class (the order is balanced and randomised).
    fixation : float
        Seconds of fixation cross before the cue.
    cue : float
        Seconds the cue symbol is shown.
    imagery : float
        Seconds of imagery after the cue disappears (feedback time in online mode).
    rest_min, rest_max : float
        Bounds of the uniformly jittered rest (blank screen) after each trial.
    lead_in : float
        Seconds between ``"start"`` and the first trial.
    max_repeat : int
        At most this many trials of the same class in a row.
    seed : int | None
        Seed of the order and the jitter (None: a new one each run).
    symbols : dict
        Class label -> text shown at the cue (arrows for left/right/feet/tongue by default,
        the word itself otherwise).

    Examples
    --------
    >>> ParadigmConfig(classes=("left", "right")).trial_seconds_min
    7.75
    """

    classes: tuple[str, ...] = ("left", "right")
    n_trials_per_class: int = 20
    fixation: float = DEFAULT_TIMING.fixation
    cue: float = DEFAULT_TIMING.cue
    imagery: float = DEFAULT_TIMING.imagery
    rest_min: float = DEFAULT_TIMING.rest_min
    rest_max: float = DEFAULT_TIMING.rest_max
    lead_in: float = 2.0
    max_repeat: int = 3
    seed: int | None = None
    symbols: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        classes = self.classes
        if isinstance(classes, str):
            raise TypeError("'classes' must be a list of labels, got a str")
        classes = tuple(str(c) for c in classes)
        if len(classes) < 2 or len(set(classes)) != len(classes):
            raise ValueError(f"'classes' must be at least 2 distinct labels, got {classes}")
        clash = [c for c in classes if c in RESERVED_MARKERS]
        if clash:
            raise ValueError(
                f"'classes' must not use the phase markers {RESERVED_MARKERS}, got {clash}"
            )
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "symbols", dict(self.symbols))
        if int(self.n_trials_per_class) < 1:
            raise ValueError(f"'n_trials_per_class' must be >= 1, got {self.n_trials_per_class}")
        for name in ("fixation", "cue", "imagery", "rest_min", "rest_max", "lead_in"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"'{name}' must be a number of seconds >= 0, got {value!r}")
        if self.cue <= 0:
            raise ValueError(f"'cue' must be > 0 seconds, got {self.cue}")
        if self.rest_max < self.rest_min:
            raise ValueError(
                f"'rest_max' must be >= 'rest_min', got rest_min={self.rest_min}, "
                f"rest_max={self.rest_max}"
            )
        if int(self.max_repeat) < 1:
            raise ValueError(f"'max_repeat' must be >= 1, got {self.max_repeat}")

    @property
    def trial_seconds_min(self) -> float:
        """Shortest trial (fixation + cue + imagery + shortest rest)."""
        return self.fixation + self.cue + self.imagery + self.rest_min

    @property
    def n_trials(self) -> int:
        """Total number of trials."""
        return self.n_trials_per_class * len(self.classes)

    def symbol(self, label: str) -> str:
        """Text shown at the cue of ``label``."""
        return self.symbols.get(label) or DEFAULT_SYMBOLS.get(label.lower(), label)

    def replace(self, **changes) -> ParadigmConfig:
        """Return a copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def load_paradigm_config(path) -> ParadigmConfig:
    """Read a :class:`ParadigmConfig` from TOML (top level or a ``[paradigm]`` table).

    Parameters
    ----------
    path : str | Path
        TOML file, e.g.::

            [paradigm]
            classes = ["left", "right"]
            n_trials_per_class = 30
            imagery = 4.0

    Returns
    -------
    config : ParadigmConfig
        The configuration.
    """
    with Path(path).open("rb") as f:
        data = tomllib.load(f)
    data = data.get("paradigm", data)
    valid = {f.name for f in dataclasses.fields(ParadigmConfig)}
    unknown = set(data) - valid
    if unknown:
        raise ValueError(
            f"unknown paradigm keys {sorted(unknown)} in {path}; valid: {sorted(valid)}"
        )
    return ParadigmConfig(**data)


@dataclass(frozen=True)
class TrialEvent:
    """One phase onset of the run.

    Parameters
    ----------
    time : float
        Seconds from the start of the run.
    kind : str
        ``"start"``, ``"fixation"``, ``"cue"``, ``"imagery"``, ``"rest"`` or ``"end"``.
    value : str
        The marker sent (the class label for ``"cue"``, else ``kind``).
    trial : int
        Trial index (-1 for start and end).
    label : str | None
        Class of the trial.
    duration : float
        Seconds until the next event.
    """

    time: float
    kind: str
    value: str
    trial: int
    label: str | None
    duration: float


def _balanced_order(config: ParadigmConfig, rng: np.random.Generator) -> list[str]:
    labels = [c for c in config.classes for _ in range(config.n_trials_per_class)]
    for _ in range(1000):
        order = [labels[i] for i in rng.permutation(len(labels))]
        run, ok = 1, True
        for a, b in itertools.pairwise(order):
            run = run + 1 if a == b else 1
            if run > config.max_repeat:
                ok = False
                break
        if ok:
            return order
    # a constraint this tight is only reachable by interleaving: build it directly
    return [c for _ in range(config.n_trials_per_class) for c in rng.permutation(config.classes)]


def build_schedule(config: ParadigmConfig) -> list[TrialEvent]:
    """Lay out the whole run.

    Parameters
    ----------
    config : ParadigmConfig
        Timing and classes.

    Returns
    -------
    events : list of TrialEvent
        In time order, starting with ``"start"`` at 0 and ending with ``"end"``.
    """
    rng = np.random.default_rng(config.seed)
    order = _balanced_order(config, rng)
    rests = rng.uniform(config.rest_min, config.rest_max, size=len(order))
    events = [TrialEvent(0.0, "start", "start", -1, None, config.lead_in)]
    t = config.lead_in
    for k, (label, rest) in enumerate(zip(order, rests, strict=True)):
        for kind, value, duration in (
            ("fixation", "fixation", config.fixation),
            ("cue", label, config.cue),
            ("imagery", "imagery", config.imagery),
            ("rest", "rest", float(rest)),
        ):
            events.append(TrialEvent(t, kind, value, k, label, duration))
            t += duration
    events.append(TrialEvent(t, "end", "end", -1, None, 0.0))
    return events


class TrialScheduler:
    """Hand out the events of a schedule as a clock passes their times.

    Parameters
    ----------
    events : list of TrialEvent
        From :func:`build_schedule`.

    Examples
    --------
    >>> sched = TrialScheduler(build_schedule(ParadigmConfig(n_trials_per_class=1, seed=1)))
    >>> sched.start(100.0)
    >>> [e.kind for e in sched.due(100.0)]
    ['start']
    >>> sched.time_to_next(100.0)
    2.0
    """

    def __init__(self, events: list[TrialEvent]):
        if not events:
            raise ValueError("'events' must hold at least one event, got none")
        self.events = list(events)
        self._next = 0
        self._t0: float | None = None

    def start(self, t0: float) -> None:
        """Start the run at clock time ``t0`` (events are relative to it)."""
        self._t0 = float(t0)
        self._next = 0

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._t0 is not None

    @property
    def finished(self) -> bool:
        """Whether every event has been handed out."""
        return self._next >= len(self.events)

    def _check(self) -> float:
        if self._t0 is None:
            raise RuntimeError("the scheduler has not started: call TrialScheduler.start()")
        return self._t0

    def due(self, now: float) -> list[TrialEvent]:
        """Return the events whose time has come, in order, and consume them.

        Parameters
        ----------
        now : float
            Clock time.

        Returns
        -------
        events : list of TrialEvent
            Usually zero or one; more if the caller was late.
        """
        t0 = self._check()
        out = []
        while self._next < len(self.events) and t0 + self.events[self._next].time <= now:
            out.append(self.events[self._next])
            self._next += 1
        return out

    def time_to_next(self, now: float) -> float | None:
        """Seconds until the next event (0 if overdue), None when finished."""
        t0 = self._check()
        if self.finished:
            return None
        return max(0.0, t0 + self.events[self._next].time - now)

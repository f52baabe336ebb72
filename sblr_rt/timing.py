"""One set of defaults for a trial's timing and the window a model reads.

A session calibrated with one timing and run with another silently changes the question
the model answers, so every place that needs a default takes it from here: the cue
paradigm of the dashboard (:class:`sblr_rt.gui.schedule.ParadigmConfig`), the simulated
source (``sblr-rt simulate``, :class:`sblr_rt.playback.simulator.Simulator`),
``sblr-rt calibrate`` and the dashboard's Calibrate tab (:data:`DEFAULT_WINDOW`).

One trial, from the paradigm's point of view::

    fixation | cue (marker) | imagery | rest (jittered)
    2 s      | 1.25 s       | 3 s     | 1.5-2.5 s

The class marker is sent at the cue's onset, and the person imagines from the cue on, so
the class lasts ``cue + imagery`` = 4.25 s after the marker (:attr:`TrialTiming.task`);
between the end of one task and the next marker come the rest and the next fixation
(:attr:`TrialTiming.gap`, 3.5-4.5 s). The default window ``[0, 3.5)`` s after the cue lies
inside the task.

Examples
--------
>>> DEFAULT_TIMING.task, DEFAULT_TIMING.gap
(4.25, (3.5, 4.5))
>>> DEFAULT_WINDOW
(0.0, 3.5)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_TIMING", "DEFAULT_WINDOW", "TrialTiming", "timing_mismatch"]


@dataclass(frozen=True)
class TrialTiming:
    """The phases of one cued trial, in seconds.

    Parameters
    ----------
    fixation : float
        Fixation cross before the cue.
    cue : float
        The cue shown (its onset is the class marker).
    imagery : float
        Imagery after the cue disappears.
    rest_min, rest_max : float
        Bounds of the jittered rest after the imagery.
    """

    fixation: float = 2.0
    cue: float = 1.25
    imagery: float = 3.0
    rest_min: float = 1.5
    rest_max: float = 2.5

    @property
    def task(self) -> float:
        """Seconds of the class after its marker: the cue and the imagery."""
        return self.cue + self.imagery

    @property
    def gap(self) -> tuple[float, float]:
        """(min, max) seconds from the end of a task to the next marker: rest and fixation."""
        return (self.rest_min + self.fixation, self.rest_max + self.fixation)


#: The paradigm's, the simulator's and the documentation's trial timing.
DEFAULT_TIMING = TrialTiming()
#: Window ``(tmin, tmax)`` after the cue of continuous recordings when none is given.
DEFAULT_WINDOW = (0.0, 3.5)


def timing_mismatch(tmin: float, tmax: float, task: float, *, source: str) -> str | None:
    """Return one line saying how a model's window differs from a session's trials, or None.

    A model reads ``[tmin, tmax)`` seconds after each cue; in the session the class lasts
    ``task`` seconds after its cue (the paradigm's cue and imagery, the simulator's trial
    duration). A window that ends after the task reads the rest that follows it: the
    model then answers another question than the one it was calibrated on.

    Parameters
    ----------
    tmin, tmax : float
        The model's window after the cue, in seconds.
    task : float
        Seconds of the class after its cue in this session.
    source : str
        Where ``task`` comes from, for the message (``"the cue paradigm's cue 1.25 s +
        imagery 3 s"``).

    Returns
    -------
    line : str | None
        None when the window ends within the task (``tmax <= task``).

    Examples
    --------
    >>> timing_mismatch(0.0, 3.5, DEFAULT_TIMING.task, source="the default timing") is None
    True
    >>> print(timing_mismatch(0.0, 3.5, 3.0, source="simulate --trial-duration 3"))
    timing differs: the model reads [0, 3.5) s after each cue, but the class lasts 3 s \
after its cue here (simulate --trial-duration 3): the last 0.5 s of each window hold the \
rest after the task; calibrate with --tmax 3 or lengthen the task to 3.5 s
    """
    tmin, tmax, task = float(tmin), float(tmax), float(task)
    if tmax <= task + 1e-9:
        return None
    return (
        f"timing differs: the model reads [{tmin:g}, {tmax:g}) s after each cue, but the class "
        f"lasts {task:g} s after its cue here ({source}): the last {tmax - task:g} s of each "
        f"window hold the rest after the task; calibrate with --tmax {task:g} or lengthen the "
        f"task to {tmax:g} s"
    )

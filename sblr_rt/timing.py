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

__all__ = ["DEFAULT_TIMING", "DEFAULT_WINDOW", "TrialTiming"]


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

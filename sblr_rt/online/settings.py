"""The online loop's settings: what it decides and when, and what its snapshot keeps.

Two small frozen dataclasses, checked when built: :class:`OnlineSettings` (mode, hop, cues,
form, unit rule, smoothing, trial tap, model version) and :class:`DisplaySettings` (the
raw traces and statistics :meth:`OnlineLoop.snapshot <sblr_rt.online.OnlineLoop.snapshot>`
returns). The LSL streams of :meth:`OnlineLoop.from_lsl
<sblr_rt.online.OnlineLoop.from_lsl>` are a third, :class:`~sblr_rt.online.lsl.LSLStreams`.

The loop takes each as one object, or its fields as keywords, a shorthand:
``OnlineLoop(model, source, mode="trial", hop=0.1)`` is ``OnlineLoop(model, source,
settings=OnlineSettings(mode="trial", hop=0.1))``. :func:`take_options` sorts such keywords
by the fields of each class, so that every name and default is written in one place.
"""

from __future__ import annotations

import dataclasses

from sblr_rt.io.labels import ChannelRenaming
from sblr_rt.online.evidence import Smoothing
from sblr_rt.online.stream_units import UNIT_MISMATCH_RULE
from sblr_rt.utils._docs import fill_doc
from sblr_rt.validation.constraints import (
    apply_constraints,
    boolean,
    custom,
    integer,
    number,
    option,
)
from sblr_rt.validation.limits import LIMITS, MAX_MODEL_VERSION

__all__ = [
    "DISPLAY_RULES",
    "MODES",
    "ONLINE_RULES",
    "DisplaySettings",
    "OnlineSettings",
    "take_options",
]

#: Values of :attr:`OnlineSettings.mode`.
MODES = ("sliding", "trial")


@fill_doc
@dataclasses.dataclass(frozen=True)
class OnlineSettings:
    """What the online loop decides, and when.

    Parameters
    ----------
    mode : ``"sliding"`` | ``"trial"``
        ``"sliding"``: a decision on the latest window every ``hop`` seconds.
        ``"trial"``: the same, and also a decision on the window that ends at each cue's
        ``tmax``, marked ``"trial": true`` (needs a marker source).
    hop : float
        Seconds of stream time between sliding decisions, ``>= 0``; 0 turns sliding
        decisions off (trial mode only then).
    cues : sequence of str | str | None
        Marker values that start a trial (a comma-separated str is split); None: the
        model's class labels and the marker values of its calibration
        (:attr:`RunInfo.cue_classes <sblr_rt.online.run_info.RunInfo.cue_classes>`).
    fast : bool
        Use the fast incremental form of the model's features (default) rather than the
        plain pipeline; both give the same numbers to rounding.
    %(unit_mismatch)s
    smoothing : Smoothing | None
        How evidence accumulates over a trial (:class:`~sblr_rt.online.evidence.Smoothing`:
        EMA of the log-odds or mean since the cue; ``early`` for dynamic stopping). Every
        decision carries ``proba_smoothed`` and ``early``. None: the model's run
        configuration (:attr:`RunInfo.smoothing
        <sblr_rt.online.run_info.RunInfo.smoothing>`).
    keep_trials : bool
        Note every trial decision so that :meth:`OnlineLoop.pop_trials
        <sblr_rt.online.OnlineLoop.pop_trials>` can hand the labelled trials out (a
        session that adapts its model); trial mode only.
    model_version : int | None
        The version every decision names; None: the model's own
        (:attr:`RunInfo.version <sblr_rt.online.run_info.RunInfo.version>`).
    rename_channels : ChannelRenaming | dict | str | None
        Stream label -> model label, applied to the stream's labels before they are
        matched to the model's (a cap that publishes ``EEG C3-REF`` for ``C3``;
        :class:`sblr_rt.io.labels.ChannelRenaming`, the rules of
        :func:`mne.rename_channels`: a label the stream lacks is refused). None: the
        stream's own labels.

    Raises
    ------
    TypeError, ValueError
        If a field breaks its rule (:data:`ONLINE_RULES`: ``mode``, ``hop`` or
        ``unit_mismatch`` out of range, ``smoothing`` neither a
        :class:`~sblr_rt.online.evidence.Smoothing` nor None, a ``model_version`` the
        numeric outlet cannot send), ``hop`` is 0 in sliding mode, or ``keep_trials`` is
        set in sliding mode.

    Examples
    --------
    >>> OnlineSettings(mode="trial", hop=0.1, cues="T1, T2").cues
    ('T1', 'T2')
    """

    mode: str = "sliding"
    hop: float = 0.05
    cues: tuple[str, ...] | None = None
    fast: bool = True
    unit_mismatch: str = "rescale"
    smoothing: Smoothing | None = None
    keep_trials: bool = False
    model_version: int | None = None
    rename_channels: ChannelRenaming | None = None

    def __post_init__(self):
        apply_constraints(self, ONLINE_RULES)
        if self.mode == "sliding" and self.hop == 0:
            raise ValueError("'hop' must be > 0 in sliding mode (0 turns sliding off), got 0.")
        if self.keep_trials and self.mode != "trial":
            raise ValueError("'keep_trials' needs trial mode (cues), got mode='sliding'.")


def _cues(name, value):
    """Marker values from a list, or from a comma-separated string."""
    if isinstance(value, str):
        value = [c.strip() for c in value.split(",") if c.strip()]
    try:
        return tuple(str(c) for c in value)
    except TypeError:
        raise TypeError(
            f"{name!r} must be marker values (a list, or one string separated by commas), "
            f"got {type(value).__name__} {value!r:.80}"
        ) from None


def _smoothing(name, value):
    if not isinstance(value, Smoothing):
        raise TypeError(f"{name!r} must be a Smoothing or None, got {type(value).__name__}")
    return value


#: What each field of :class:`OnlineSettings` accepts (:mod:`sblr_rt.validation.constraints`):
#: ``hop`` in the range of ``--hop``; a version the numeric outlet sends exactly.
ONLINE_RULES = {
    "mode": option(*MODES),
    "hop": number(limit="seconds", low_open=False),
    "cues": custom(_cues, none=True),
    "fast": boolean(),
    "unit_mismatch": UNIT_MISMATCH_RULE,
    "smoothing": custom(_smoothing, none=True),
    "keep_trials": boolean(),
    "model_version": integer(
        lambda v: 0 <= v <= MAX_MODEL_VERSION,
        f"be an integer in [0, {MAX_MODEL_VERSION}] (the numeric outlet sends it as float32)",
        none=True,
    ),
    "rename_channels": custom(
        lambda name, value: ChannelRenaming.parse(value, name=name) or None, none=True
    ),
}


@dataclasses.dataclass(frozen=True)
class DisplaySettings:
    """What the online loop keeps for its snapshot (a dashboard polls it).

    Parameters
    ----------
    display_sfreq, display_seconds : float
        Rate and length of the decimated raw samples kept for the snapshot's ``raw``.
    history_seconds : float
        Horizon of the latency, step-time and rate statistics.
    max_history : int
        Number of decisions, trial decisions and cues kept.

    Raises
    ------
    TypeError, ValueError
        If a field breaks its rule (:data:`DISPLAY_RULES`).
    """

    display_sfreq: float = 100.0
    display_seconds: float = 10.0
    history_seconds: float = 60.0
    max_history: int = 500

    def __post_init__(self):
        apply_constraints(self, DISPLAY_RULES)


#: What each field of :class:`DisplaySettings` accepts: a rate an amplifier gives, seconds in
#: the range of the command line's, a count of at most ten million decisions.
DISPLAY_RULES = {
    "display_sfreq": number(limit="sfreq"),
    "display_seconds": number(limit="seconds"),
    "history_seconds": number(limit="seconds"),
    "max_history": integer(lambda v: 1 <= v <= LIMITS["count"][1],
                           "be an integer from 1 to {1} ({3})".format(*LIMITS["count"])),
}  # fmt: skip


def take_options(options: dict, cls, given=None):
    """Return ``given`` (or ``cls()``) with the fields of ``cls`` found in ``options`` set.

    The fields found are removed from ``options``, so that what is left after every
    settings class has taken its own is unknown.

    Parameters
    ----------
    options : dict
        Keyword arguments; the ones naming a field of ``cls`` are popped.
    cls : type
        A settings dataclass (:class:`OnlineSettings`, :class:`DisplaySettings`,
        :class:`~sblr_rt.online.lsl.LSLStreams`).
    given : cls | None
        The settings object passed as such; None: the defaults.

    Returns
    -------
    settings : cls

    Raises
    ------
    TypeError
        If ``given`` is not a ``cls``.
    """
    if given is not None and not isinstance(given, cls):
        raise TypeError(f"expected a {cls.__name__} or None, got {type(given).__name__}")
    names = [f.name for f in dataclasses.fields(cls) if f.name in options]
    changes = {name: options.pop(name) for name in names}
    base = cls() if given is None else given
    return dataclasses.replace(base, **changes) if changes else base


def refuse_unknown(options: dict, where: str, *classes) -> None:
    """Raise TypeError naming the keywords no settings class took.

    Parameters
    ----------
    options : dict
        What is left after :func:`take_options`.
    where : str
        The call, for the message.
    *classes : type
        The settings classes whose fields were accepted.
    """
    if options:
        valid = sorted(f.name for cls in classes for f in dataclasses.fields(cls))
        raise TypeError(
            f"{where} got unexpected keyword arguments {sorted(options)}; valid: {valid}."
        )

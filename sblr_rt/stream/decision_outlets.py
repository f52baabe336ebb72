"""The decision outlets: one JSON object per decision, and the same decisions as numbers.

:class:`PredictionOutlet` publishes each decision as one JSON string (``SBLR-Predictions``,
irregular, type ``Markers``). :class:`ProbabilityOutlet` publishes the same decisions as
numbers (float32, one channel per class, stamped with the window's end) for consumers that
read numeric streams (OpenViBE's LSL input, Timeflux, mne-lsl, feedback programs). Both take
a ``source_id`` from :func:`decision_source_id`, so they are never taken for a cue stream
(:func:`~sblr_rt.stream.is_decision_stream`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from sblr_rt.io.jsonable import dumps
from sblr_rt.stream._info import (
    DECISION_NAME,
    DECISION_SOURCE_PREFIX,
    StreamDescription,
    resolve_predicate,
)
from sblr_rt.stream._liblsl import pylsl
from sblr_rt.stream.decision_format import numeric_sample
from sblr_rt.stream.outlets import MarkerOutlet, Outlet, check_str

__all__ = [
    "PredictionOutlet",
    "ProbabilityOutlet",
    "check_outlet_names_free",
    "decision_source_id",
]

logger = logging.getLogger("sblr_rt.stream")

#: Seconds :func:`check_outlet_names_free` listens for outlets already on the network.
NAME_CHECK_TIMEOUT = 0.5


def check_outlet_names_free(outlets, *, timeout: float = NAME_CHECK_TIMEOUT) -> None:
    """Refuse to publish an outlet that one on the network already is (same name and id).

    Two outlets with one name and one ``source_id`` (two ``sblr-rt run`` with the same
    ``--outlet-name``) cannot be told apart: a consumer reads whichever it finds first. The
    second is refused before it is created. An outlet of the same name but another
    ``source_id`` (a session given its own ``outlet_source_id``) is allowed with a WARNING:
    a consumer must then choose by ``source_id``. Two sessions started within ``timeout``
    of each other can both pass.

    Parameters
    ----------
    outlets : sequence of (str, str)
        ``(name, source_id)`` of each outlet about to be published.
    timeout : float
        Seconds to listen for answers (returns at once when one answers).

    Raises
    ------
    RuntimeError
        If a stream with the name and ``source_id`` of one of ``outlets`` is visible; the
        message names it (host included) and the option that picks another name.
    """
    outlets = [(check_str(n, "name"), check_str(i, "source_id")) for n, i in outlets]
    predicate = " or ".join(resolve_predicate(name, None, None) for name, _ in outlets)
    if not predicate:  # pragma: no cover - names with both quote kinds
        return
    seen = [StreamDescription.from_info(i) for i in pylsl.resolve_bypred(predicate, 1, timeout)]
    same = [s for s in seen if (s.name, s.source_id) in outlets]
    if same:
        raise RuntimeError(
            f"an outlet named {same[0].name!r} with source_id {same[0].source_id!r} is "
            f"already on the network ({same[0]}), perhaps another 'sblr-rt run': expected "
            "an outlet no other stream is, so that a consumer reads this session's "
            "decisions; pass another --outlet-name ('outlet_name') or stop the other session"
        )
    names = {name for name, _ in outlets}
    for s in seen:
        if s.name in names:
            logger.warning(
                "Another outlet named %r is on the network (%s): a consumer must choose "
                "this session's decisions by source_id.",
                s.name,
                s,
            )


def decision_source_id(name: str) -> str:
    """Return the default ``source_id`` of a decision outlet named ``name``.

    It starts with ``sblr-rt-decisions``, which :func:`~sblr_rt.stream.is_decision_stream`
    recognises: a decision outlet with a name of the user's is still never taken for a
    cue stream.
    """
    return f"{DECISION_SOURCE_PREFIX}-{check_str(name, 'name')}"


class PredictionOutlet(MarkerOutlet):
    """The decision stream: one JSON object per decision on a ``Markers`` string stream.

    Parameters
    ----------
    source_id : str | None
        Unique identifier of the source; default :func:`decision_source_id` of ``name``.
    name : str
        Stream name.

    Notes
    -----
    Each decision is a dict such as ``{"label": "left", "proba": {"left": 0.8, "right":
    0.2}, "window_end": <LSL time of the window's last EEG sample>, "trial": true,
    "cue": null}``, serialised with :func:`json.dumps` (numpy scalars and arrays are
    converted). The sample is stamped with the time of the push, so a consumer gets the
    decision latency as ``timestamp - decision["window_end"]``.

    Examples
    --------
    >>> out = PredictionOutlet(source_id="doc-prediction-outlet")
    >>> out.push({"label": "left", "proba": {"left": 0.7, "right": 0.3},
    ...           "window_end": 0.0, "trial": False, "cue": None})
    >>> out.close()
    """

    def __init__(self, *, source_id: str | None = None, name: str = DECISION_NAME) -> None:
        if source_id is None:
            source_id = decision_source_id(name)
        super().__init__(name=name, source_id=source_id, stype="Markers")

    def push(self, decision: dict, timestamp: float | None = None) -> None:
        """Publish one decision.

        Parameters
        ----------
        decision : dict
            JSON-serialisable decision (numpy values allowed).
        timestamp : float | None
            LSL time of the sample; :func:`~sblr_rt.stream.clock.local_clock` now when None.
        """
        if not isinstance(decision, dict):
            raise TypeError(f"'decision' must be a dict, got {type(decision).__name__}")
        super().push(dumps(decision), timestamp)


#: Channel type (``desc/channels/channel/type``) of each kind of :class:`ProbabilityOutlet`
#: channel.
PROBABILITY_TYPES = ("proba", "smoothed", "flag")


class ProbabilityOutlet(Outlet):
    """The decisions as numbers: an irregular float32 stream, one channel per class.

    Parameters
    ----------
    classes : sequence of str, length n_classes
        The class labels, in the model's order.
    source_id : str | None
        Unique identifier of the source; default :func:`decision_source_id` of ``name``.
    name : str
        Stream name (default ``SBLR-Predictions-Numeric``).
    stype : str
        Stream content type.

    Notes
    -----
    Each decision is one sample of ``2 * n_classes + 3`` float32 channels, stamped with
    the decision's ``window_end`` (the LSL time of the window's last EEG sample), so a
    consumer lines it up with the EEG it came from:

    - channels ``0 .. n_classes - 1``: the probability of each class, labelled with the
      class (type ``proba``);
    - channels ``n_classes .. 2 n_classes - 1``: the smoothed probability (the evidence
      accumulated over the trial, see :mod:`sblr_rt.online.evidence`), labelled
      ``<class>_smoothed`` (type ``smoothed``); the raw one when no smoothing is set;
    - ``trial``: 1 for a trial (cue-locked) decision, else 0; ``early``: 1 for a trial
      decision taken before ``tmax`` (``--early``), else 0 (type ``flag``);
    - ``model_version``: the version of the model that decided (0 for the starting model;
      an adapting session counts up, see :mod:`sblr_rt.calibration.adapt`).

    The nominal rate is irregular: trial decisions come between the sliding ones.

    Examples
    --------
    >>> out = ProbabilityOutlet(["left", "right"], source_id="doc-probability-outlet")
    >>> out.push({"proba": {"left": 0.7, "right": 0.3}, "window_end": 12.5})
    >>> out.close()
    """

    def __init__(
        self,
        classes: Sequence[str],
        *,
        source_id: str | None = None,
        name: str = DECISION_NAME + "-Numeric",
        stype: str = "Predictions",
    ) -> None:
        self.name = check_str(name, "name")
        self.source_id = check_str(
            decision_source_id(name) if source_id is None else source_id, "source_id"
        )
        self.stype = check_str(stype, "stype", allow_empty=True)
        if isinstance(classes, str) or not isinstance(classes, Sequence):
            raise TypeError(f"'classes' must be a sequence of str, got {type(classes).__name__}")
        classes = [str(c) for c in classes]
        if len(classes) < 2 or len(set(classes)) != len(classes):
            raise ValueError(f"'classes' must be two or more distinct labels, got {classes!r}")
        self.classes = classes
        self.ch_names = [
            *classes, *(f"{c}_smoothed" for c in classes), "trial", "early", "model_version"
        ]  # fmt: skip
        kinds = ["proba"] * len(classes) + ["smoothed"] * len(classes) + ["flag"] * 2
        kinds.append("version")
        info = pylsl.StreamInfo(
            name=self.name,
            type=self.stype,
            channel_count=len(self.ch_names),
            nominal_srate=pylsl.IRREGULAR_RATE,
            channel_format=pylsl.cf_float32,
            source_id=self.source_id,
        )
        channels = info.desc().append_child("channels")
        for label, kind in zip(self.ch_names, kinds, strict=True):
            channel = channels.append_child("channel")
            channel.append_child_value("label", label)
            channel.append_child_value("unit", "none")
            channel.append_child_value("type", kind)
        info.desc().append_child("acquisition").append_child_value("manufacturer", "sblr-rt")
        self._outlet = pylsl.StreamOutlet(info)

    def sample(self, decision: Mapping) -> np.ndarray:
        """Return the sample of one decision, shape (2 * n_classes + 3,), float32.

        Parameters
        ----------
        decision : Mapping
            See :func:`numeric_sample`.
        """
        return numeric_sample(decision, self.classes)

    def push(self, decision: dict, timestamp: float | None = None) -> None:
        """Publish one decision, stamped with its ``window_end``.

        Parameters
        ----------
        decision : dict
            See :meth:`sample`; ``window_end`` stamps the sample.
        timestamp : float | None
            LSL time of the sample; default the decision's ``window_end`` (and
            :func:`~sblr_rt.stream.clock.local_clock` now when that is None).
        """
        outlet = self._get()
        row = self.sample(decision).tolist()
        if timestamp is None:
            timestamp = decision.get("window_end")
        if timestamp is None:
            outlet.push_sample(row)
        else:
            outlet.push_sample(row, float(timestamp))

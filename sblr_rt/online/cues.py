"""Which markers start a trial: the model's classes and its calibration's marker values."""

from __future__ import annotations

import logging

logger = logging.getLogger("sblr_rt.online")

__all__ = ["CueFilter", "cue_classes"]


def cue_classes(cues, classifier) -> dict[str, str]:
    """Return ``{marker value: class label}`` of the markers that start a trial.

    Parameters
    ----------
    cues : sequence of str | str | None
        See :class:`CueFilter`.
    classifier : OnlineClassifier
        Its ``classes`` and ``run_info.marker_classes``.

    Returns
    -------
    classes : dict
        ``{marker value: class label}``: the cues as their own class, or the model's
        classes and the calibration's markers of them.
    """
    if cues is not None:
        if isinstance(cues, str):
            cues = [c.strip() for c in cues.split(",") if c.strip()]
        return {str(c): str(c) for c in cues}
    classes = [str(c) for c in classifier.classes]
    out = {c: c for c in classes}
    for marker, label in classifier.run_info.marker_classes:
        if label in classes:
            out.setdefault(marker, label)
    return out


class CueFilter:
    """Keep the markers that start a trial; warn once about markers that match no class.

    Parameters
    ----------
    cues : sequence of str | str | None
        Marker values that start a trial (a comma-separated str is split); None: the
        model's classes and the marker values of its calibration
        (:attr:`RunInfo.marker_classes <sblr_rt.online.run_info.RunInfo.marker_classes>`).
    classifier : OnlineClassifier
        The classifier (its ``classes`` and ``run_info``).

    Attributes
    ----------
    classes : dict
        ``{marker value: class label}``.
    cues : frozenset of str
        The accepted marker values.
    """

    def __init__(self, cues, classifier) -> None:
        self.classes = cue_classes(cues, classifier)
        self.cues = frozenset(self.classes)
        self._model_classes = list(classifier.classes)
        self._warned = False

    def accept(self, markers) -> list[tuple[float, str]]:
        """Return the ``(timestamp, value)`` markers that start a trial, in order."""
        accepted, unknown = [], set()
        for t, value in markers:
            if str(value) in self.cues:
                accepted.append((float(t), str(value)))
            else:
                unknown.add(str(value))
        if unknown and not self._warned:
            self._warned = True
            logger.warning(
                "Markers %s match no class of the model and start no trial (cues: %s; "
                "classes: %s). Name them as cues (sblr-rt run --cues, or OnlineLoop(cues=...)), "
                "or calibrate with these marker values.",
                sorted(unknown),
                sorted(self.cues),
                self._model_classes,
            )
        return accepted

"""What the online side needs from a model file, read once into a typed object.

A model file stores its calibration as metadata (``BCIModel.metadata``): the calibration
configuration as a dict (``"config"``), the recordings' marker spellings (``"epochs"``),
the unit of the data (``"unit"``) and, for an adapted model, its version
(``"adaptation"``). :meth:`RunInfo.from_model` is the one place the online code reads
them; the loop, the cue filter, the signal checks and the unit check read the fields of
:class:`RunInfo` (``OnlineClassifier.run_info``). Files of any age load: a key they lack,
or a value of the wrong type, gives the field's default. The calibration's reference
statistics (the run centring) are the model's own typed attribute,
:attr:`BCIModel.run_centring <sblr_rt.bci_model.BCIModel.run_centring>`.
"""

from __future__ import annotations

import dataclasses
import math

from sblr_rt.bci_model.metadata import ModelRecord
from sblr_rt.online.evidence import Smoothing
from sblr_rt.utils._docs import fill_doc

__all__ = ["RunInfo"]


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """A model's run configuration, as the online loop uses it.

    Parameters
    ----------
    unit : str | None
        The unit the model was calibrated in (``"V"``, ``"uV"``, ...); None: unknown.
    classes : tuple of (str, str)
        ``(marker value, class label)`` pairs of the calibration configuration's
        ``classes``; empty: every marker value found was a class.
    recorded_markers : tuple of (str, str)
        The recordings' own spelling of those markers (``("Comment/T1", "T1")``), which a
        replay of the calibration files sends.
    smoothing : Smoothing
        The calibration's ``[online]`` fields (``smoothing``, ``tau``, ``early``,
        ``early_after``); ``sblr-rt run``'s options win over them. Without a ``tau``, the
        EMA's time constant is the model's window length (``tmax - tmin``).
    flat : float
        Calibration's rejection of flat channels (peak-to-peak at most this).
    clip_run : int | None
        Calibration's rejection of clipped channels (samples stuck at an extreme); None:
        off.
    reject : float | None
        Calibration's peak-to-peak threshold; None: none.
    version : int
        The model version (an adapted model's counter; 0 for a calibrated one).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> model = SimpleNamespace(metadata={"unit": "uV", "config": {"smoothing": "ema"}})
    >>> info = RunInfo.from_model(model)
    >>> info.unit, info.smoothing.method, info.clip_run
    ('uV', 'ema', 5)
    """

    unit: str | None = None
    classes: tuple[tuple[str, str], ...] = ()
    recorded_markers: tuple[tuple[str, str], ...] = ()
    smoothing: Smoothing = dataclasses.field(default_factory=Smoothing)
    flat: float = 0.0
    clip_run: int | None = 5
    reject: float | None = None
    version: int = 0

    @property
    def marker_classes(self) -> tuple[tuple[str, str], ...]:
        """``(marker value, class label)``: :attr:`classes`, then :attr:`recorded_markers`."""
        return (*self.classes, *self.recorded_markers)

    @classmethod
    @fill_doc
    def from_model(cls, model) -> RunInfo:
        """Read the run configuration of a model (``model.metadata``; absent: defaults).

        Parameters
        ----------
        %(model_metadata)s

        Returns
        -------
        run_info : RunInfo
        """
        tmin, tmax = getattr(model, "tmin", None), getattr(model, "tmax", None)
        window = None if tmin is None or tmax is None else float(tmax) - float(tmin)
        return cls.from_metadata(getattr(model, "metadata", None), window=window)

    @classmethod
    def from_metadata(cls, metadata: dict | None, *, window: float | None = None) -> RunInfo:
        """Read the run configuration of a model file's metadata.

        Parameters
        ----------
        metadata : dict | None
            ``BCIModel.metadata``, as saved by any version of calibration.
        window : float | None
            The model's window length in seconds: the EMA's time constant when the
            metadata sets none (None: :class:`Smoothing`'s default, 1 s).

        Returns
        -------
        run_info : RunInfo
        """
        record = ModelRecord.from_metadata(metadata)
        config = record.config or {}
        clip_run = config.get("clip_run", 5)
        reject = config.get("reject")
        smoothing = {
            "method": config.get("smoothing"),
            "tau": config.get("tau") or (window if window and window > 0 else None),
            "early": config.get("early"),
            "early_after": config.get("early_after"),
        }
        return cls(
            unit=record.unit,
            classes=_pairs(config.get("classes")),
            recorded_markers=_pairs(None if record.epochs is None else record.epochs.markers),
            smoothing=Smoothing(**{k: v for k, v in smoothing.items() if v is not None}),
            flat=_number(config.get("flat", 0.0), 0.0),
            clip_run=None if clip_run is None else max(1, int(_number(clip_run, 5))),
            reject=None if reject is None else _number(reject, None),
            version=record.version,
        )


def _pairs(value) -> tuple[tuple[str, str], ...]:
    """Return ``(marker, class)`` pairs of a dict or of a list of pairs (else none)."""
    if isinstance(value, dict):
        value = value.items()
    elif not isinstance(value, list | tuple):
        return ()
    return tuple(
        (str(p[0]), str(p[1])) for p in value if isinstance(p, list | tuple) and len(p) == 2
    )


def _number(value, default):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default

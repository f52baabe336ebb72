"""What a model's calibration recorded, read through typed records: one place knows each key.

A calibration writes ``BCIModel.metadata``, a JSON-serialisable dict that the model file
keeps (its fields are checked when a file loads: :mod:`sblr_rt.io._header_fields`). The
other layers read it here, as scikit-learn documents fitted attributes:
:attr:`BCIModel.record <sblr_rt.bci_model.BCIModel.record>` is a :class:`ModelRecord`, a
frozen copy whose fields have types. A key the metadata lacks (a file from an older
version, a model built by hand) reads as the field's default; a field that is a dict is a
copy, so that changing it changes no model. Writes stay updates of ``metadata``.

Examples
--------
>>> record = ModelRecord.from_metadata(
...     {"unit": "uV", "epochs": {"found": 45, "used": 44}, "adaptation": {"version": 3}}
... )
>>> record.unit, record.epochs.used, record.version, record.prior.n_trials
('uV', 44, 3, None)
>>> ModelRecord.from_metadata(None) == ModelRecord()
True
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["EpochCounts", "ModelRecord", "PriorRecord"]


def _mapping(value) -> dict:
    """Return a deep copy of ``value`` as a dict if it is a mapping, else an empty dict."""
    return copy.deepcopy(dict(value)) if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class EpochCounts:
    """The epochs a calibration found, used and rejected (``metadata["epochs"]``).

    Parameters
    ----------
    found : int | None
        Epochs cut from the recordings.
    used : int | None
        Epochs the model was trained on.
    per_class : dict
        Class label -> epochs used.
    rejected : dict
        Reason -> epochs left out.
    markers : dict | list | None
        The recordings' marker values behind each class, as stored (a mapping or pairs).
    """

    found: int | None = None
    used: int | None = None
    per_class: dict = field(default_factory=dict)
    rejected: dict = field(default_factory=dict)
    markers: dict | list | None = None
    _stored: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_metadata(cls, value) -> EpochCounts | None:
        """Return the counts of ``metadata["epochs"]``; None when it is absent or empty."""
        stored = _mapping(value)
        if not stored:
            return None
        return cls(
            found=stored.get("found"),
            used=stored.get("used"),
            per_class=_mapping(stored.get("per_class")),
            rejected=_mapping(stored.get("rejected")),
            markers=copy.deepcopy(stored.get("markers")),
            _stored=stored,
        )

    def to_dict(self) -> dict:
        """Return the counts as the metadata stores them (every key the source held)."""
        return copy.deepcopy(self._stored)


@dataclass(frozen=True)
class PriorRecord:
    """What a prior, or a model built on one, records of it (``metadata["prior"]``).

    Parameters
    ----------
    n_trials : int | None
        The person's trials the prior was adapted with (None: a prior as built).
    settings : dict | None
        The :class:`~sblr_rt.calibration.prior.PriorSettings` it was built with, by field.
    person_weights : dict
        The person's own members' weights inside a model with a prior, by member name.
    """

    n_trials: int | None = None
    settings: dict | None = None
    person_weights: dict = field(default_factory=dict)
    _stored: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_metadata(cls, value) -> PriorRecord:
        """Return the record of ``metadata["prior"]`` (empty without one)."""
        stored = _mapping(value)
        settings = stored.get("settings")
        return cls(
            n_trials=stored.get("n_trials"),
            settings=None if settings is None else copy.deepcopy(settings),
            person_weights=_mapping(stored.get("person_weights")),
            _stored=stored,
        )

    def to_dict(self) -> dict:
        """Return every figure the metadata holds on the prior (``{}`` without a prior)."""
        return copy.deepcopy(self._stored)


def _version(value) -> int:
    try:
        return int(_mapping(value).get("version", 0))
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class ModelRecord:
    """What a calibration recorded with a model, each field typed.

    Parameters
    ----------
    unit : str | None
        The unit of the samples the model was calibrated on, as the recording spelled it.
    config : dict | None
        The calibration configuration, flat (``CalibrationConfig.to_dict``); None: none
        recorded.
    epochs : EpochCounts | None
        The calibration's epoch counts.
    seconds : float | None
        How long the calibration took.
    excluded_channels : dict
        Channel -> why the calibration left it out.
    version : int
        The model version of a session that adapts (0: not adapted).
    sources : tuple of str
        The calibration recordings.
    created : str | None
        When the model was calibrated (ISO 8601, UTC).
    prior : PriorRecord
        The prior the model is built on (empty without one).
    probability : dict | None
        The probability calibration, as stored.
    """

    unit: str | None = None
    config: dict | None = None
    epochs: EpochCounts | None = None
    seconds: float | None = None
    excluded_channels: dict = field(default_factory=dict)
    version: int = 0
    sources: tuple[str, ...] = ()
    created: str | None = None
    prior: PriorRecord = field(default_factory=PriorRecord)
    probability: dict | None = None

    @classmethod
    def from_metadata(cls, metadata) -> ModelRecord:
        """Return the record of a model's ``metadata`` (None or not a mapping: the defaults).

        Parameters
        ----------
        metadata : dict | None
            ``BCIModel.metadata``, as saved by any version of calibration.

        Returns
        -------
        record : ModelRecord
        """
        md = metadata if isinstance(metadata, Mapping) else {}
        unit, seconds, created = md.get("unit"), md.get("seconds"), md.get("created")
        config, probability = md.get("config"), md.get("probability")
        return cls(
            unit=None if unit is None else str(unit),
            config=_mapping(config) if isinstance(config, Mapping) else None,
            epochs=EpochCounts.from_metadata(md.get("epochs")),
            seconds=seconds if isinstance(seconds, int | float) else None,
            excluded_channels=_mapping(md.get("excluded_channels")),
            version=_version(md.get("adaptation")),
            sources=tuple(str(s) for s in md.get("sources") or ()),
            created=None if created is None else str(created),
            prior=PriorRecord.from_metadata(md.get("prior")),
            probability=_mapping(probability) if isinstance(probability, Mapping) else None,
        )

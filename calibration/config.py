"""Calibration configuration: one frozen dataclass per concern, loadable from TOML.

:class:`CalibrationConfig` holds five settings objects (:mod:`sblr_rt.calibration.concerns`):
:class:`EpochSettings` (classes, window), :class:`PreprocessingSettings` (feature path,
channels, filters, scaling), :class:`RejectionSettings`, :class:`SelectionSettings`
(cross-validation, searches, solver) and :class:`RunSettings` (the run configuration stored
with the model). Every
field has a default suited to the simulated source and to epoched files; a TOML file may
set any of them by name, at top level or inside tables (``[epochs]``,
``[preprocessing]``, ``[rejection]``, ``[selection]``, ``[online]``: the table names only
group keys for reading).
``classes`` is either a list of marker values or a table mapping marker values to class
labels (several markers may map to one class). A marker the recordings spell with a
prefix is found by its last part when that is unambiguous: ``T1`` is ``Comment/T1`` in a
BrainVision export of a PhysioNet run, and ``S1`` (or ``"S  1"``) is ``Stimulus/S  1``
from BrainVision Recorder; the report lists the markers used (``markers: 'Comment/T1'
-> T1``). For a BrainVision Recorder session::

    sblr-rt calibrate --recording session.vhdr --config recorder.toml --out m.sblr.npz

with ``recorder.toml`` holding ``classes = { S1 = "left", S2 = "right" }``.

Example ``calibration.toml``::

    features = "bandpower"
    tmin = 0.5
    tmax = 3.5

    [classes]
    T1 = "fists"
    T2 = "feet"

    [preprocessing]
    bands = [[8.0, 13.0], [13.0, 30.0]]

    [rejection]
    reject = 150e-6   # peak-to-peak, in the recording's units (volts for EDF/FIF)

    [selection]
    cv = 5            # or "loo"
    search = "paper"  # the paper's full 6 x 5 x 6 x 5 grid
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from sblr_rt.calibration.concerns import (
    CONSTRAINTS,
    FEATURE_CHOICES,
    EpochSettings,
    PreprocessingSettings,
    RejectionSettings,
    RunSettings,
    SelectionSettings,
)

from sblr_rt.online.settings import refuse_unknown, take_options

# The settings classes and their rules live in sblr_rt.calibration.concerns; named here
# too, as before.
__all__ = [
    "CONCERNS",
    "CONSTRAINTS",
    "FEATURE_CHOICES",
    "TOML_KEYS",
    "CalibrationConfig",
    "EpochSettings",
    "PreprocessingSettings",
    "RejectionSettings",
    "RunSettings",
    "SelectionSettings",
    "load_config",
]

#: The concerns of a calibration configuration, in order: attribute -> settings class. The
#: TOML tables of the same names group keys for reading only.
CONCERNS = {
    "epochs": EpochSettings,
    "preprocessing": PreprocessingSettings,
    "rejection": RejectionSettings,
    "selection": SelectionSettings,
    "online": RunSettings,
}


#: Every TOML key, in order, and the setting it sets: ``(concern, field)``. A key is a
#: field's name, at top level or in any table (:func:`load_config`); no two concerns share a
#: field name (checked here), so that every key sets exactly one setting.
TOML_KEYS: dict[str, tuple[str, str]] = {
    f.name: (concern, f.name) for concern, cls in CONCERNS.items() for f in fields(cls)
}


if len(TOML_KEYS) != sum(len(fields(cls)) for cls in CONCERNS.values()):
    raise RuntimeError("two calibration settings classes share a field name")


@dataclass(frozen=True, init=False)
class CalibrationConfig:
    """Everything calibration needs besides the data, one settings object per concern.

    Parameters
    ----------
    epochs : EpochSettings | None
        The classes and the epoch window.
    preprocessing : PreprocessingSettings | None
        The feature path, channels, spatial stage, filters and scaling.
    rejection : RejectionSettings | None
        Which epochs (and online windows) are left out.
    selection : SelectionSettings | None
        Cross-validation, the searches and the solver's limits.
    online : RunSettings | None
        The run configuration stored with the model.
    **fields
        Any field of those, by name, a shorthand that wins over the objects':
        ``CalibrationConfig(tmin=0.5, cv=10)`` sets ``epochs.tmin`` and
        ``selection.cv``. A TOML file (:func:`load_config`) names the fields so, at top
        level or in tables of the concerns' names.

    Notes
    -----
    Read a setting from its concern (``config.epochs.tmin``); the flat names are the
    TOML file's and the keyword arguments' only (:data:`TOML_KEYS` maps each onto its
    concern). :meth:`to_dict` gives the fields flat, as model files store them.

    Examples
    --------
    >>> config = CalibrationConfig(tmin=0.5, tmax=3.5, cv="loo", smoothing="ema")
    >>> config.epochs.tmax, config.selection.cv, config.online.smoothing
    (3.5, 'loo', 'ema')
    """

    epochs: EpochSettings
    preprocessing: PreprocessingSettings
    rejection: RejectionSettings
    selection: SelectionSettings
    online: RunSettings

    def __init__(
        self,
        *,
        epochs: EpochSettings | None = None,
        preprocessing: PreprocessingSettings | None = None,
        rejection: RejectionSettings | None = None,
        selection: SelectionSettings | None = None,
        online: RunSettings | None = None,
        **fields,
    ) -> None:
        given = dict(
            epochs=epochs,
            preprocessing=preprocessing,
            rejection=rejection,
            selection=selection,
            online=online,
        )
        for name, cls in CONCERNS.items():
            object.__setattr__(self, name, take_options(fields, cls, given[name]))
        refuse_unknown(fields, "CalibrationConfig()", *CONCERNS.values())

    def __getattr__(self, name: str):
        # Only for names that are not attributes: a flat name says where its setting is.
        key = TOML_KEYS.get(name)
        where = f": read config.{key[0]}.{key[1]}" if key else ""
        raise AttributeError(f"'CalibrationConfig' object has no attribute {name!r}{where}")

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Return the name of every field of every concern, in order."""
        return tuple(TOML_KEYS)

    @property
    def class_map(self) -> dict[str, str] | None:
        """Marker value -> class label, or None for "every value found"."""
        return self.epochs.class_map

    def cv_tol_for(self, fold_shape) -> float:
        """Return the search's stopping rule (:meth:`SelectionSettings.cv_tol_for`)."""
        return self.selection.cv_tol_for(fold_shape)

    def is_large(self, fold_shape) -> bool:
        """Return whether folds of a shape are large (:meth:`SelectionSettings.is_large`)."""
        return self.selection.is_large(fold_shape)

    def fit_params(self) -> dict:
        """Return a final fit's estimator settings (:meth:`SelectionSettings.fit_params`)."""
        return self.selection.fit_params()

    def replace(self, **changes) -> CalibrationConfig:
        """Return a copy with some fields changed (None values are ignored).

        Parameters
        ----------
        **changes
            Field values by name; a value of None leaves the field as it is.

        Returns
        -------
        config : CalibrationConfig
            The new configuration.
        """
        unknown = set(changes) - set(TOML_KEYS)
        if unknown:
            raise ValueError(
                f"unknown configuration keys {sorted(unknown)}; valid: {sorted(TOML_KEYS)}"
            )
        changes = {k: v for k, v in changes.items() if v is not None}
        return CalibrationConfig(**{name: getattr(self, name) for name in CONCERNS}, **changes)

    def to_dict(self) -> dict:
        """Return the fields, flat, as JSON-serialisable values (as model files keep them)."""
        out = {}
        for name in CONCERNS:
            out.update(dataclasses.asdict(getattr(self, name)))
        if self.epochs.classes is not None:
            out["classes"] = dict(self.epochs.classes)
        renaming = self.preprocessing.rename_channels
        out["rename_channels"] = None if renaming is None else renaming.mapping
        return out


def load_config(path=None, **overrides) -> CalibrationConfig:
    """Read a TOML configuration and apply overrides.

    Each key, at top level or in any table, is mapped by :data:`TOML_KEYS` onto the one
    setting of that name, and each settings class is built from its own keys.

    Parameters
    ----------
    path : str | Path | None
        TOML file; None uses the defaults.
    **overrides
        Field values by key that win over the file (None values are ignored).

    Returns
    -------
    config : CalibrationConfig
        The configuration.
    """
    values: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"configuration file not found: {path}")
        try:
            with path.open("rb") as fh:
                doc = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path} is not valid TOML: {exc}") from exc
        for key, value in doc.items():
            if key in CONCERNS and isinstance(value, dict):
                for sub, subvalue in value.items():
                    if sub in values:
                        raise ValueError(f"{path}: key {sub!r} is set twice")
                    values[sub] = subvalue
            else:
                values[key] = value
        unknown = sorted(set(values) - set(TOML_KEYS))
        if unknown:
            raise ValueError(
                f"{path}: unknown configuration keys {unknown}; valid: {sorted(TOML_KEYS)}"
            )
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = sorted(set(values) - set(TOML_KEYS))
    if unknown:
        raise ValueError(f"unknown configuration keys {unknown}; valid: {sorted(TOML_KEYS)}")
    settings: dict[str, dict] = {concern: {} for concern in CONCERNS}
    for key, value in values.items():
        concern, name = TOML_KEYS[key]
        settings[concern][name] = value
    try:
        return CalibrationConfig(**{c: CONCERNS[c](**kw) for c, kw in settings.items()})
    except TypeError as exc:  # a field of the wrong type
        raise ValueError(f"invalid configuration: {exc}") from exc

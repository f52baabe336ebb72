"""Voltage units: their spellings, their factors, and the largest sample a unit can hold.

:func:`normalize_unit` reads the spellings of LSL metadata and data files
(``V``/``volts``, ``mV``/``millivolts``, ``uV``/``µV``/``microvolts``,
``nV``/``nanovolts``) and :func:`unit_factor` converts between them. :func:`max_abs_sample`
gives, in a unit, the magnitude beyond which a sample cannot be a measurement
(:data:`MAX_ABS_VOLTS`), and :func:`invalid_samples` marks the samples that are not one.
Everywhere (the online loop, calibration's epochs, a model's offline run scores) such a
sample is a gap, exactly as NaN and ±inf are: the rule lives here only.

Examples
--------
>>> normalize_unit("microvolts"), normalize_unit("µV"), normalize_unit("unknown")
('uV', 'uV', None)
>>> unit_factor("uV", "V")
1e-06
>>> max_abs_sample("uV"), max_abs_sample("V"), max_abs_sample(None)
(1000000.0, 1.0, 1000000000.0)
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_ABS_VOLTS", "invalid_samples", "max_abs_sample", "normalize_unit", "unit_factor"]

#: Volts per canonical unit.
_VOLTS = {"V": 1.0, "mV": 1e-3, "uV": 1e-6, "nV": 1e-9}
_SPELLINGS = {
    "V": ("v", "volt", "volts"),
    "mV": ("mv", "millivolt", "millivolts"),
    "uV": ("uv", "µv", "μv", "microvolt", "microvolts"),  # micro sign and Greek mu
    "nV": ("nv", "nanovolt", "nanovolts"),
}
_CANONICAL = {spelling: unit for unit, names in _SPELLINGS.items() for spelling in names}

#: Largest magnitude (volts) a sample can have and be a measurement. EEG amplifiers' input
#: ranges end well below it (about ±0.4 V for DC-coupled ones, a few to a few hundred mV
#: for the others), so a larger sample is a glitch of the amplifier or the transmission.
#: Such a sample is a gap (no filter sees it); up to the bound, a sample is filtered and
#: the float64 rounding it leaves in later windows is that of any large artefact.
MAX_ABS_VOLTS = 1.0


def normalize_unit(unit) -> str | None:
    """Return the canonical voltage unit of a spelling, or None when it is not one.

    Parameters
    ----------
    unit : str | None
        A unit as a file or an LSL stream declares it (``"microvolts"``, ``"µV"``,
        ``"V"``, ``""``, ``"unknown"``, ...). Case and surrounding blanks are ignored.

    Returns
    -------
    canonical : {"V", "mV", "uV", "nV"} | None
        None for an empty or unknown unit, or one that is not a voltage.
    """
    if unit is None:
        return None
    if not isinstance(unit, str):
        raise TypeError(f"'unit' must be a str or None, got {type(unit).__name__}")
    return _CANONICAL.get(unit.strip().lower())


def unit_factor(unit_from: str, unit_to: str) -> float:
    """Return the factor that converts samples in ``unit_from`` to ``unit_to``.

    Parameters
    ----------
    unit_from, unit_to : str
        Voltage units in any spelling :func:`normalize_unit` knows.

    Returns
    -------
    factor : float
        ``x_to = factor * x_from`` (1.0 for the same unit).
    """
    a, b = normalize_unit(unit_from), normalize_unit(unit_to)
    for name, value, canonical in (("unit_from", unit_from, a), ("unit_to", unit_to, b)):
        if canonical is None:
            raise ValueError(
                f"'{name}' must be a voltage unit (one of {sorted(_CANONICAL)}), got {value!r}"
            )
    if a == b:
        return 1.0
    return _VOLTS[a] / _VOLTS[b]


def max_abs_sample(unit) -> float:
    """Return, in ``unit``, the magnitude beyond which a sample is not a measurement.

    Parameters
    ----------
    unit : str | None
        The unit of the samples, in any spelling :func:`normalize_unit` knows.

    Returns
    -------
    max_abs : float
        :data:`MAX_ABS_VOLTS` in ``unit``; for a unit that is not a known voltage unit,
        1e9: beyond 1 V in every unit known (1 V is 1e9 nV).
    """
    canonical = normalize_unit(unit)
    # Rounded: 1 / 1e-9 is 999999999.9999999, not the power of ten meant.
    return float(round(MAX_ABS_VOLTS / _VOLTS[canonical or "nV"], 3))


def invalid_samples(data: np.ndarray, max_abs: float) -> np.ndarray:
    """Return where ``data`` holds a value that is not a measurement.

    Parameters
    ----------
    data : ndarray
        Samples, any shape.
    max_abs : float
        The bound in their unit (:func:`max_abs_sample`).

    Returns
    -------
    invalid : ndarray of bool, the shape of ``data``
        True for NaN, ±inf and every value beyond ``max_abs`` in magnitude.
    """
    # NaN compares False; so does inf with a finite bound, even when max_abs is inf.
    return ~(np.abs(data) <= min(float(max_abs), np.finfo(np.float64).max))

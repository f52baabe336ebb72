"""The unit of the stream's samples against the unit the model was calibrated in.

A model calibrated in volts and fed microvolts sees signals a million times too large and
gives every window to one class with probability 1. :func:`normalize_unit` reads the
spellings of LSL metadata and data files (``V``/``volts``, ``mV``/``millivolts``,
``uV``/``µV``/``microvolts``, ``nV``/``nanovolts``); :func:`check_stream_units` compares
the stream's units with ``model.metadata["unit"]`` and returns the factor the loop applies
to the samples as they enter (one multiplication at ingest). :func:`max_abs_sample` gives,
in a unit, the magnitude beyond which a sample cannot be a measurement
(:data:`MAX_ABS_VOLTS`), and :func:`invalid_samples` marks the samples that are not one:
online and in calibration, such a sample is a gap, exactly as NaN and ±inf are.

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

import logging
from collections.abc import Sequence

import numpy as np

from sblr_rt._docs import fill_doc

logger = logging.getLogger("sblr_rt.online")

__all__ = [
    "MAX_ABS_VOLTS",
    "UNIT_MISMATCH",
    "check_stream_units",
    "invalid_samples",
    "max_abs_sample",
    "normalize_unit",
    "unit_factor",
]

#: What the loop does when the stream's unit differs from the model's.
UNIT_MISMATCH = ("rescale", "refuse")

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


@fill_doc
def check_stream_units(
    model_unit,
    ch_units: Sequence[str] | None,
    *,
    unit_mismatch: str = "rescale",
    stream: str = "",
) -> np.ndarray | float | None:
    """Compare the stream's channel units with the model's; return the factor to apply.

    Parameters
    ----------
    model_unit : str | None
        The unit the model was calibrated in (``model.metadata["unit"]``).
    ch_units : sequence of str | None
        The units of the model's channels in the stream, in the model's channel order
        (``""`` where absent); None when the source declares none.
    %(unit_mismatch)s
    stream : str
        How to name the stream in messages.

    Returns
    -------
    factor : float | ndarray of shape (n_model_channels,) | None
        Multiply the samples (model channel order) by this to get the model's unit; None
        when nothing is to be done (same unit, or a unit unknown: a WARNING is logged).

    Raises
    ------
    ValueError
        If ``unit_mismatch`` is "refuse" and the units differ, or it is not one of
        :data:`UNIT_MISMATCH`.
    """
    if unit_mismatch not in UNIT_MISMATCH:
        raise ValueError(f"'unit_mismatch' must be one of {UNIT_MISMATCH}, got {unit_mismatch!r}")
    what = stream or "the EEG stream"
    model = normalize_unit(model_unit)
    if model is None:
        logger.warning(
            "The model's unit is %r, not a known voltage unit: %s is used as it comes "
            "(if its unit differs from the calibration data's, every decision is wrong).",
            model_unit,
            what,
        )
        return None
    units = [str(u) for u in (ch_units or ())]
    canonical = [normalize_unit(u) for u in units]
    if not units or any(c is None for c in canonical):
        unknown = sorted({u for u, c in zip(units, canonical, strict=True) if c is None})
        logger.warning(
            "%s declares %s, not a voltage unit for every channel the model reads: its "
            "samples are taken to be in the model's unit (%s).",
            what,
            f"units {unknown}" if unknown else "no units",
            model,
        )
        return None
    factors = np.array([_VOLTS[c] / _VOLTS[model] for c in canonical])
    if np.all(factors == 1.0):
        return None
    if unit_mismatch == "refuse":
        declared = sorted(set(units))
        raise ValueError(
            f"{what} is in {', '.join(declared)} but the model was calibrated in "
            f"{model_unit}; rescale the stream (--unit-mismatch rescale) or stream in "
            f"{model_unit}."
        )
    if np.all(factors == factors[0]):
        logger.info(
            "%s is in %s, the model in %s: samples are multiplied by %g as they arrive.",
            what,
            units[0],
            model_unit,
            factors[0],
        )
        return float(factors[0])
    logger.info(
        "%s mixes units %s, the model is in %s: each channel is multiplied by its factor "
        "(%s) as samples arrive.",
        what,
        sorted(set(units)),
        model_unit,
        ", ".join(f"{f:g}" for f in sorted(set(factors.tolist()))),
    )
    return factors

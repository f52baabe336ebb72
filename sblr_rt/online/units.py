"""The unit of the stream's samples against the unit the model was calibrated in.

A model calibrated in volts and fed microvolts sees signals a million times too large and
gives every window to one class with probability 1. :func:`normalize_unit` reads the
spellings of LSL metadata and data files (``V``/``volts``, ``mV``/``millivolts``,
``uV``/``µV``/``microvolts``, ``nV``/``nanovolts``); :func:`check_stream_units` compares
the stream's units with ``model.metadata["unit"]`` and returns the factor the loop applies
to the samples as they enter (one multiplication at ingest).

Examples
--------
>>> normalize_unit("microvolts"), normalize_unit("µV"), normalize_unit("unknown")
('uV', 'uV', None)
>>> unit_factor("uV", "V")
1e-06
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from sblr_rt._docs import fill_doc

logger = logging.getLogger("sblr_rt.online")

__all__ = ["UNIT_MISMATCH", "check_stream_units", "normalize_unit", "unit_factor"]

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

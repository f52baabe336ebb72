"""The unit of the stream's samples against the unit the model was calibrated in.

A model calibrated in volts and fed microvolts sees signals a million times too large and
gives every window to one class with probability 1. :func:`check_stream_units` compares
the stream's units (spelled as :func:`~sblr_rt.units.normalize_unit` reads them) with
``model.metadata["unit"]`` and returns the factor the loop applies to the samples as they
enter (one multiplication at ingest).

Examples
--------
>>> check_stream_units("V", ["microvolts", "µV"])
1e-06
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from sblr_rt.units import normalize_unit, unit_factor
from sblr_rt.utils._docs import fill_doc
from sblr_rt.validation.constraints import option

logger = logging.getLogger("sblr_rt.online")

# normalize_unit and unit_factor live in sblr_rt.units; named here too, as before.
__all__ = [
    "UNIT_MISMATCH",
    "UNIT_MISMATCH_RULE",
    "check_stream_units",
    "normalize_unit",
    "unit_factor",
]

#: What the loop does when the stream's unit differs from the model's.
UNIT_MISMATCH = ("rescale", "refuse")
#: The rule of the ``unit_mismatch`` setting (:mod:`sblr_rt.validation.constraints`).
UNIT_MISMATCH_RULE = option(*UNIT_MISMATCH)


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
    UNIT_MISMATCH_RULE.check("unit_mismatch", unit_mismatch)
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
    factors = np.array([unit_factor(c, model) for c in canonical])
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

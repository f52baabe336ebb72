"""Priors shipped with sblr-rt: model files trained across people, with their provenance.

A shipped prior is an ordinary model file (:func:`sblr_rt.io.load_model`) built by
:func:`sblr_rt.calibration.build_prior`; ``metadata["prior"]`` names its people, runs and
channels. ``README.md`` beside this module gives each one's data, licence and figures.

Examples
--------
>>> from sblr_rt.priors import SHIPPED, shipped_prior_path
>>> sorted(SHIPPED)
['physionet-eegmmidb-left-right']
>>> shipped_prior_path("physionet-eegmmidb-left-right").name
'physionet-eegmmidb-left-right.sblr.npz'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED", "resolve_model_path", "shipped_prior_path"]

#: Shipped priors: name -> one line on what it is.
SHIPPED = {
    "physionet-eegmmidb-left-right": (
        "imagined left vs right fist (markers T1/T2 -> left/right), 8-30 Hz covariance of "
        "the 21 FC/C/CP channels of the 64-channel 10-10 cap at 160 Hz, window 0.5-3.5 s; "
        "PhysioNet eegmmidb S002-S014 runs 4, 8, 12"
    ),
}
#: How a command line names a shipped prior instead of a file.
PREFIX = "shipped:"


def shipped_prior_path(name: str) -> Path:
    """Return the file of the shipped prior ``name`` (a key of :data:`SHIPPED`).

    Raises
    ------
    ValueError
        If no prior of that name is shipped (the message lists those that are).
    """
    if name not in SHIPPED:
        raise ValueError(f"no shipped prior is named {name!r}; shipped: {sorted(SHIPPED)}")
    return Path(__file__).with_name(f"{name}.sblr.npz")


def resolve_model_path(text: str) -> Path:
    """Return the file a command line's model argument names.

    ``shipped:NAME`` names a shipped prior (:func:`shipped_prior_path`); anything else is
    a path.

    Examples
    --------
    >>> resolve_model_path("s001.sblr.npz")
    PosixPath('s001.sblr.npz')
    """
    text = str(text)
    if text.startswith(PREFIX):
        return shipped_prior_path(text[len(PREFIX) :])
    return Path(text)

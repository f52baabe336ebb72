"""A stream's channels and rate against the model's: which stream channel feeds which.

The label rules are :func:`sblr_rt.io.labels.match_channels`' (exact, then case, then the
readers' normalisation); here the rate is checked, a missing channel refused with the
model's and the stream's names, and the mapping logged. :func:`check_stream_info` and
:func:`match_stream` are public from :mod:`sblr_rt.online.classifier` and
:mod:`sblr_rt.online`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from sblr_rt.io.labels import (
    ChannelMatch,
    ChannelRenaming,
    close_matches_text,
    match_channels,
    names_text,
)

__all__ = ["check_stream_info", "match_stream"]

logger = logging.getLogger("sblr_rt.online")


def match_stream(
    classifier, ch_names: Sequence[str], sfreq: float, *, stream: str = "", rename=None
) -> ChannelMatch:
    """Check a stream's rate against the model and find the model's channels in it.

    Labels are matched exactly, then ignoring case, then after the label normalisation the
    readers apply (:mod:`sblr_rt.io.labels`: a stream publishing PhysioNet's ``Fc5.`` feeds
    the model's ``FC5``); labels of another cap are mapped by ``rename`` first. The
    mapping is logged (INFO; WARNING when a label was found by case or normalisation, which
    no one asked for).

    Parameters
    ----------
    classifier : sblr_rt.online.OnlineClassifier
        The classifier (its model's raw channels and rate).
    ch_names : list of str
        The stream's channel labels, in its order.
    sfreq : float
        The stream's nominal rate in Hz.
    stream : str
        How to name the stream in messages.
    rename : ChannelRenaming | dict | str | None
        Stream label -> model label, applied to ``ch_names`` before matching by the rules
        of :func:`mne.rename_channels` (:class:`sblr_rt.io.labels.ChannelRenaming`: a
        label the stream lacks is refused, close labels named). None: the stream's own.

    Returns
    -------
    match : ChannelMatch
        Stream index, stream label and rule of each model channel, in the model's order.

    Raises
    ------
    ValueError
        If the rate differs (the model's filters and time grid are fixed at its own rate;
        it cannot resample), if channels the model needs are missing, if a model
        channel fits two stream channels, or if ``rename`` does not fit the stream. Extra
        channels and another channel order are accepted (the model's channels are picked by label).
    """
    what = stream or "the stream"
    rename = ChannelRenaming.parse(rename)
    model_names = list(classifier.ch_names)
    ch_names = [str(c) for c in ch_names]
    if not math.isclose(float(sfreq), classifier.sfreq, rel_tol=1e-9):
        raise ValueError(
            f"{what} runs at {float(sfreq):g} Hz but the model was calibrated at "
            f"{classifier.sfreq:g} Hz; this model cannot resample (its filters and time "
            f"grid are fixed at {classifier.sfreq:g} Hz): stream at {classifier.sfreq:g} Hz "
            f"or calibrate again at {float(sfreq):g} Hz."
        )
    try:
        match = match_channels(model_names, ch_names, rename=rename, what=what)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    if match.missing:
        matched = {s for _, s, _ in match.pairs}
        extra = [c for c in ch_names if c not in matched]
        more = f"; the stream has instead {names_text(extra)}" if extra else ""
        close = close_matches_text(list(match.missing), extra)
        renamed = f", after rename_channels {rename}" if rename else ""
        raise ValueError(
            f"{what} lacks {len(match.missing)} of the model's {len(model_names)} channels: "
            f"{names_text(list(match.missing))}{more} (got {len(ch_names)} channels; labels "
            "compared exactly, ignoring case, and normalised as calibration does, e.g. "
            f"'Fc5.' = 'FC5'{renamed}){close}."
        )
    level = logging.WARNING if match.guessed else logging.INFO
    logger.log(level, "Channels of %s: %s.", what, match.summary)
    return match


def check_stream_info(
    classifier, ch_names: Sequence[str], sfreq: float, *, stream: str = ""
) -> np.ndarray | None:
    """Check a stream's channels and rate against the model (see :func:`match_stream`).

    Parameters
    ----------
    classifier : sblr_rt.online.OnlineClassifier
        The classifier (its model's raw channels and rate).
    ch_names : list of str
        The stream's channel labels, in its order.
    sfreq : float
        The stream's nominal rate in Hz.
    stream : str
        How to name the stream in messages.

    Returns
    -------
    picks : ndarray of int, shape (n_model_channels,) | None
        Indices of the model's raw channels in the stream's order (None when the stream
        has exactly the model's channels in the model's order).

    Raises
    ------
    ValueError
        As :func:`match_stream`.
    """
    match = match_stream(classifier, ch_names, sfreq, stream=stream)
    return None if match.identity else np.array(match.picks, dtype=np.intp)

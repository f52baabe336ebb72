"""Channel labels: THE normalisation rule, and matching a stream's labels to a model's.

One rule, used by the readers (a PhysioNet/BCI2000 file's ``Fc5.`` is stored as ``FC5``,
so calibration puts ``FC5`` in the model) and by the online start-up (a stream that
publishes ``Fc5.``, as BCI2000 or a player of the file does, still finds the model's
``FC5``). :func:`standard_label` is :func:`mne.datasets.eegbci.standardize`'s rule, applied
to one label: strip the dots (and white space), upper case, then ``Fp`` and a trailing
``z`` as 10-10 spells them.

:func:`match_channels` pairs each model channel with one stream channel, trying in turn
(each tier only on what the previous ones left):

1. ``"exact"``: the same label;
2. ``"case"``: the same label ignoring case (``CZ`` for ``Cz``);
3. ``"normalised"``: the same label after :func:`standard_label`, ignoring case
   (``Fc5.`` for ``FC5``).

Two stream channels that fit one model channel at the same tier (or one stream channel
that fits two) is an error: which one to read would be a guess.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MATCH_RULES",
    "ChannelMatch",
    "close_matches",
    "is_physionet_style",
    "match_channels",
    "standard_label",
    "standard_labels",
]

logger = logging.getLogger("sblr_rt.io")

#: How a model channel was found in a stream, in the order they are tried.
MATCH_RULES = ("exact", "case", "normalised")


def standard_label(name: str) -> str:
    """Return the 10-10 spelling of a channel label (``"Fc5."`` -> ``"FC5"``).

    The rule of :func:`mne.datasets.eegbci.standardize`, on one label, white space
    stripped too: dots stripped, upper case, a trailing ``Z`` as ``z``, a leading ``FP``
    as ``Fp`` (``"Fpz."`` -> ``"Fpz"``, ``"Afz."`` -> ``"AFz"``).

    Parameters
    ----------
    name : str
        A channel label.

    Returns
    -------
    label : str
        The standard spelling.
    """
    label = str(name).strip().strip(".").strip().upper()
    if label.endswith("Z"):
        label = label[:-1] + "z"
    if label.startswith("FP"):
        label = "Fp" + label[2:]
    return label


def close_matches(missing: Sequence[str], names: Sequence[str], *, n: int = 3) -> dict:
    """Return the labels of ``names`` that may be each missing label under another spelling.

    A label that holds the missing one as a token (``"EEG C3-REF"`` for ``C3``, ignoring
    case and the dots of :func:`standard_label`), then the closest spellings by
    :func:`difflib.get_close_matches` (``"C03"`` for ``C3``). Meant for error messages: what
    to rename, not a match the code takes.

    Parameters
    ----------
    missing : sequence of str
        The labels not found.
    names : sequence of str
        The labels that are there.
    n : int
        At most this many candidates per label.

    Returns
    -------
    close : dict
        ``{missing label: [candidates]}``, only for labels with a candidate.

    Examples
    --------
    >>> close_matches(["C3", "Cz"], ["EEG C3-REF", "EEG CZ-REF", "EEG C4-REF"])
    {'C3': ['EEG C3-REF'], 'Cz': ['EEG CZ-REF']}
    """
    names = [str(x) for x in names]
    keys = {x: standard_label(x).upper() for x in names}
    out = {}
    for label in missing:
        key = standard_label(label).upper()
        token = re.compile(rf"(^|[^A-Z0-9]){re.escape(key)}($|[^A-Z0-9])")
        found = [x for x in names if token.search(keys[x])]
        if len(found) < n:
            upper = {keys[x]: x for x in names}
            close = difflib.get_close_matches(key, list(upper), n=n, cutoff=0.6)
            found += [upper[c] for c in close if upper[c] not in found]
        if found:
            out[str(label)] = found[:n]
    return out


def close_matches_text(missing: Sequence[str], names: Sequence[str]) -> str:
    """Return ``"; close labels: C3 -> 'EEG C3-REF'; ..."`` for an error (empty if none)."""
    close = close_matches(missing, names)
    if not close:
        return ""
    shown = list(close.items())[:8]
    parts = [f"{m} -> {' or '.join(repr(c) for c in cs)}" for m, cs in shown]
    more = f" (+{len(close) - len(shown)} more)" if len(close) > len(shown) else ""
    return (
        f"; close labels: {'; '.join(parts)}{more}: rename the channels to the model's labels "
        "(e.g. mne's raw.rename_channels) if they are the same electrodes"
    )


def is_physionet_style(names: Sequence[str]) -> bool:
    """Whether labels are PhysioNet/BCI2000 EDF labels (padded with dots, ``Fc5.``)."""
    return any(str(name).endswith(".") for name in names)


def standard_labels(names: Sequence[str]) -> list[str]:
    """Return the labels a reader stores: :func:`standard_label` of PhysioNet-style labels.

    Labels of other files are kept as they are (a lab's own names, ``EEG001``, must not be
    changed behind its back); only dot-padded PhysioNet/BCI2000 labels are standardised.

    Parameters
    ----------
    names : sequence of str
        A file's channel labels.

    Returns
    -------
    labels : list of str
        The labels to store, one per name.
    """
    names = [str(n) for n in names]
    if not is_physionet_style(names):
        return names
    return [standard_label(n) for n in names]


def _key(name: str, rule: str) -> str:
    if rule == "exact":
        return name
    if rule == "case":
        return name.casefold()
    return standard_label(name).casefold()


@dataclass(frozen=True)
class ChannelMatch:
    """Which stream channel feeds each model channel, and by which rule.

    Attributes
    ----------
    pairs : tuple of (str, str, str)
        ``(model label, stream label, rule)`` per model channel found, in the model's
        order; ``rule`` is one of :data:`MATCH_RULES`.
    picks : tuple of int
        Stream index of each model channel found, in the model's order.
    missing : tuple of str
        Model channels no stream channel fits.
    n_stream : int
        Channels of the stream.
    """

    pairs: tuple = ()
    picks: tuple = ()
    missing: tuple = ()
    n_stream: int = 0

    @property
    def renamed(self) -> list[tuple[str, str, str]]:
        """The pairs found other than by the exact label."""
        return [p for p in self.pairs if p[2] != "exact"]

    @property
    def identity(self) -> bool:
        """Whether the stream holds exactly the model's channels, same labels and order."""
        return (
            not self.missing
            and not self.renamed
            and self.n_stream == len(self.picks)
            and list(self.picks) == list(range(self.n_stream))
        )

    @property
    def summary(self) -> str:
        """The mapping in one line.

        For example ``"64 of 64 model channels found in 64: 64 by normalised label
        (stream -> model: Fc5. -> FC5, ...)"``.
        """
        n = len(self.pairs)
        text = f"{n} of {n + len(self.missing)} model channels found in {self.n_stream}"
        counts = {r: sum(p[2] == r for p in self.pairs) for r in MATCH_RULES}
        text += ": " + ", ".join(
            f"{c} {'by ' + rule + ' label' if rule != 'exact' else 'exactly'}"
            for rule, c in counts.items()
            if c
        )
        renamed = self.renamed
        if renamed:
            shown = ", ".join(f"{s} -> {m}" for m, s, _ in renamed[:6])
            more = f", ... ({len(renamed)} in all)" if len(renamed) > 6 else ""
            text += f" (stream -> model: {shown}{more})"
        if self.missing:
            text += f"; missing: {', '.join(self.missing)}"
        return text


def match_channels(model_names: Sequence[str], stream_names: Sequence[str]) -> ChannelMatch:
    """Find each model channel in a stream (exact, then case, then normalised label).

    Parameters
    ----------
    model_names : sequence of str
        The model's channel labels, in its order.
    stream_names : sequence of str
        The stream's channel labels, in its order.

    Returns
    -------
    match : ChannelMatch
        The pairs found, their stream indices and the model channels not found (the caller
        decides whether a missing channel is an error).

    Raises
    ------
    ValueError
        If a model channel fits several stream channels at the first tier that fits, or a
        stream channel fits several model channels.
    """
    model_names = [str(n) for n in model_names]
    stream_names = [str(n) for n in stream_names]
    found: dict[int, tuple[int, str]] = {}  # model index -> (stream index, rule)
    for rule in MATCH_RULES:
        used = {s for s, _ in found.values()}
        free = [j for j in range(len(stream_names)) if j not in used]
        by_key: dict[str, list[int]] = {}
        for j in free:
            by_key.setdefault(_key(stream_names[j], rule), []).append(j)
        claimed: dict[int, int] = {}
        for i, name in enumerate(model_names):
            if i in found:
                continue
            fits = by_key.get(_key(name, rule), [])
            if len(fits) > 1:
                raise ValueError(
                    f"model channel {name!r} fits {len(fits)} stream channels by {rule} "
                    f"label: {', '.join(stream_names[j] for j in fits)}; expected one: "
                    "rename or drop the duplicates in the stream"
                )
            if fits:
                j = fits[0]
                if j in claimed:
                    raise ValueError(
                        f"stream channel {stream_names[j]!r} fits model channels "
                        f"{model_names[claimed[j]]!r} and {name!r} by {rule} label; expected "
                        "one model channel per stream channel"
                    )
                claimed[j] = i
                found[i] = (j, rule)
    order = [i for i in range(len(model_names)) if i in found]
    return ChannelMatch(
        pairs=tuple((model_names[i], stream_names[found[i][0]], found[i][1]) for i in order),
        picks=tuple(found[i][0] for i in order),
        missing=tuple(n for i, n in enumerate(model_names) if i not in found),
        n_stream=len(stream_names),
    )

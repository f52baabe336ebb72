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

Labels of another cap (``EEG C3-REF`` for ``C3``) are not guessed: a
:class:`ChannelRenaming` (old label -> new label, ``--rename-channels`` on the command line,
``rename_channels`` in the calibration TOML) maps them, by the rules of
:func:`mne.rename_channels`, for a recording (:meth:`sblr_rt.io.Recording.rename_channels`)
and a stream (``match_channels(..., rename=...)``) alike.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MATCH_RULES",
    "RENAMED",
    "ChannelMatch",
    "ChannelRenaming",
    "close_matches",
    "close_matches_text",
    "is_physionet_style",
    "match_channels",
    "standard_label",
    "standard_labels",
]

logger = logging.getLogger("sblr_rt.io")

#: How a model channel was found in a stream, in the order they are tried.
MATCH_RULES = ("exact", "case", "normalised")
#: The rule of a pair whose stream label a :class:`ChannelRenaming` mapped (the tiers are
#: tried on the new label).
RENAMED = "renamed"


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
    """Return ``"; close labels: C3 -> 'EEG C3-REF'; ...: rename ..."`` for an error (or "").

    The hint ends with the ``--rename-channels`` value that maps the first candidate of each
    missing label onto it.
    """
    close = close_matches(missing, names)
    if not close:
        return ""
    shown = list(close.items())[:8]
    pairs = ",".join(f"{cs[0]}={m}" for m, cs in shown)
    return (
        f"; {_close_labels(close)}: rename the channels if they are the same electrodes "
        f"(--rename-channels '{pairs}', or rename_channels in the calibration TOML)"
    )


def _close_labels(close: dict) -> str:
    """``"close labels: C3 -> 'EEG C3-REF'; Cz -> 'EEG CZ-REF'"`` (at most eight shown)."""
    shown = list(close.items())[:8]
    parts = [f"{m} -> {' or '.join(repr(c) for c in cs)}" for m, cs in shown]
    more = f" (+{len(close) - len(shown)} more)" if len(close) > len(shown) else ""
    return f"close labels: {'; '.join(parts)}{more}"


#: How a renaming is written: on the command line, in a file, in an error message.
_RENAMING_FORMAT = (
    "OLD=NEW pairs separated by commas (e.g. 'EEG C3-REF=C3,EEG C4-REF=C4'), a file of "
    "them (one or more a line; # starts a comment), or a table of old -> new labels"
)


@dataclass(frozen=True)
class ChannelRenaming:
    """Old channel label -> new label: the labels of another cap mapped onto the model's.

    The one place a renaming is parsed (:meth:`parse`: the command line's
    ``--rename-channels``, the calibration TOML's ``rename_channels``, a file, a dict) and
    applied (:meth:`apply`), to a recording's labels
    (:meth:`sblr_rt.io.Recording.rename_channels`) and to a stream's
    (:func:`match_channels`). The rules are :func:`mne.rename_channels`': an old label
    the channels lack is refused, and so is a renaming that leaves two channels with one
    label; labels not named are kept.

    Parameters
    ----------
    pairs : tuple of (str, str)
        ``(old label, new label)``, each old label once, each new label once.

    Examples
    --------
    >>> renaming = ChannelRenaming.parse("EEG C3-REF=C3, EEG C4-REF=C4")
    >>> renaming.mapping
    {'EEG C3-REF': 'C3', 'EEG C4-REF': 'C4'}
    >>> renaming.apply(["EEG C3-REF", "EEG C4-REF", "EOG"])
    ['C3', 'C4', 'EOG']
    """

    pairs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "pairs", _once(self.pairs, "rename_channels"))

    @classmethod
    def parse(cls, value, *, name: str = "rename_channels") -> ChannelRenaming:
        """Return the renaming a value describes.

        Parameters
        ----------
        value : str | Path | dict | sequence of (str, str) | ChannelRenaming | None
            ``"OLD=NEW,OLD=NEW"``; the path of a file of such pairs (one or more a line,
            ``#`` comments); a dict or pairs of old -> new labels (a TOML table); None or
            empty: no renaming.
        name : str
            How to name the setting in messages (``'--rename-channels'``).

        Returns
        -------
        renaming : ChannelRenaming

        Raises
        ------
        TypeError, ValueError
            For anything else, a pair without both labels, a file that does not exist, or
            a label named twice; the message says what was expected and what was got.
        """
        if value is None:
            return cls()
        if isinstance(value, ChannelRenaming):
            return value
        if isinstance(value, Path) or (isinstance(value, str) and "=" not in value):
            text = str(value).strip()
            if not text:
                return cls()
            path = Path(text)
            if not path.is_file():
                raise ValueError(
                    f"{name!r} must be {_RENAMING_FORMAT}, got {text!r} (no '=' and no such file)"
                )
            lines = [line.split("#", 1)[0] for line in path.read_text("utf-8").splitlines()]
            return cls(_once(_pairs_of(",".join(lines), name, source=f" in {path}"), name))
        if isinstance(value, str):
            return cls(_once(_pairs_of(value, name), name))
        items = value.items() if isinstance(value, dict) else value
        try:
            pairs = [tuple(p) for p in items]
        except TypeError:
            raise TypeError(
                f"{name!r} must be {_RENAMING_FORMAT}, got {type(value).__name__} {value!r:.80}"
            ) from None
        bad = [p for p in pairs if len(p) != 2 or not all(isinstance(x, str) and x for x in p)]
        if bad:
            raise ValueError(f"{name!r} must be {_RENAMING_FORMAT}, got {bad[0]!r:.80}")
        return cls(_once(pairs, name))

    @property
    def mapping(self) -> dict[str, str]:
        """Old label -> new label."""
        return dict(self.pairs)

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def __str__(self) -> str:
        return ",".join(f"{old}={new}" for old, new in self.pairs)

    def apply(self, names: Sequence[str], *, what: str = "the recording", known=()) -> list:
        """Return the labels renamed, by :func:`mne.rename_channels`' rules.

        Parameters
        ----------
        names : sequence of str
            The labels, in order.
        what : str
            How to name their owner in messages (``"the stream 'amp'"``).
        known : collection of str
            Other labels the renaming may name without their being in ``names`` (a
            recording's channels left out as bad or not EEG).

        Returns
        -------
        names : list of str
            Renamed, in the same order.

        Raises
        ------
        ValueError
            If an old label is neither in ``names`` nor in ``known`` (close labels named),
            or the renaming leaves two channels with one label.
        """
        names = [str(n) for n in names]
        if not self.pairs:
            return names
        unknown = [old for old, _ in self.pairs if old not in names and old not in known]
        if unknown:
            close = close_matches(unknown, names)
            shown = names_text(names, 8)
            raise ValueError(
                f"'rename_channels' must name labels {what} has, got {len(unknown)} it lacks: "
                f"{', '.join(map(repr, unknown))} (its {len(names)} labels: {shown})"
                + (f"; {_close_labels(close)}" if close else "")
            )
        present = {old: new for old, new in self.pairs if old in names}
        renamed = [present.get(n, n) for n in names]
        clashes = sorted(
            {n for n, old in zip(renamed, names, strict=True) if old in present}
            & {n for n in renamed if renamed.count(n) > 1}
        )
        if clashes:
            label = clashes[0]
            sources = [old for old, new in zip(names, renamed, strict=True) if new == label]
            raise ValueError(
                f"'rename_channels' must leave every channel of {what} its own label, got "
                f"{label!r} for {' and '.join(map(repr, sources))}"
            )
        if len(set(names)) < len(names):  # MNE's info holds unique labels only
            return renamed
        import mne

        info = mne.create_info(names, 1.0)
        mne.rename_channels(info, present, verbose="error")
        return list(info.ch_names)


def _once(pairs, name: str) -> tuple[tuple[str, str], ...]:
    """Return the pairs as str, refusing an old or a new label named twice."""
    pairs = tuple((str(old), str(new)) for old, new in pairs)
    for what, values in (("old", [o for o, _ in pairs]), ("new", [n for _, n in pairs])):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ValueError(
                f"{name!r} must name each {what} label once, got "
                f"{', '.join(map(repr, twice))} twice"
            )
    return pairs


def _pairs_of(text: str, name: str, *, source: str = "") -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in text.split(","):
        if not item.strip():
            continue
        old, sep, new = (part.strip() for part in item.partition("="))
        if not sep or not old or not new or "=" in new:
            raise ValueError(f"{name!r} must be {_RENAMING_FORMAT}, got {item.strip()!r}{source}")
        pairs.append((old, new))
    return tuple(pairs)


def names_text(names: Sequence[str], limit: int = 12) -> str:
    """Return ``"A, B, C, ... (64 in all)"``: at most ``limit`` labels, for a message."""
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


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
        order; ``rule`` is one of :data:`MATCH_RULES`, or :data:`RENAMED` for a stream
        label the renaming mapped (the stream's own label is kept here).
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
        """The pairs found other than by the exact label (a renaming's too)."""
        return [p for p in self.pairs if p[2] != "exact"]

    @property
    def guessed(self) -> list[tuple[str, str, str]]:
        """The pairs found by case or normalised label: what no one asked for."""
        return [p for p in self.pairs if p[2] not in ("exact", RENAMED)]

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
        counts = {r: sum(p[2] == r for p in self.pairs) for r in (*MATCH_RULES, RENAMED)}
        words = {"exact": "exactly", RENAMED: "by rename_channels"}
        text += ": " + ", ".join(
            f"{c} {words.get(rule, 'by ' + rule + ' label')}" for rule, c in counts.items() if c
        )
        renamed = self.renamed
        if renamed:
            shown = ", ".join(f"{s} -> {m}" for m, s, _ in renamed[:6])
            more = f", ... ({len(renamed)} in all)" if len(renamed) > 6 else ""
            text += f" (stream -> model: {shown}{more})"
        if self.missing:
            text += f"; missing: {', '.join(self.missing)}"
        return text


def match_channels(
    model_names: Sequence[str],
    stream_names: Sequence[str],
    *,
    rename: ChannelRenaming | None = None,
    what: str = "the stream",
) -> ChannelMatch:
    """Find each model channel in a stream (exact, then case, then normalised label).

    Parameters
    ----------
    model_names : sequence of str
        The model's channel labels, in its order.
    stream_names : sequence of str
        The stream's channel labels, in its order.
    rename : ChannelRenaming | None
        Stream labels to map first (:meth:`ChannelRenaming.apply`); the pairs keep the
        stream's own label, with the rule :data:`RENAMED`.
    what : str
        How to name the stream in the renaming's messages.

    Returns
    -------
    match : ChannelMatch
        The pairs found, their stream indices and the model channels not found (the caller
        decides whether a missing channel is an error).

    Raises
    ------
    ValueError
        If a model channel fits several stream channels at the first tier that fits, a
        stream channel fits several model channels, or the renaming does not fit the
        stream (:meth:`ChannelRenaming.apply`).
    """
    model_names = [str(n) for n in model_names]
    own = [str(n) for n in stream_names]
    stream_names = own if not rename else ChannelRenaming.parse(rename).apply(own, what=what)
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

    def how(j: int, tier: str) -> str:
        return RENAMED if own[j] != stream_names[j] else tier

    return ChannelMatch(
        pairs=tuple((model_names[i], own[found[i][0]], how(*found[i])) for i in order),
        picks=tuple(found[i][0] for i in order),
        missing=tuple(n for i, n in enumerate(model_names) if i not in found),
        n_stream=len(stream_names),
    )

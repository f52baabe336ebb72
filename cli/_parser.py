"""The parser every sub-command registers on: defaults shown, the logging options too.

:func:`sblr_rt.cli.build_parser` hands :class:`SubcommandParser` to ``add_subparsers``, so
each command's ``add_parser(subparsers)`` builds one without importing it; the top-level
parser takes the same logging options from :func:`add_logging_options`.
"""

from __future__ import annotations

import argparse
import logging

__all__ = [
    "DefaultsFormatter",
    "SubcommandParser",
    "add_logging_options",
    "add_rename_option",
    "renaming_of",
]


class DefaultsFormatter(argparse.HelpFormatter):
    """Show each option's default, unless its help already says it or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        # ``is``, not ``in``: a default of 0 or 0.0 is a default to show (0 == False).
        if (
            "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


class SubcommandParser(argparse.ArgumentParser):
    """A sub-command's parser: defaults shown in ``--help``, the logging options too.

    The logging options are accepted before and after the sub-command; given after it,
    they win. Their defaults here are suppressed so that a sub-command never resets what
    was given before it.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        if kwargs.get("description"):
            kwargs["description"] = kwargs["description"].replace("``", "")
        super().__init__(*args, **kwargs)
        add_logging_options(self, default=argparse.SUPPRESS)


def add_logging_options(parser: argparse.ArgumentParser, *, default) -> None:
    """Add ``-v``/``--verbose``, ``-q``/``--quiet`` and ``--log-file`` to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The top-level parser or a sub-command's.
    default : object
        Default of ``--log-file`` (and of the level, None meaning info):
        ``argparse.SUPPRESS`` on a sub-command, so it never resets the top level's.
    """
    group = parser.add_argument_group("logging")
    # -v and -q set one level: the last given wins, after the sub-command too.
    group.add_argument(
        "-v",
        "--verbose",
        action="store_const",
        dest="log_level",
        const=logging.DEBUG,
        default=logging.INFO if default is None else default,
        help="debug log output (the default is info)",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_const",
        dest="log_level",
        const=logging.ERROR,
        default=argparse.SUPPRESS,
        help="errors only",
    )
    group.add_argument(
        "--log-file",
        metavar="PATH",
        default=default,
        help="also write the log to this file (appended)",
    )


def add_outlet_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--outlet-name``: the decision outlets' name (None: the library's default).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    """
    parser.add_argument(
        "--outlet-name",
        default=None,
        help="name of the decision outlets: NAME (JSON) and NAME-Numeric (numbers), one per "
        "session on a network (default: SBLR-Predictions)",
    )


def add_rename_option(parser: argparse.ArgumentParser, *, where: str) -> None:
    """Add ``--rename-channels`` (labels of another cap mapped onto the model's).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A sub-command's parser.
    where : str
        What the renaming applies to, for the help (``"every recording as it is read"``).
    """
    parser.add_argument(
        "--rename-channels",
        metavar="OLD=NEW,...|FILE",
        help=f"channel labels to rename in {where}, by MNE's rules (mne.rename_channels: a "
        "label that is not there is refused, and so are two channels with one label): "
        "'EEG C3-REF=C3,EEG C4-REF=C4', or a file of such pairs (one or more a line, # "
        "comments)",
    )


def renaming_of(args: argparse.Namespace):
    """Return ``--rename-channels`` parsed (:class:`sblr_rt.io.labels.ChannelRenaming`), or None.

    Raises
    ------
    ValueError
        For a value that is not OLD=NEW pairs nor a file of them: one line, naming the option.
    """
    from sblr_rt.io.labels import ChannelRenaming

    value = getattr(args, "rename_channels", None)
    return ChannelRenaming.parse(value, name="--rename-channels") or None

"""The marker stream options, spelled one way for every sub-command.

``--marker-stream NAME`` and ``--marker-source-id ID`` (like the EEG stream's ``--stream``
and ``--source-id``). Earlier spellings (``record --markers``, ``record
--markers-source-id``, ``gui --markers``) still work, hidden from ``--help``: they warn
and name the new option.
"""

from __future__ import annotations

import argparse
import sys

#: Old spelling -> new spelling of the marker options.
RENAMED = {"--markers": "--marker-stream", "--markers-source-id": "--marker-source-id"}


class _Renamed(argparse.Action):
    """Store the value under the new option's name, and say the option was renamed."""

    def __init__(self, option_strings, dest, new, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            f"warning: {option_string} is renamed {self.new}; the old spelling will go away",
            file=sys.stderr,
            flush=True,
        )
        setattr(namespace, self.dest, values)


def add_marker_options(parser, *, stream_help: str, source_id: bool = True, old=()) -> None:
    """Add ``--marker-stream`` (and ``--marker-source-id``) to a parser or group.

    Parameters
    ----------
    parser : argparse.ArgumentParser | argparse._ArgumentGroup
        Where the options go.
    stream_help : str
        Help of ``--marker-stream`` (what its default is, for this command).
    source_id : bool
        Add ``--marker-source-id`` too.
    old : sequence of str
        Old spellings this command accepted (keys of :data:`RENAMED`), kept as hidden
        aliases.
    """
    parser.add_argument(
        "--marker-stream", default=None, metavar="NAME", dest="marker_stream", help=stream_help
    )
    if source_id:
        parser.add_argument(
            "--marker-source-id",
            default=None,
            metavar="ID",
            dest="marker_source_id",
            help="marker stream source_id",
        )
    for spelling in old:
        new = RENAMED[spelling]
        parser.add_argument(
            spelling,
            dest=new[2:].replace("-", "_"),
            action=_Renamed,
            new=new,
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )

"""The marker stream options, spelled one way for every sub-command.

``--marker-stream NAME``, ``--marker-type TYPE`` and ``--marker-source-id ID`` (like the
EEG stream's ``--stream``, ``--stream-type`` and ``--source-id``). A stream given by name
is taken whatever its type; types match in any case. Earlier spellings
(``record --markers``, ``record --markers-source-id``, ``gui --markers``) still work,
hidden from ``--help``: they warn and name the new option.
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


def add_stream_type_option(parser) -> None:
    """Add ``--stream-type`` (the EEG stream's type, any case) to a parser or group."""
    parser.add_argument(
        "--stream-type",
        default=None,
        metavar="TYPE",
        dest="stream_type",
        help="EEG stream type, any case (default: EEG, or any type when --stream names the "
        "stream; mne-lsl's player says eeg, OpenViBE signal)",
    )


def add_marker_options(parser, *, stream_help: str, source_id: bool = True, old=()) -> None:
    """Add ``--marker-stream``, ``--marker-type`` (and ``--marker-source-id``) to a parser.

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
    parser.add_argument(
        "--marker-type",
        default=None,
        metavar="TYPE",
        dest="marker_type",
        help="marker stream type, any case (default: Markers, or any type when "
        "--marker-stream names the stream; mne-lsl's player says annotations, OpenViBE "
        "marker)",
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


def parse_classes(value: str):
    """Parse ``--classes``: ``A,B`` (marker values) or ``T1=fists,T2=feet`` (marker -> label).

    Parameters
    ----------
    value : str
        The option's value, comma-separated.

    Returns
    -------
    classes : list of str | dict
        The marker values, or the marker -> label map.
    """
    items = [v.strip() for v in value.split(",") if v.strip()]
    if len(items) < 2:
        raise argparse.ArgumentTypeError(f"--classes needs at least two values, got {value!r}")
    if all("=" in v for v in items):
        return {k.strip(): lab.strip() for k, lab in (v.split("=", 1) for v in items)}
    if any("=" in v for v in items):
        raise argparse.ArgumentTypeError("--classes: use either A,B or A=a,B=b, not both")
    return items

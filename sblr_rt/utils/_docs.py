"""One docstring template for the parameters that many functions share (MNE's ``fill_doc``).

A docstring names a shared parameter as ``%(name)s`` on a line of its own, and
:func:`fill_doc` puts in the entry of :data:`docdict`, indented as that line is. The
command line's help texts come from the same entries (:func:`help_text`), so that a
parameter is described once whether a user meets it in Python or on the command line.

Examples
--------
>>> @fill_doc
... def connect(timeout):
...     '''Connect.
...
...     Parameters
...     ----------
...     %(timeout)s
...     '''
>>> print(connect.__doc__.splitlines()[4].strip())
timeout : float
>>> help_text("timeout")
'seconds to wait for the streams to appear'
"""

from __future__ import annotations

__all__ = ["docdict", "fill_doc", "help_text"]

#: Shared parameter entries, numpydoc style: ``name : type`` then the description.
docdict: dict[str, str] = {}

# ---------------------------------------------------------------------------- streams
docdict["stream"] = """\
stream : str | None
    The EEG stream's name, whatever its type (default: the only stream of type EEG)."""
docdict["source_id"] = """\
source_id : str | None
    The EEG stream's ``source_id``."""
docdict["timeout"] = """\
timeout : float
    Seconds to wait for the streams to appear."""
docdict["unit_mismatch"] = """\
unit_mismatch : {"rescale", "refuse"}
    When the stream's channel units and the model's are both known voltages and
    differ: multiply the samples by the constant factor as they enter (default), or
    refuse at start. An unknown unit on either side is logged as a warning and the
    samples are used as they come."""

# ---------------------------------------------------------------------------- decisions
docdict["window_end"] = """\
window_end : float | None
    Timestamp of the window's last sample."""
docdict["trial"] = """\
trial : bool
    Whether this is a trial (cue-locked) decision."""
docdict["cue"] = """\
cue : str | None
    The cue's marker value, for trial decisions."""

# ---------------------------------------------------------------------------- model files
docdict["model_metadata"] = """\
model : BCIModel | object
    Anything with a ``metadata`` dict (or None): a model file's record, of any age."""

# ---------------------------------------------------------------------------- commands
docdict["args"] = """\
args : argparse.Namespace
    The parsed command line of the command."""


def fill_doc(obj):
    """Put the :data:`docdict` entries into ``obj``'s docstring, in place of ``%(name)s``.

    Parameters
    ----------
    obj : callable | type
        A function, method or class whose docstring names entries as ``%(name)s``, each
        on a line of its own.

    Returns
    -------
    obj : callable | type
        ``obj``, its docstring filled (the entries indented as their line is).

    Raises
    ------
    KeyError
        If the docstring names an entry :data:`docdict` lacks.
    """
    doc = obj.__doc__
    if not doc:
        return obj
    lines = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("%(") and stripped.endswith(")s"):
            indent = line[: len(line) - len(line.lstrip())]
            entry = docdict[stripped[2:-2]]
            lines.extend(indent + part if part else part for part in entry.splitlines())
        else:
            lines.append(line)
    obj.__doc__ = "\n".join(lines) + ("\n" if doc.endswith("\n") else "")
    return obj


def help_text(name: str) -> str:
    """Return the description of a :data:`docdict` entry as a command-line help text.

    Parameters
    ----------
    name : str
        The entry.

    Returns
    -------
    text : str
        Its description on one line, starting lower case and without the final period,
        as argparse help texts are written, and without the reST literals' backquotes.
    """
    lines = docdict[name].splitlines()[1:]
    description = " ".join(line.strip() for line in lines).replace("``", "")
    return (description[:1].lower() + description[1:]).removesuffix(".")

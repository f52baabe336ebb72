"""Where a recording's files may be: inside the recording's folder, reached without a loop.

A header names other files (BrainVision's ``DataFile=`` and ``MarkerFile=``, EEGLAB's
``.fdt``), and a folder of recordings (a BIDS tree, a recorder's sidecar) may hold
symbolic links. Every reader of :mod:`sblr_rt.io` and :mod:`sblr_rt.recorder` reads only
files that, once every ``..`` and symbolic link is resolved, lie inside the folder of the
recording it was asked for (a BIDS recording: inside its BIDS root). A file named outside
it is refused with the path, before it is opened:

- :func:`check_inside`: one path against one folder;
- :func:`brainvision_files`: the files a BrainVision header names;
- :func:`check_tree`: a whole tree walked as :func:`glob.glob` would (symbolic links to
  folders followed), refused if a link leads back to a folder on its own path (a loop), out
  of the tree, or if the tree is deeper or larger than any recording tree
  (:data:`MAX_TREE_DEPTH`, :data:`MAX_TREE_ENTRIES`).
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_TREE_DEPTH",
    "MAX_TREE_ENTRIES",
    "brainvision_files",
    "check_inside",
    "check_tree",
]

#: Most bytes of a text header (BrainVision ``.vhdr``): real ones hold a few kB.
MAX_HEADER_BYTES = 16 * 1024**2
#: Deepest folder nesting below a tree's root (BIDS: ``sub-/ses-/eeg/``, a few more).
MAX_TREE_DEPTH = 32
#: Most entries (files and folders) walked in a tree (OpenNeuro's largest EEG data sets
#: hold about 100,000 files).
MAX_TREE_ENTRIES = 1_000_000


def check_inside(path, folder, *, what: str) -> Path:
    """Return ``path`` resolved if it lies inside ``folder``, else raise.

    Parameters
    ----------
    path : str | Path
        The file to read (relative paths are relative to the current folder, as
        :func:`open` takes them).
    folder : str | Path
        The folder it must be in, once both are resolved (``..`` and symbolic links).
    what : str
        Who names the file, for the message (``"'x.vhdr' (DataFile)"``).

    Returns
    -------
    resolved : Path
        The absolute path, symbolic links resolved.

    Raises
    ------
    ValueError
        If the resolved path is not inside the resolved ``folder``; the message names
        both.
    """
    resolved = Path(os.path.realpath(path))
    root = Path(os.path.realpath(folder))
    if resolved != root and not resolved.is_relative_to(root):
        shown = f"'{path}'" if str(path) == str(resolved) else f"'{path}' (-> '{resolved}')"
        raise ValueError(
            f"{what} names {shown}: expected a file inside the recording's folder "
            f"'{root}', got one outside it; refused (nothing is read from outside a "
            "recording's folder: copy the file next to the recording)"
        )
    return resolved


def brainvision_files(header) -> list[tuple[str, Path]]:
    """Return the files a BrainVision header (``.vhdr``/``.ahdr``) names, as MNE reads them.

    Parameters
    ----------
    header : str | Path
        The header file.

    Returns
    -------
    files : list of (str, Path)
        ``("DataFile", path)`` and ``("MarkerFile", path)`` (when named), each joined to
        the header's folder as :func:`mne.io.read_raw_brainvision` joins them; empty when
        the header does not parse (MNE's own error then applies).

    Raises
    ------
    ValueError
        If the header is larger than :data:`MAX_HEADER_BYTES`.
    """
    header = Path(header)
    size = header.stat().st_size
    if size > MAX_HEADER_BYTES:
        raise ValueError(
            f"'{header}' is a BrainVision header of {size} bytes: expected at most "
            f"{MAX_HEADER_BYTES} bytes (real headers hold a few kB), got {size}"
        )
    raw = header.read_bytes()
    _, _, body = raw.partition(b"\n")  # the first line names the format, as MNE skips it
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("latin-1")
    params = text.split("[Comment]")[0]
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(params)
    except configparser.Error:
        return []
    section = "Common Infos" if cfg.has_section("Common Infos") else "Common infos"
    files = []
    for key in ("DataFile", "MarkerFile"):
        if cfg.has_option(section, key) and cfg.get(section, key):
            files.append((key, Path(os.path.join(header.parent, cfg.get(section, key)))))
    return files


def check_tree(root, *, max_depth: int = MAX_TREE_DEPTH, max_entries: int = MAX_TREE_ENTRIES):
    """Walk a tree as a recursive glob would, and refuse loops, exits and unbounded size.

    Symbolic links to folders are followed (as :func:`glob.glob` with ``**`` follows them);
    entries whose name starts with ``.`` are left out (glob skips them too; ``.git`` of a
    DataLad data set may link out of the tree).

    Parameters
    ----------
    root : str | Path
        The tree's root folder.
    max_depth : int
        Deepest nesting allowed below ``root``.
    max_entries : int
        Most entries walked.

    Returns
    -------
    n_entries : int
        The entries walked (files and folders).

    Raises
    ------
    ValueError
        If a symbolic link leads to a folder on its own path (a loop: a walk would never
        end), or anywhere outside ``root``; or if the tree is deeper than ``max_depth`` or
        larger than ``max_entries``. The message names the link or the folder.
    """
    root = Path(root)
    real_root = Path(os.path.realpath(root))
    n_entries = 0
    # (folder as walked, its real path, the real paths of the folders above it, depth)
    stack = [(root, real_root, frozenset({real_root}), 0)]
    while stack:
        folder, real, above, depth = stack.pop()
        if depth > max_depth:
            raise ValueError(
                f"'{folder}' is {depth} folders below the tree's root '{root}': expected at "
                f"most {max_depth}, got {depth}; refused"
            )
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable: the reader's own error applies if it needs it
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden (.git, .datalad): glob does not see it, MNE-BIDS reads none
            n_entries += 1
            if n_entries > max_entries:
                raise ValueError(
                    f"the tree '{root}' holds more than {max_entries} files and folders: "
                    f"expected at most {max_entries}; refused before walking further"
                )
            if entry.is_symlink():
                target = Path(os.path.realpath(entry.path))
                if target != real_root and not target.is_relative_to(real_root):
                    raise ValueError(
                        f"the tree '{root}' holds a symbolic link '{entry.path}' to "
                        f"'{target}': expected links inside the tree, got one outside it; "
                        "refused (nothing is read from outside a recording's folder)"
                    )
                if not target.is_dir():
                    continue
                if target in above:
                    raise ValueError(
                        f"the tree '{root}' holds a symbolic link loop: '{entry.path}' "
                        f"leads back to '{target}', a folder on its own path; expected no "
                        "loop, refused (a walk of this tree would never end)"
                    )
                stack.append((Path(entry.path), target, above | {target}, depth + 1))
            elif entry.is_dir(follow_symlinks=False):
                inner = real / entry.name
                stack.append((Path(entry.path), inner, above | {inner}, depth + 1))
    return n_entries

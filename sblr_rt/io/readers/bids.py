"""BIDS recordings through :func:`mne_bids.read_raw_bids`.

A recording inside a BIDS tree is named two ways:

- by its file, ``ROOT/sub-01/[ses-1/]eeg/sub-01_[ses-1_]task-motor_run-1_eeg.edf``:
  :func:`bids_path_of` recognises it (a ``sub-*`` name whose BIDS root holds
  ``dataset_description.json``), so :func:`sblr_rt.io.read_recording` reads it here, not as
  a bare EDF;
- by its entities, root + subject + task (+ session, runs, acquisition):
  :func:`find_bids` lists the matching recordings (``sblr-rt calibrate --bids-root ROOT
  --subject 01 --task motor --run 1 --run 2``).

Reading through MNE-BIDS is what makes the tree's sidecars count: the markers come from
``*_events.tsv`` (its ``trial_type`` column; ``value`` when there is none), channel types
and ``status=bad`` from ``*_channels.tsv``. Then the rules of
:func:`~sblr_rt.io.readers.mne_formats.recording_from_raw` apply: EEG channels not marked
bad, PhysioNet labels standardised.

A tree is walked (:func:`sblr_rt.io.paths.check_tree`) before MNE-BIDS searches it: a
symbolic link that loops back to a folder on its own path, or leads out of the BIDS root,
is refused with the link's path (MNE-BIDS's searches follow links and would never end).
Every file read, sidecars included, lies inside the BIDS root; the recording's header is
checked as :func:`~sblr_rt.io.readers.mne_formats.read_mne` checks it (files it names,
rate, size) before its samples are read.
"""

from __future__ import annotations

from pathlib import Path

from sblr_rt.io.paths import check_tree
from sblr_rt.io.readers._common import logger
from sblr_rt.io.readers.mne_formats import check_header, check_raw, recording_from_raw
from sblr_rt.io.recording import Recording

__all__ = ["bids_path_of", "find_bids", "read_bids"]

#: Data types of EEG recordings in BIDS (the folder and the file name's suffix).
_DATATYPES = ("eeg", "ieeg", "meg")

#: Files of a BIDS data folder that are sidecars, not recordings.
_SIDECARS = (".json", ".tsv", ".tsv.gz")

#: Files that hold part of a recording another file names (BrainVision, EEGLAB).
_COMPANIONS = (".vmrk", ".eeg", ".fdt")


def _bids_root(path: Path) -> Path | None:
    """Return the BIDS root above ``path`` (the folder with ``dataset_description.json``)."""
    for parent in path.resolve().parents:
        if (parent / "dataset_description.json").is_file():
            return parent
        if not parent.name.startswith(("sub-", "ses-")) and parent.name not in _DATATYPES:
            return None
    return None


def bids_path_of(path) -> object | None:
    """Return the :class:`mne_bids.BIDSPath` of a recording file inside a BIDS tree.

    Parameters
    ----------
    path : str | Path
        A file.

    Returns
    -------
    bids_path : mne_bids.BIDSPath | None
        None when ``path`` is not a BIDS recording (its name does not start with ``sub-``,
        or no ``dataset_description.json`` is above it).
    """
    path = Path(path)
    name = path.name.lower()
    if not name.startswith("sub-") or name.endswith(_SIDECARS):
        return None
    root = _bids_root(path)
    if root is None:
        return None
    from mne_bids import get_bids_path_from_fname

    try:
        bids_path = get_bids_path_from_fname(path, check=False, verbose="error")
    except Exception as exc:  # a sub-* name that is no valid BIDS name
        logger.info("%s is under a BIDS root but not a BIDS name (%s): read as a file", path, exc)
        return None
    return bids_path.update(root=root, check=False)


def find_bids(
    root,
    *,
    subject: str,
    task: str | None = None,
    session: str | None = None,
    runs=None,
    acquisition: str | None = None,
    datatype: str = "eeg",
) -> list:
    """List the recordings of a BIDS tree that match the entities given.

    Parameters
    ----------
    root : str | Path
        The BIDS root (holds ``dataset_description.json``).
    subject : str
        Subject label, without ``sub-`` (``"01"``).
    task, session, acquisition : str | None
        Entities without their prefix; None matches any.
    runs : sequence of str or int | None
        Run labels (``1`` matches ``run-1``); None matches any.
    datatype : str
        ``"eeg"`` (default), ``"ieeg"`` or ``"meg"``.

    Returns
    -------
    bids_paths : list of mne_bids.BIDSPath
        Sorted; one per recording file.

    Raises
    ------
    FileNotFoundError
        If ``root`` is not a BIDS root.
    ValueError
        If nothing matches (the message lists what the tree holds for the subject), or the
        tree holds a symbolic link loop or a link out of it, or is deeper or larger than
        :func:`~sblr_rt.io.paths.check_tree` allows.
    """
    from mne_bids import find_matching_paths, get_entity_vals

    root = Path(root)
    if not (root / "dataset_description.json").is_file():
        raise FileNotFoundError(
            f"'{root}' is not a BIDS root: expected a folder with dataset_description.json"
        )
    if datatype not in _DATATYPES:
        raise ValueError(f"'datatype' must be one of {_DATATYPES}, got {datatype!r}")
    check_tree(root)
    runs = None if runs is None else [str(r) for r in runs]
    found = find_matching_paths(
        root,
        subjects=subject,
        sessions=session,
        tasks=task,
        acquisitions=acquisition,
        datatypes=datatype,
        suffixes=datatype,
        ignore_json=True,
    )
    found = sorted(
        (
            p
            for p in found
            if not str(p.fpath).lower().endswith((*_SIDECARS, *_COMPANIONS))
            and (runs is None or _run_in(p.run, runs))
        ),
        key=lambda p: str(p.fpath),
    )
    if not found:
        subjects = get_entity_vals(root, "subject")
        tasks = get_entity_vals(root, "task")
        raise ValueError(
            f"no {datatype} recording in BIDS root '{root}' for subject {subject!r}, task "
            f"{task!r}, session {session!r}, runs {runs}; the tree has subjects {subjects} "
            f"and tasks {tasks}"
        )
    return found


def _run_in(run, runs: list[str]) -> bool:
    """Whether a file's run label is one of ``runs`` (``1`` matches ``run-01`` too)."""
    if run is None:
        return False
    run = str(run)
    return any(run == r or (run.isdigit() and r.isdigit() and int(run) == int(r)) for r in runs)


def read_bids(bids_path) -> Recording:
    """Read one BIDS recording with its sidecars (events, channel types and status).

    Parameters
    ----------
    bids_path : mne_bids.BIDSPath
        From :func:`bids_path_of` or :func:`find_bids`.

    Returns
    -------
    recording : Recording
        Markers from ``events.tsv``, EEG channels not marked bad; ``source`` is the file.

    Raises
    ------
    ValueError
        If the tree holds a symbolic link loop or a link out of the BIDS root, a file the
        recording names lies outside the root, the rate or size is out of bounds
        (:mod:`sblr_rt.io.declared_limits`), or the recording or a sidecar does not read.
    """
    from mne_bids import read_raw_bids

    fpath = Path(bids_path.fpath)
    root = Path(bids_path.root) if bids_path.root is not None else fpath.parent
    check_tree(root)
    check_header(fpath, folder=root)
    try:
        raw = read_raw_bids(bids_path, verbose="error")
    except Exception as exc:  # MNE-BIDS and MNE raise many kinds for a broken tree
        raise ValueError(
            f"'{fpath}' is not a readable BIDS recording (a file or sidecar is missing or "
            f"does not fit): {type(exc).__name__}: {exc}"
        ) from exc
    check_raw(raw, source=fpath, folder=root)
    try:
        raw.load_data(verbose="error")
    except Exception as exc:
        raise ValueError(
            f"'{fpath}' is not a readable BIDS recording (its samples do not read): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    rec = recording_from_raw(raw, source=fpath)
    logger.info("BIDS %s: %d markers from its events", fpath.name, len(rec.marker_values))
    return rec

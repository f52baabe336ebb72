"""Convert the sidecar of a killed (or finished) recording to a FIF file."""

from __future__ import annotations

from pathlib import Path

from sblr_rt.io.outputs import check_output
from sblr_rt.recorder.export import write_fif
from sblr_rt.recorder.sidecar import read_sidecar


def default_out(sidecar) -> Path:
    """Return the FIF file :func:`recover` writes by default: next to the sidecar.

    The name is the sidecar's up to its ``.fif`` (``x_raw.fif.rec`` -> ``x_raw.fif``,
    ``x_raw.fif.rec.incomplete-20260101-120000`` -> ``x_raw.fif``), else the sidecar's
    name + ``"_raw.fif"``. The ``out`` written in ``header.json`` is never used: the
    folder may have moved, and the header may have been edited.

    Parameters
    ----------
    sidecar : str | Path
        The sidecar folder.

    Returns
    -------
    out : Path
        The FIF file.
    """
    sidecar = Path(sidecar)
    name = sidecar.name
    lower = name.lower()
    for ext in (".fif.gz", ".fif"):
        at = lower.rfind(ext + ".")
        if at > 0:
            return sidecar.with_name(name[: at + len(ext)])
    return sidecar.with_name(name + "_raw.fif")


def recover(sidecar, out=None, *, overwrite: bool = False) -> Path:
    """Convert a sidecar folder (e.g. of a killed recording) to a FIF file.

    Parameters
    ----------
    sidecar : str | Path
        The ``OUT.fif.rec`` folder.
    out : str | Path | None
        FIF file to write; None: next to the sidecar (:func:`default_out`).
    overwrite : bool
        Replace an existing file.

    Returns
    -------
    out : Path
        The FIF file (readable by :func:`mne.io.read_raw_fif` and
        :func:`sblr_rt.io.read_recording`).
    """
    contents = read_sidecar(sidecar)
    out = Path(out) if out is not None else default_out(sidecar)
    check_output(out, what=f"'{out}'", overwrite=overwrite)  # names the file if it exists
    if len(contents["timestamps"]) == 0:
        raise ValueError(f"'{sidecar}' holds no EEG sample; nothing to write, got 0 samples")
    return write_fif(contents, out, overwrite=overwrite)

"""Output files: checked before the work that fills them, rescued if the write still fails.

A calibration searches for minutes and a recording lasts as long as the session; an output
path that cannot be written must be found before, not after. :func:`check_output` refuses a
directory, a folder that is missing or not writable (tried, not guessed from permission
bits), too little free space when the need is known, and an existing file unless it may be
replaced. :class:`OutputLock` keeps a second writer (another ``sblr-rt record`` on the same
file) out while the first writes. If the write fails anyway once the work is done (the disk
filled meanwhile, the folder was removed), :func:`write_or_rescue` writes the result next to
the intended path, else in the current folder or the temporary folder, and says where.

Examples
--------
>>> from pathlib import Path
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> check_output(folder / "model.sblr.npz", what="'--out'").name
'model.sblr.npz'
"""

from __future__ import annotations

import datetime as _dt
import errno
import logging
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["OutputLock", "check_output", "write_or_rescue"]

logger = logging.getLogger("sblr_rt.io")


def check_output(
    path, *, what: str, overwrite: bool = True, need_bytes: int | None = None
) -> Path:
    """Check that ``path`` can be written now; return it as a :class:`~pathlib.Path`.

    Parameters
    ----------
    path : str | Path
        The output file.
    what : str
        How to name it in messages (``"'--out'"``).
    overwrite : bool
        Whether an existing file may be replaced.
    need_bytes : int | None
        Bytes the output will take, when known: less free space than that is refused.

    Returns
    -------
    path : Path

    Raises
    ------
    FileExistsError
        If the file exists and ``overwrite`` is False.
    ValueError
        If ``path`` is a directory, its folder is missing or is not a folder, the folder
        cannot be written, or it has less free space than ``need_bytes``.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(
            f"{what} is a directory ({path}); name a file in it, e.g. {path / 'out.fif'}"
        )
    if path.exists() and not overwrite:
        raise FileExistsError(errno.EEXIST, f"{what} exists", str(path))
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        raise ValueError(f"{what}: folder {folder} does not exist")
    if not folder.is_dir():
        raise ValueError(f"{what}: {folder} is not a folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{what}: {path} exists and cannot be written (read-only)")
    try:  # a real write: permission bits, read-only mounts and ACLs all show here
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{what}: cannot write in {folder}: {exc.strerror or exc}") from None
    if need_bytes is not None:
        free = shutil.disk_usage(folder).free
        if free < need_bytes:
            raise ValueError(
                f"{what}: {folder} has {free / 2**20:.1f} MiB free; the output needs about "
                f"{need_bytes / 2**20:.1f} MiB"
            )
    return path


def write_or_rescue(write, path, *, what: str = "the result") -> Path:
    """Call ``write(path)``; if that fails, write next to it (or elsewhere) and say where.

    Parameters
    ----------
    write : callable
        ``write(target)`` writes the whole result to ``target`` (a Path).
    path : str | Path
        Where the result should go.
    what : str
        How to name the result in the log.

    Returns
    -------
    written : Path
        Where the result is: ``path``, or the rescue file.

    Raises
    ------
    OSError
        If no place at all could be written (the first error, with the others noted).
    """
    path = Path(path)
    try:
        write(path)
        return path
    except OSError as first:
        failure = first
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = f"{path.stem}.rescued-{stamp}{path.suffix}"
    tried = [f"{path}: {failure.strerror or failure}"]
    for folder in (path.parent, Path.cwd(), Path(tempfile.gettempdir())):
        target = folder / name
        try:
            write(target)
        except OSError as exc:
            tried.append(f"{target}: {exc.strerror or exc}")
            continue
        logger.error(
            "Could not write %s to %s (%s); it was written to %s instead.",
            what,
            path,
            failure.strerror or failure,
            target,
        )
        return target
    raise OSError(
        failure.errno, f"could not write {what} anywhere; tried " + "; ".join(tried)
    ) from failure


class OutputLock:
    """Keep other writers of the same output out while one writes (an advisory lock).

    Parameters
    ----------
    path : str | Path
        The output; the lock is taken on ``<path>.lock`` beside it (removed on release),
        so that it works before the output exists. The operating system drops the lock
        when the process ends, however it ends.
    what : str
        How to name the output in messages.

    Raises
    ------
    ValueError
        From :meth:`acquire`, when another process (or another writer in this one)
        holds the lock.
    """

    def __init__(self, path, *, what: str = "the output") -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.what = what
        self._fd = None

    def acquire(self) -> OutputLock:
        """Take the lock, or raise ``ValueError`` naming the output."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock, as before
            return self
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ValueError(
                f"another writer (a second recorder?) is writing {self.what} {self.path}; "
                "choose another file"
            ) from None
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock up (safe to call twice; never raises).

        A lock file that cannot be removed (the folder became read-only, or went) is left
        with a warning: the lock is the open file, not its name, so a stale file blocks
        nothing, and raising here would hide the error that ended the work (such as the
        ``--recover`` hint of a recording that could not be written).
        """
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            self.lock_path.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning(
                "Could not remove the lock file %s (%s); it blocks nothing, delete it by hand.",
                self.lock_path,
                exc.strerror or exc,
            )
        finally:
            os.close(fd)

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc_info) -> None:
        self.release()

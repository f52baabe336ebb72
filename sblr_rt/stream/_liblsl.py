"""pylsl, with liblsl's own log quiet unless the user's LSL configuration says otherwise.

liblsl writes ``INFO|`` lines to stderr when it starts (``Loaded default config``, its
build); they mean nothing to the person at the controls. liblsl reads its configuration
once, at its first use, from ``LSLAPICFG``, ``./lsl_api.cfg``, ``~/lsl_api/lsl_api.cfg`` or
``/etc/lsl_api/lsl_api.cfg`` (the first found). So, before any LSL call, this module gives
liblsl that same file's content plus a ``[log]`` section at level -1 (warnings and
errors) when the file sets no log level of its own, or that section alone when there is
no file. A ``[log]`` section the user wrote wins, and so does every other setting of the
file. Every module of :mod:`sblr_rt.stream` imports pylsl through this one.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pylsl

__all__ = ["LOG_LEVEL", "liblsl_config", "pylsl"]

logger = logging.getLogger("sblr_rt.stream")

#: liblsl's log level: -2 errors, -1 warnings, 0 info, 1-9 more detail.
LOG_LEVEL = -1


def _user_config() -> Path | None:
    """Return the configuration file liblsl would read, or None."""
    candidates = [os.environ.get("LSLAPICFG"), "lsl_api.cfg"]
    candidates += [Path.home() / "lsl_api" / "lsl_api.cfg", "/etc/lsl_api/lsl_api.cfg"]
    for path in candidates:
        if path and Path(path).is_file():
            return Path(path)
    return None


def liblsl_config(user: str | None) -> str | None:
    r"""Return the configuration to give liblsl, or None to leave the user's file alone.

    Parameters
    ----------
    user : str | None
        The content of the user's configuration file (None: there is none).

    Returns
    -------
    content : str | None
        ``user`` plus a ``[log]`` section at :data:`LOG_LEVEL`; None when ``user`` has
        a ``[log]`` section already.

    Examples
    --------
    >>> liblsl_config(None)
    '[log]\nlevel = -1\n'
    >>> liblsl_config("[log]\nlevel = 0\n") is None
    True
    """
    if user is None:
        return f"[log]\nlevel = {LOG_LEVEL}\n"
    if re.search(r"^\s*\[log\]", user, flags=re.MULTILINE | re.IGNORECASE):
        return None
    return user.rstrip("\n") + f"\n\n[log]\nlevel = {LOG_LEVEL}\n"


def _quiet_liblsl() -> None:
    path = _user_config()
    try:
        content = liblsl_config(None if path is None else path.read_text(errors="replace"))
    except OSError:  # an unreadable file: liblsl will say so itself
        return
    if content is None:
        return
    try:
        pylsl.set_config_content(content)
    except (NotImplementedError, AttributeError):  # liblsl older than 1.17.7
        logger.debug("liblsl cannot take its configuration as text; its INFO lines stay")


_quiet_liblsl()

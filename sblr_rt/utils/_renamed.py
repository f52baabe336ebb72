"""Names that were renamed: the old one still works and warns (``DeprecationWarning``).

Every rename is listed in the CHANGELOG ("Renamed"); the old names go in a later major
release. A module that moved (:data:`MOVED_MODULES`) is still imported by its old dotted
path: :func:`install_moved_modules` (run by ``import sblr_rt``) puts a finder last on
:data:`sys.meta_path` that answers only the old paths, with the module at its new one.

Examples
--------
>>> class Thing:
...     new = 1
...     old = renamed_attribute("old", "new")
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     Thing().old
1
>>> str(caught[0].message)
"'old' is deprecated: it is renamed 'new'"
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

__all__ = [
    "MOVED_MODULES",
    "install_moved_modules",
    "renamed_attribute",
    "renamed_keyword",
    "warn_renamed",
]

#: Old dotted path -> new dotted path of every module that moved (issue 45, "Names and
#: places"): ``import sblr_rt.verdict`` gives :mod:`sblr_rt.bci_model.verdict`, and warns.
MOVED_MODULES = {
    "sblr_rt.verdict": "sblr_rt.bci_model.verdict",
    "sblr_rt.search_record": "sblr_rt.bci_model.search_record",
    "sblr_rt.regions": "sblr_rt.bci_model.regions",
    "sblr_rt.io.limits": "sblr_rt.io.declared_limits",
    "sblr_rt.online.units": "sblr_rt.online.stream_units",
    "sblr_rt.online.incremental.base": "sblr_rt.online.incremental.form",
    "sblr_rt.online.incremental.ensemble": "sblr_rt.online.incremental.ensemble_form",
    "sblr_rt.playback.replay": "sblr_rt.playback.stream_player",
    "sblr_rt.calibration.live": "sblr_rt.calibration.live_recording",
    "sblr_rt.calibration.workers": "sblr_rt.calibration.parallel",
    "sblr_rt.calibration.evaluate": "sblr_rt.calibration.evaluation",
    "sblr_rt.gui.live": "sblr_rt.gui.live_tab",
    "sblr_rt.gui.recorder": "sblr_rt.gui.stream_recorder",
    "sblr_rt.gui.workers": "sblr_rt.gui.background",
}

_UNSET = object()


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (``DeprecationWarning``) that ``old`` is now called ``new``."""
    warnings.warn(
        f"{old!r} is deprecated: it is renamed {new!r}", DeprecationWarning, stacklevel=stacklevel
    )


def renamed_keyword(old: str, new: str, old_value, new_value, *, default):
    """Return the value of a keyword argument given under its new or its old name.

    Parameters
    ----------
    old, new : str
        The keyword's old and new names.
    old_value : object
        What the old keyword got (None: not given).
    new_value : object
        What the new keyword got.
    default : object
        The new keyword's default.

    Returns
    -------
    value : object
        ``old_value`` (with a ``DeprecationWarning``) when given, else ``new_value``.

    Raises
    ------
    TypeError
        If both keywords are given.
    """
    if old_value is None:
        return new_value
    if new_value != default:
        raise TypeError(f"give {new!r} only ({old!r} is its deprecated name), got both")
    warn_renamed(old, new, stacklevel=4)
    return old_value


def renamed_attribute(old: str, new: str) -> property:
    """Return a read-only property ``old`` that warns and reads the attribute ``new``."""

    def getter(self):
        warn_renamed(old, new)
        return getattr(self, new)

    return property(getter, doc=f"Deprecated: renamed :attr:`{new}`.")


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import a moved module by its old path: the module at its new path, with a warning."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return None  # a placeholder: exec_module puts the real module in its place

    def exec_module(self, module):
        old = module.__name__
        new = MOVED_MODULES[old]
        # the import statement returns what sys.modules holds under the old name
        sys.modules[old] = importlib.import_module(new)
        # warnings skips the import machinery's frames: this names the importing line
        warn_renamed(old, new)


def install_moved_modules() -> None:
    """Let the old paths of :data:`MOVED_MODULES` import (once per process; last in line).

    Examples
    --------
    >>> import warnings
    >>> install_moved_modules()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from sblr_rt.verdict import model_verdict
    >>> model_verdict.__module__
    'sblr_rt.bci_model.verdict'
    """
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())

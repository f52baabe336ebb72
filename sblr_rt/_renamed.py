"""Names that were renamed: the old one still works and warns (``DeprecationWarning``).

Every rename is listed in the CHANGELOG ("Renamed"); the old names go in a later major
release.

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

import warnings

__all__ = ["renamed_attribute", "renamed_keyword", "warn_renamed"]

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

"""Streaming feature paths, one small class each, behind :class:`StreamingPath`.

``PATHS`` maps a path name to its class; :func:`fast_path_for` picks the fast path of a
preprocessor ``features`` name. Adding a path (e.g. a spectral one) is a new module with
a :class:`StreamingPath` subclass and one line in ``PATHS``.

Examples
--------
>>> sorted(PATHS)
['ensemble', 'filtered', 'filtered-covariance', 'filtered-spectral', 'plain', 'projected']
>>> fast_path_for("bandpower").name
'filtered'
"""

from __future__ import annotations

from sblr_rt.online.paths.bandpower import FilteredBandPowerPath
from sblr_rt.online.paths.base import Scoring, StreamingPath
from sblr_rt.online.paths.covariance import FilteredCovariancePath
from sblr_rt.online.paths.ensemble import EnsemblePath
from sblr_rt.online.paths.plain import PlainPath
from sblr_rt.online.paths.spectral import FilteredSpectralPath
from sblr_rt.online.paths.waveform import ProjectedPath

__all__ = ["PATHS", "Scoring", "StreamingPath", "fast_path_for", "path_class"]

#: Every streaming path by name.
PATHS: dict[str, type[StreamingPath]] = {
    cls.name: cls
    for cls in (
        ProjectedPath,
        FilteredBandPowerPath,
        FilteredSpectralPath,
        FilteredCovariancePath,
        EnsemblePath,
        PlainPath,
    )
}


def fast_path_for(features: str) -> type[StreamingPath]:
    """Return the fast path serving the preprocessor ``features``, or the plain path.

    Parameters
    ----------
    features : str
        The preprocessor's ``features`` (``"waveform"``, ``"bandpower"``, ...).

    Returns
    -------
    path : subclass of StreamingPath
        The registered path whose ``features`` is ``features``; :class:`PlainPath` when
        none is (the plain path computes any model's scores).
    """
    for cls in PATHS.values():
        if cls.features == features:
            return cls
    return PlainPath


def path_class(name: str) -> type[StreamingPath]:
    """Return the registered path called ``name``.

    Raises
    ------
    ValueError
        If no path has that name.
    """
    try:
        return PATHS[name]
    except KeyError:
        raise ValueError(f"'path' must be one of {tuple(PATHS)}, got {name!r}") from None

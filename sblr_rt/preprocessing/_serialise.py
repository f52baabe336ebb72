"""A saved Preprocessor's header, of any age, read back as constructor parameters.

Writing the header and arrays, and restoring the fitted ones, are the
:class:`~sblr_rt.preprocessing.Preprocessor`'s own (``get_config``, ``get_arrays``,
``from_config``); this module only fills what older files did not write.
"""

from __future__ import annotations

import numpy as np

__all__ = ["saved_config"]


def saved_config(config: dict, arrays: dict | None) -> dict:
    """Return constructor parameters from a saved header (and its arrays)."""
    config = dict(config)
    # Files written before the spatial stage and the log-power reference existed computed
    # neither: keep their numbers.
    config.setdefault("spatial", None)
    config.setdefault("reference", None)
    if arrays is not None and config["spatial"] is not None:
        if "spatial_matrix" not in arrays:
            raise ValueError(
                f"preprocessing array 'spatial_matrix' is missing for spatial="
                f"{config['spatial']!r}"
            )
        config["spatial_matrix"] = np.asarray(arrays["spatial_matrix"])
    return config

"""Helpers every layer may use and none owns, as MNE's and mne-lsl's ``utils``.

- ``_docs.py``: :func:`fill_doc`, the shared docstring template of repeated parameters.
- ``_renamed.py``: old names that still work and warn (functions, attributes, keywords and
  modules), listed in the CHANGELOG's "Renamed".

Both import nothing of sblr-rt, so that any module, the package root included, imports them.
"""

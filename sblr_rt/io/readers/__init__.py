"""One reader per recording format, each returning a :class:`~sblr_rt.io.Recording`."""

from .mat import read_mat
from .mne_formats import MNE_READERS, read_mne, recording_from_raw
from .xdf import read_xdf

__all__ = ["MNE_READERS", "read_mat", "read_mne", "read_xdf", "recording_from_raw"]

"""One reader per recording format, each returning a :class:`~sblr_rt.io.Recording`."""

from .bids import bids_path_of, find_bids, read_bids
from .mat import read_mat
from .mne_formats import MNE_READERS, mne_extension, mne_extensions, read_mne, recording_from_raw
from .xdf import read_xdf

__all__ = [
    "MNE_READERS",
    "bids_path_of",
    "find_bids",
    "mne_extension",
    "mne_extensions",
    "read_bids",
    "read_mat",
    "read_mne",
    "read_xdf",
    "recording_from_raw",
]

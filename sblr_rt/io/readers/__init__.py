"""One reader per recording format, each returning a :class:`~sblr_rt.io.Recording`."""

from sblr_rt.io.readers.bids import bids_path_of, find_bids, read_bids
from sblr_rt.io.readers.mat import read_mat
from sblr_rt.io.readers.mne_formats import (
    MNE_READERS,
    mne_extension,
    mne_extensions,
    read_mne,
    recording_from_raw,
)
from sblr_rt.io.readers.xdf import read_xdf

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

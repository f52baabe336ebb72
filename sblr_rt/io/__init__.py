"""Reading recordings and saving/loading model files."""

from sblr_rt.io.labels import ChannelMatch, ChannelRenaming, match_channels, standard_label
from sblr_rt.io.model_file import ModelFileError, load_model, read_header, save_model
from sblr_rt.io.reading import read_recording
from sblr_rt.io.recording import Recording, concatenate_recordings

__all__ = [
    "ChannelMatch",
    "ChannelRenaming",
    "ModelFileError",
    "Recording",
    "concatenate_recordings",
    "load_model",
    "match_channels",
    "read_header",
    "read_recording",
    "save_model",
    "standard_label",
]

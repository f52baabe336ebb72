"""The spectral form: the band-power machinery with one bin spanning the window."""

from __future__ import annotations

from sblr_rt.online.incremental.bandpower import FilteredBandPowerForm

__all__ = ["FilteredSpectralForm"]


class FilteredSpectralForm(FilteredBandPowerForm):
    """Spectral features: every sample filtered once per band, running power sums.

    The spectral input is the log mean power of each narrow band over the whole window:
    the band-power computation with a single time bin, which the preprocessor's
    :meth:`~sblr_rt.preprocessing.Preprocessor.features_from_log_power` then arranges as
    channels x bands, with each channel's log power relative to its mean over the bands.
    A decision reads two rows of the running sums per band.
    """

    name = "filtered-spectral"
    features = "spectral"

"""The incremental forms of the preprocessing and model, one small class each.

An incremental form (:class:`IncrementalForm`) computes the model's scores as samples
arrive, each sample worked on once, rather than the whole preprocessing on every window.
``FORMS`` maps a form's name to its class; :func:`form_for` picks the fast form of a
preprocessor ``features`` name. Adding a form (e.g. a spectral one) is a new module with
an :class:`IncrementalForm` subclass and one line in ``FORMS``.

Examples
--------
>>> sorted(FORMS)
['ensemble', 'filtered', 'filtered-covariance', 'filtered-spectral', 'plain', 'projected']
>>> form_for("bandpower").name
'filtered'
"""

from __future__ import annotations

from sblr_rt.online.incremental.bandpower import FilteredBandPowerForm
from sblr_rt.online.incremental.covariance import FilteredCovarianceForm
from sblr_rt.online.incremental.ensemble_form import EnsembleForm
from sblr_rt.online.incremental.form import IncrementalForm, Scoring
from sblr_rt.online.incremental.plain import PlainForm
from sblr_rt.online.incremental.spectral import FilteredSpectralForm
from sblr_rt.online.incremental.waveform import ProjectedForm

__all__ = ["FORMS", "IncrementalForm", "Scoring", "form_class", "form_for"]

#: Every incremental form by name.
FORMS: dict[str, type[IncrementalForm]] = {
    cls.name: cls
    for cls in (
        ProjectedForm,
        FilteredBandPowerForm,
        FilteredSpectralForm,
        FilteredCovarianceForm,
        EnsembleForm,
        PlainForm,
    )
}


def form_for(features: str) -> type[IncrementalForm]:
    """Return the fast form serving the preprocessor ``features``, or the plain form.

    Parameters
    ----------
    features : str
        The preprocessor's ``features`` (``"waveform"``, ``"bandpower"``, ...).

    Returns
    -------
    form : subclass of IncrementalForm
        The registered form whose ``features`` is ``features``; :class:`PlainForm` when
        none is (the plain form computes any model's scores).
    """
    for cls in FORMS.values():
        if cls.features == features:
            return cls
    return PlainForm


def form_class(name: str) -> type[IncrementalForm]:
    """Return the registered form called ``name``.

    Raises
    ------
    ValueError
        If no form has that name.
    """
    try:
        return FORMS[name]
    except KeyError:
        raise ValueError(f"'form' must be one of {tuple(FORMS)}, got {name!r}") from None

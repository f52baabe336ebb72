"""What calibration recorded in a model file, read once into a typed object.

Calibration keeps its outcome in ``BCIModel.metadata`` (``"selection"``, ``"epochs"``,
``"seconds"``, ``"excluded_channels"``; :func:`sblr_rt.calibration.core.calibrate`).
:meth:`CalibrationOutcome.from_model` is where the dashboard and the commands read it, and
:meth:`CalibrationOutcome.lines` is the short account both print. A model of any age, or
a bare model without metadata, gives the fields' defaults (None or empty). The full
report with the grid is :func:`sblr_rt.calibration.report.report_text`.
"""

from __future__ import annotations

import dataclasses
import math

from sblr_rt.bci_model.metadata import EpochCounts, ModelRecord
from sblr_rt.bci_model.search_record import search_record
from sblr_rt.io.jsonable import mapping_or_empty
from sblr_rt.utils._docs import fill_doc

__all__ = ["CalibrationOutcome"]


@dataclasses.dataclass(frozen=True)
class CalibrationOutcome:
    """The selection and the epochs behind a calibrated model.

    Parameters
    ----------
    rank : int | None
        The chosen rank.
    params : dict
        The chosen penalties (``mu1``, ``mu2``, ``nu1``, ``nu2``).
    cv_mean, cv_std : float | None
        Cross-validated accuracy of the choice, mean and standard deviation (None for
        ``auto``'s choice, scored by log-loss).
    auto_chosen : str | None
        The candidate ``features="auto"`` chose (``"bandpower/car"``); None: a fixed path.
    n_candidates : int
        Candidates ``auto`` compared (0 for a fixed path).
    n_found, n_used : int | None
        Cues found in the recordings, and epochs used after rejection.
    per_class : dict
        Epochs used per class.
    rejected : dict
        Epochs rejected, per reason.
    seconds : float | None
        How long calibration took.
    excluded_channels : dict
        Channels left out of the model, with the reason (``{"Cz": "bad"}``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> model = SimpleNamespace(metadata={"selection": {"rank": 1, "best": {"mean": 0.8}}})
    >>> CalibrationOutcome.from_model(model).lines()
    ['rank 1, {}; CV accuracy 0.800']
    """

    rank: int | None = None
    params: dict = dataclasses.field(default_factory=dict)
    cv_mean: float | None = None
    cv_std: float | None = None
    auto_chosen: str | None = None
    n_candidates: int = 0
    n_found: int | None = None
    n_used: int | None = None
    per_class: dict = dataclasses.field(default_factory=dict)
    rejected: dict = dataclasses.field(default_factory=dict)
    seconds: float | None = None
    excluded_channels: dict = dataclasses.field(default_factory=dict)

    @classmethod
    @fill_doc
    def from_model(cls, model) -> CalibrationOutcome:
        """Read the outcome a model file records (``model.metadata``; absent: defaults).

        Parameters
        ----------
        %(model_metadata)s

        Returns
        -------
        outcome : CalibrationOutcome
        """
        metadata = mapping_or_empty(getattr(model, "metadata", None))
        selection = search_record(metadata)
        best = mapping_or_empty(selection.get("best"))
        candidates = selection.get("candidates") or ()
        record = ModelRecord.from_metadata(metadata)
        epochs = record.epochs or EpochCounts()
        return cls(
            rank=selection.get("rank"),
            params=mapping_or_empty(selection.get("params")),
            cv_mean=best.get("accuracy"),
            cv_std=best.get("accuracy_std"),
            auto_chosen=selection.get("chosen") if len(candidates) > 1 else None,
            n_candidates=len(candidates),
            n_found=epochs.found,
            n_used=epochs.used,
            per_class=epochs.per_class,
            rejected=epochs.rejected,
            seconds=record.seconds,
            excluded_channels=record.excluded_channels,
        )

    def lines(self) -> list[str]:
        """Return the short account of the outcome: the choice, the epochs, the time.

        Returns
        -------
        lines : list of str
            One line per part the model file records (none for a bare model).
        """
        lines = []
        if self.rank is not None or self.cv_mean is not None:
            auto = (
                f"chose {self.auto_chosen} of {self.n_candidates} candidates; "
                if self.auto_chosen
                else ""
            )
            accuracy = "n/a" if self.cv_mean is None else f"{self.cv_mean:.3f}"
            spread = "" if self.cv_std is None else f" ± {self.cv_std:.3f}"
            lines.append(f"{auto}rank {self.rank}, {self.params}; CV accuracy {accuracy}{spread}")
        if self.n_used is not None:
            lines.append(
                f"epochs: {self.n_used} used of {self.n_found} ({self.per_class}); rejected "
                f"{self.rejected}"
            )
        if self.seconds is not None and math.isfinite(self.seconds):
            lines.append(f"calibration took {self.seconds:.1f} s")
        return lines

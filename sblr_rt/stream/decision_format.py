"""The numbers of a decision, as the numeric decision outlet publishes them (no pylsl).

One sample of ``2 * n_classes + 3`` floats per decision: probabilities, smoothed
probabilities, ``trial``, ``early``, ``model_version``
(:class:`~sblr_rt.stream.ProbabilityOutlet`). Kept apart from the outlet so that the
online side's :class:`~sblr_rt.online.decision.Decision` encodes itself without LSL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["numeric_sample"]


def numeric_sample(decision: Mapping, classes: Sequence[str]) -> np.ndarray:
    """Return a decision as the numbers :class:`ProbabilityOutlet` publishes.

    Parameters
    ----------
    decision : Mapping
        ``proba`` ({class: probability}); optional ``proba_smoothed`` (default the raw
        one), ``trial`` and ``early`` (default False), ``model_version`` (default 0).
    classes : sequence of str
        The class labels, in the channels' order.

    Returns
    -------
    sample : ndarray, shape (2 * n_classes + 3,), float32
        Probabilities, smoothed probabilities, ``trial``, ``early``, ``model_version``.

    Raises
    ------
    TypeError
        If ``decision`` is not a mapping.
    ValueError
        If a class has no probability.
    """
    if not isinstance(decision, Mapping):
        raise TypeError(f"'decision' must be a dict, got {type(decision).__name__}")
    proba = decision.get("proba") or {}
    missing = [c for c in classes if c not in proba]
    if missing:
        raise ValueError(
            f"'decision' must give a probability for every class {list(classes)}, "
            f"got {sorted(proba)}"
        )
    smoothed = decision.get("proba_smoothed") or proba
    row = [float(proba[c]) for c in classes]
    row += [float(smoothed.get(c, proba[c])) for c in classes]
    row += [float(bool(decision.get("trial"))), float(bool(decision.get("early")))]
    row.append(float(decision.get("model_version") or 0))
    return np.asarray(row, dtype=np.float32)

"""The one builder of small fitted models for the tests: no LSL, no files, under a second.

``fit_model`` fits a :class:`~sblr_rt.bci_model.SingleModel` on simulated epochs whose
class lives on chosen channels; ``fit_ensemble`` weighs several of them. Every test module
that needs a model builds it here (with its own settings), so a change of the model
concept is made once.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from sblr_rt.bci_model import EnsembleModel, SingleModel
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.model.run_centring import RunCentring, centre_runs
from sblr_rt.preprocessing import Preprocessor

__all__ = ["fit_ensemble", "fit_model", "simulated_epochs"]


def simulated_epochs(pre, *, n_epochs, n_classes, informative, effect, signal, rng, offset=0.0):
    """Return raw epochs (n_epochs, n_channels, n_times_raw) and labels of ``pre``'s shape.

    ``signal="shift"``: every channel of ``informative`` moves by ``+-effect`` with the
    class (two classes). ``signal="waveform"``: class ``k`` adds a sine of ``k + 1`` half
    periods on ``informative[k]`` and scales ``informative[k + 1]`` by ``1 + k / 2`` (a
    waveform and a power change, for every feature path). ``offset`` shifts every channel
    (a run's own offset).
    """
    idx = [pre.ch_names.index(c) for c in informative]
    y = np.arange(n_epochs) % n_classes
    raw = rng.standard_normal((n_epochs, len(pre.ch_names), pre.n_times_raw)) + offset
    if signal == "shift":
        for i in idx:
            raw[:, i] += effect * (2 * y[:, None] - 1)
    elif signal == "waveform":
        for k in range(n_classes):
            wave = np.sin(np.linspace(0, (k + 1) * np.pi, raw.shape[2]))
            raw[y == k, idx[k % len(idx)]] += effect * wave
            raw[y == k, idx[(k + 1) % len(idx)]] *= 1.0 + 0.5 * k
    else:
        raise ValueError(f"'signal' must be 'shift' or 'waveform', got {signal!r}")
    return raw, y


def fit_model(
    ch_names: Sequence[str] = ("C3", "Cz", "C4", "Pz", "Fz", "Oz"),
    *,
    sfreq: float = 100.0,
    tmin: float = 0.0,
    tmax: float = 1.0,
    n_classes: int = 2,
    classes: Sequence[str] | None = None,
    informative: Sequence[str] | None = None,
    signal: str = "waveform",
    effect: float = 1.5,
    n_epochs: int = 40,
    seed: int = 0,
    run_offsets: Sequence[float] | None = None,
    warmup: float = 1.0,
    metadata: dict | None = None,
    estimator: dict | None = None,
    **preprocessing,
):
    """Return ``(model, raw, y)``: a fitted single model and the epochs it was fitted on.

    Parameters
    ----------
    ch_names : list of str
        The raw channels.
    sfreq, tmin, tmax : float
        Rate and window.
    n_classes : int
        Classes (labels ``classes`` or ``class0 ..``).
    classes : list of str | None
        The class labels.
    informative : list of str | None
        The channels the class lives on (default: the first two, or the first).
    signal, effect : str, float
        How the class shows (:func:`simulated_epochs`).
    n_epochs, seed : int
        Epochs (per run with ``run_offsets``) and the random seed.
    run_offsets : list of float | None
        Calibration runs with these offsets, fitted run-centred (``warmup`` trials).
    metadata : dict | None
        The model's metadata.
    estimator : dict | None
        Estimator parameters (default: rank 1, small l2 penalties, at most 100 iterations).
    **preprocessing
        Further :class:`~sblr_rt.preprocessing.Preprocessor` parameters (``features``,
        ``picks``, ``n_times``, ``l_freq``...).
    """
    rng = np.random.default_rng(seed)
    ch_names = list(ch_names)
    pre = Preprocessor(ch_names=ch_names, sfreq=sfreq, tmin=tmin, tmax=tmax, **preprocessing)
    informative = list(informative or ch_names[: min(2, len(ch_names))])
    draw = {"n_epochs": n_epochs, "n_classes": n_classes, "informative": informative,
            "effect": effect, "signal": signal, "rng": rng}  # fmt: skip
    params = {"rank": 1, "mu2": 1e-3, "nu2": 1e-3, "max_iter": 100, "tol": 1e-4}
    params.update(estimator or {})
    est = SparseBilinearLogisticRegression(**params)
    centring = None
    with warnings.catch_warnings():  # a few iterations are enough for these tests
        warnings.simplefilter("ignore")
        if run_offsets is None:
            raw, y = simulated_epochs(pre, **draw)
            est.fit(pre.fit(raw).transform(raw), y)
        else:
            runs = [simulated_epochs(pre, **draw, offset=o) for o in run_offsets]
            raw = np.concatenate([r for r, _ in runs])
            y = np.concatenate([t for _, t in runs])
            Z = pre.features_from_filtered(pre.filter_epochs(raw))
            Zc, reference = centre_runs(Z, np.repeat(np.arange(len(runs)), n_epochs))
            pre.fit_scaling(Zc)
            est.fit(pre.scale(Zc), y)
            centring = RunCentring.from_fit(
                lambda Z: est.decision_function(pre.scale(Z)), reference, warmup
            )
    assert np.any(est.spatial_) and np.any(est.temporal_), "the test model collapsed to zero"
    labels = list(classes or [f"class{k}" for k in range(n_classes)])
    model = SingleModel(preprocessor=pre, estimator=est, classes=labels, metadata=metadata,
                        run_centring=centring)  # fmt: skip
    return model, raw, y


def fit_ensemble(specs: Sequence[dict], weights=None, metadata=None, **common):
    """Return ``(ensemble, raw, y)`` of one :func:`fit_model` per spec (common settings).

    The raw epochs are those of the member with the longest filter warm-up, which every
    member reads from its end.
    """
    fits = [fit_model(**{**common, **spec}) for spec in specs]
    members = [m for m, _, _ in fits]
    _, raw, y = max(fits, key=lambda f: f[0].n_times_raw)
    return EnsembleModel(members, weights, metadata), raw, y

"""
The estimator with scikit-learn and MNE
=======================================

:class:`~sblr_rt.SparseBilinearLogisticRegression` is a scikit-learn classifier of 3-D
epochs ``(n_epochs, n_channels, n_times)``. It takes :class:`mne.Epochs` directly, also
inside :func:`~sklearn.model_selection.cross_val_score`, and exposes ``filters_`` and
``patterns_`` ``(rank, n_channels)`` as MNE's decoders do, so that
:func:`mne.decoding.get_coef` reads them.
"""

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import mne
import numpy as np
from mne.decoding import get_coef
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from sblr_rt import SparseBilinearLogisticRegression

# The shipped recordings: run from a clone's root, or set SBLR_RT_RECORDINGS.
recordings = Path(os.environ.get("SBLR_RT_RECORDINGS", "recordings")) / "physionet-eegmmidb-S001"

# %%
# Epochs with MNE
# ---------------
# The four shipped runs (executed and imagined movement of both fists against both feet),
# standard 10-10 channel names, 8-30 Hz, 0.5-2.5 s after each cue at 40 Hz, in volts as
# MNE holds them: the estimator standardises the data inside ``fit``, so volts and
# microvolts give the same model.
mne.set_log_level("warning")
runs = (5, 6, 9, 10)
raws = [mne.io.read_raw_edf(recordings / f"S001R{r:02d}.edf", preload=True) for r in runs]
raw = mne.concatenate_raws(raws)
mne.datasets.eegbci.standardize(raw)
raw.set_montage("colin27_1005")
raw.filter(8.0, 30.0)
events, _ = mne.events_from_annotations(raw, event_id={"T1": 1, "T2": 2})
epochs = mne.Epochs(raw, events, {"fists": 1, "feet": 2}, tmin=0.5, tmax=2.5, baseline=None)
epochs = epochs.load_data().resample(40.0)
y = epochs.events[:, 2]
print(epochs)

# %%
# Cross-validation
# ----------------
# The raw waveform carries little of this motor task (the band-power and spectral paths
# of :func:`~sblr_rt.calibration.calibrate` do better on it); rank 1 with small l1 and
# larger l2 penalties is what a few tries on these runs found.
clf = SparseBilinearLogisticRegression(rank=1, mu1=0.01, mu2=1.0, nu1=0.01, nu2=1.0)
pipe = make_pipeline(clf)
cv = StratifiedKFold(5, shuffle=True, random_state=0)
scores = cross_val_score(pipe, epochs, y, cv=cv)
print(f"accuracy {scores.mean():.2f} +/- {scores.std():.2f} (chance 0.50)")

# %%
# Factors, filters and patterns
# -----------------------------
# ``canonical_factors()`` returns U and V with unit-norm spatial columns, sorted by
# weight, signs fixed; ``patterns_`` are Haufe's activation patterns of the filters.
pipe.fit(epochs, y)
U, V = clf.canonical_factors()
print("U", U.shape, "V", V.shape, "non-zero channels per component", (U != 0).sum(axis=0))
patterns = get_coef(pipe, "patterns_")  # (rank, n_channels)
fig, axes = plt.subplots(1, 2, figsize=(7, 3), layout="constrained")
mne.viz.plot_topomap(U[:, 0], epochs.info, axes=axes[0], show=False, cmap="RdBu_r")
axes[0].set_title("filter (U)")
mne.viz.plot_topomap(patterns[0], epochs.info, axes=axes[1], show=False, cmap="RdBu_r")
axes[1].set_title("pattern (Haufe)")
fig, ax = plt.subplots(figsize=(6, 2.5), layout="constrained")
ax.plot(epochs.times, V)
ax.set(xlabel="time from cue (s)", ylabel="V", title="temporal factors")
plt.show()
print("objective at the start and the end:", np.round(clf.objective_[[0, -1]], 4))

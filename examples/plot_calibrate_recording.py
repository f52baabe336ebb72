"""
Calibrate on a shipped recording
================================

Two runs of PhysioNet eegmmidb subject S001 (imagined and executed movement of both fists
against both feet, 64 channels at 160 Hz) are cut into labelled epochs around their cues,
and :func:`~sblr_rt.calibration.calibrate` chooses the feature path, the spatial stage,
the rank and the penalties by cross-validation. The fitted model is a bilinear form
score = tr(U^T X V) + b: below, each spatial column of U as a scalp map and each column of
V over the epoch's time axis (or over frequency on the spectral path).
"""

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import mne
import numpy as np
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.report import column_axis, plot_report

import sblr_rt

# The shipped recordings: run from a clone's root, or set SBLR_RT_RECORDINGS.
recordings = Path(os.environ.get("SBLR_RT_RECORDINGS", "recordings"))
runs = [recordings / "physionet-eegmmidb-S001" / f"S001R{r:02d}.edf" for r in (6, 10)]

# %%
# Calibrate
# ---------
# ``features="auto"`` (the default) tries every feature path with every spatial stage
# that applies and keeps the candidate with the lowest cross-validated log-loss.
model = calibrate(runs, classes={"T1": "fists", "T2": "feet"}, tmin=0.5, tmax=3.5)
print(model)
print("chosen:", model.metadata["selection"]["chosen"])

# %%
# The model file
# --------------
# One pickle-free file holds the preprocessing, the factors and every score of the
# search; ``sblr-rt inspect`` prints the same summary.
folder = Path(tempfile.mkdtemp())
path = sblr_rt.save_model(model, folder / "s001.sblr.npz")
print(sblr_rt.load_model(path).summary())

# %%
# The calibration report
# ----------------------
# ``sblr-rt calibrate`` writes this picture next to the model: the selection, then each
# component's spatial factor as a scalp map and its temporal factor.
png = plot_report(model, folder / "s001.report.png")
fig, ax = plt.subplots(figsize=(9, 9), layout="constrained")
ax.imshow(plt.imread(png))
ax.set_axis_off()

# %%
# The members
# -----------
# The default model is an ensemble: the weighted mean score of a few single models, each
# with its own feature path, spatial stage and factors. A single model is its own only
# member, so the same loop reads both forms.
for k, (member, weight) in enumerate(zip(model.members, model.member_weights, strict=True)):
    print(f"member {k}: {member.name}, weight {weight:.2f}, rank {member.estimator.rank}")

# %%
# U: the spatial factors
# ----------------------
# :meth:`~sblr_rt.bci_model.SingleModel.scalp_maps` gives a column of U over a member's
# channels (one map per band on the band-power path); ``member.info`` places them on the
# scalp. Here the first component of every member, on a symmetric colour scale, so that
# white is exactly zero: the l1 penalty on U leaves most channels out.
maps = [
    (k, member, b, values)
    for k, member in enumerate(model.members)
    for b, values in enumerate(member.scalp_maps(0))
]
fig, axes = plt.subplots(1, len(maps), figsize=(3 * len(maps), 3), squeeze=False)
for ax, (k, member, b, values) in zip(axes[0], maps, strict=True):
    top = np.abs(values).max() or 1.0
    mne.viz.plot_topomap(
        values, member.info, axes=ax, show=False, cmap="RdBu_r", vlim=(-top, top), contours=0
    )
    bands = member.preprocessor.freq_bands if member.features == "bandpower" else None
    band = f"\n{bands[b][0]:g}-{bands[b][1]:g} Hz" if bands else ""
    ax.set_title(f"member {k}: {member.name}{band}", fontsize=8)

# %%
# V: the temporal (or spectral) factors
# -------------------------------------
# One panel per member, each on its own axis (time, frequency or a second spatial
# factor). A component that the penalties set to zero is blank above and flat here.
fig, axes = plt.subplots(1, len(model.members), figsize=(4 * len(model.members), 3),
                         squeeze=False, layout="constrained")  # fmt: skip
for ax, member in zip(axes[0], model.members, strict=True):
    axis, label = column_axis(member.preprocessor)
    V = np.asarray(member.estimator.temporal_)
    for k in range(V.shape[-1]):
        ax.plot(axis, V[:, k], label=f"component {k + 1}")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set(xlabel=label, ylabel="V", title=member.name)
axes[0, 0].legend()
plt.show()

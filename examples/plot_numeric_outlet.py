"""
Read the numeric decision outlet
================================

Beside the JSON stream ``SBLR-Predictions``, the online loop publishes every decision on
``SBLR-Predictions-Numeric``: float32, irregular rate, one channel per class, then the
smoothed probability per class, then ``trial``, ``early`` and ``model_version``, each sample
stamped with its window's last EEG timestamp. Any LSL client reads it as a signal; here
`mne-lsl <https://mne.tools/mne-lsl>`_'s :class:`~mne_lsl.stream.StreamLSL`, as OpenViBE,
Timeflux or a feedback bar would.

The EEG comes from the built-in simulator (28 of its channels are those of the BCI
Competition 2003 IV recording that the model is calibrated on). The decisions on simulated
EEG mean nothing; the point is the outlet.
"""

# %%
import os
import time
import uuid
from pathlib import Path

import matplotlib.pyplot as plt
from mne_lsl.stream import StreamLSL
from sblr_rt.calibration import calibrate

from sblr_rt.online import OnlineLoop
from sblr_rt.playback.simulator import run_simulator

# The shipped recordings: run from a clone's root, or set SBLR_RT_RECORDINGS.
recordings = Path(os.environ.get("SBLR_RT_RECORDINGS", "recordings"))
recording = recordings / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat"
model = calibrate(recording, features="waveform", search="none")
print(model)

# %%
# A loop on the simulator, and a consumer of its numeric outlet
# -------------------------------------------------------------
tag = uuid.uuid4().hex[:8]  # unique stream names keep this session apart from others
simulator = run_simulator(
    name=f"Sim-{tag}", source_id=f"sim-{tag}", sfreq=100.0, duration=30.0, background=True
)
loop = OnlineLoop.from_lsl(
    model, stream=f"Sim-{tag}", source_id=f"sim-{tag}", hop=0.1,
    outlet_name=f"SBLR-Predictions-{tag}",
)  # fmt: skip
try:
    loop.start()
    # An irregular stream's buffer counts samples (decisions), not seconds.
    numeric = StreamLSL(bufsize=500, name=f"SBLR-Predictions-{tag}-Numeric").connect(timeout=10)
    ch_names = numeric.ch_names
    print(ch_names)
    time.sleep(5.0)
    proba, stamps = numeric.get_data()  # (2 * n_classes + 3, bufsize), LSL timestamps
    numeric.disconnect()
finally:
    loop.stop()
    simulator.stop()

# %%
# One row per channel: the raw probability of each class, then the smoothed one (equal
# here: no smoothing), then the flags and the model version.
received = stamps > 0  # the buffer's slots not yet written hold zeros
proba, stamps = proba[:, received], stamps[received]
print(f"{proba.shape[1]} decisions in 5 s; the last one:")
for name, value in zip(ch_names, proba[:, -1], strict=True):
    print(f"  {name:>16}: {value:.3f}")
fig, ax = plt.subplots(figsize=(7, 2.5), layout="constrained")
ax.plot(stamps - stamps[0], proba[0], ".-", label=f"P(class {ch_names[0]})")
ax.set(xlabel="window end (s)", ylabel="probability", ylim=(0, 1))
ax.legend()
plt.show()

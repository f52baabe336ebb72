"""
A replayed session
==================

The online loop does not know whether its EEG comes from an amplifier or from a file. Here
PhysioNet S001 run 10 (imagined fists against feet) is replayed as two LSL streams, EEG
and cue markers, 20 times faster than it was recorded, and a model calibrated on runs 6
and 9 classifies it in trial mode: a sliding decision every 0.25 s of stream time, and one
decision per cue on the window the model was trained on. ``sblr-rt replay`` and
``sblr-rt run`` do the same from the command line.
"""

# %%
import os
import time
import uuid
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sblr_rt.calibration import calibrate

from sblr_rt.online import OnlineLoop
from sblr_rt.playback.stream_player import replay

# The shipped recordings: run from a clone's root, or set SBLR_RT_RECORDINGS.
recordings = Path(os.environ.get("SBLR_RT_RECORDINGS", "recordings")) / "physionet-eegmmidb-S001"
classes = {"T1": "fists", "T2": "feet"}
model = calibrate(
    [recordings / "S001R06.edf", recordings / "S001R09.edf"], classes=classes, tmin=0.5, tmax=3.5
)
print(model)

# %%
# Replay and classify
# -------------------
# Unique stream names keep this session apart from any other on the network.
tag = uuid.uuid4().hex[:8]
player = replay(
    recordings / "S001R10.edf",
    name=f"Replay-{tag}",
    source_id=f"replay-{tag}",
    speed=20.0,
    wait_for_consumers=10.0,
)
loop = OnlineLoop.from_lsl(
    model,
    stream=f"Replay-{tag}",
    source_id=f"replay-{tag}",
    marker_source_id=f"replay-{tag}-markers",
    mode="trial",
    hop=0.25,
    cues=list(classes),
    outlet_name=f"SBLR-Predictions-{tag}",
)
decisions = []
with player, loop:
    while player.is_alive:
        decisions += loop.pop_decisions()
        time.sleep(0.1)
    time.sleep(0.5)  # the last windows
    decisions += loop.pop_decisions()
    snapshot = loop.snapshot()

trials = [d for d in decisions if d["trial"]]
correct = [d["label"] == classes[d["cue"]] for d in trials]
for d, ok in zip(trials, correct, strict=True):
    print(
        f"cue {classes[d['cue']]:>5} -> {d['label']:>5} (p={max(d['proba'].values()):.2f})",
        "ok" if ok else "--",
    )
print(f"{len(trials)} trials, accuracy {np.mean(correct):.2f}; {len(decisions)} decisions in all")
print(f"step time p99 {snapshot.step_time.p99 * 1e6:.0f} us")

# %%
# The probability over the run
# ----------------------------
# Each sliding decision's probability of "feet", against the window's end in stream time;
# the trial decisions are marked at their windows' ends, coloured by their cue.
sliding = [d for d in decisions if not d["trial"]]
t0 = sliding[0]["window_end"]
fig, ax = plt.subplots(figsize=(8, 3), layout="constrained")
ax.plot([d["window_end"] - t0 for d in sliding], [d["proba"]["feet"] for d in sliding], lw=0.8)
for d in trials:
    colour = "tab:red" if classes[d["cue"]] == "feet" else "tab:blue"
    ax.plot(d["window_end"] - t0, d["proba"]["feet"], "^", color=colour)
ax.axhline(0.5, color="0.6", lw=0.8)
ax.set(xlabel="stream time (s, replayed at x20)", ylabel="P(feet)", ylim=(0, 1))
plt.show()

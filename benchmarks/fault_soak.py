"""Fault soak of the online loop: what amplifiers and files really do, for 10 minutes.

A float32 LSL source in another process sends 118 channels at 1000 Hz in real time
(channel 0, ``INDEX``, holds the sample index; the others noise of 10 uV) and, on a
timeline scaled to ``--minutes``, misbehaves:

- NaN bursts and inf bursts (0.2 s of every channel but the index);
- a kill and return: the sender process is terminated, and 2 s later a new one starts with
  the same ``source_id`` (the loop's source reconnects by itself);
- a pause: the sender pushes nothing for 3 s, then goes on in real time (a gap);
- a rate drift: for 20 s the sender runs at 80 % of its declared rate;
- a flat stretch: for 3 s every EEG channel is railed at 0.4 V (a dead cap);
- clock jumps: the sender's timestamps jump an hour ahead, and later back by an hour and
  5 s (so the rest of the run is stamped 5 s behind);
- hostile markers: beside a cue every 2 s (``left``/``right``, on a marker stream of the
  same sender), a marker that is not UTF-8, a cue stamped 10^6 s ahead and one 10^5 s
  back, at a few times.

Two :class:`~sblr_rt.online.OnlineLoop` (a waveform and a band-power model on the 117
EEG channels, built as in ``benchmarks/online.py``) decide in trial mode (a sliding
decision every hop and one at each cue) all along and publish on their
``SBLR-Predictions`` outlets; every decision pushed is checked on its way to the outlet.
Printed: decisions made, windows refused and why (the Telemetry's ``dropped``), cues
refused and why, gaps, non-finite samples received, the stream states the loop reported,
non-finite decisions published (must be 0), and the process memory at start and end. Not
part of CI; figures are printed, not asserted (the exit code is 1 if a non-finite decision
was published). Run ``python benchmarks/fault_soak.py --help``.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import math
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LSLAPICFG", str(ROOT / "tests" / "lsl_api.cfg"))

import psutil  # noqa: E402

from benchmarks.online import make_model  # noqa: E402
from sblr_rt.online import OnlineLoop  # noqa: E402
from sblr_rt.stream import local_clock  # noqa: E402

SENDER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import pylsl
    n_channels, sfreq, source_id, t_origin, t_stop, plan = sys.argv[1:7]
    n_channels, sfreq = int(n_channels), float(sfreq)
    t_origin, t_stop, plan = float(t_origin), float(t_stop), json.loads(plan)
    info = pylsl.StreamInfo("fault-soak-EEG", "EEG", n_channels, sfreq, "float32", source_id)
    chans = info.desc().append_child("channels")
    for k in range(n_channels):
        chan = chans.append_child("channel")
        chan.append_child_value("label", "INDEX" if k == 0 else f"E{k - 1}")
        chan.append_child_value("unit", "volts")
    outlet = pylsl.StreamOutlet(info, 0)
    cue_info = pylsl.StreamInfo(
        "fault-soak-Markers", "Markers", 1, 0, "string", source_id + "-markers"
    )
    cues = pylsl.StreamOutlet(cue_info)
    next_cue, n_cues = pylsl.local_clock() + 2.0, 0

    def phase(t):
        for start, stop, kind in plan:
            if start <= t - t_origin < stop and not kind.startswith("clock"):
                return kind
        return None

    def clock_offset(t):  # the amplifier's clock: an hour ahead, then 5 s behind
        offset = 0.0
        for start, _, kind in plan:
            if kind == "clock_ahead" and t - t_origin >= start:
                offset = 3600.0
            if kind == "clock_back" and t - t_origin >= start:
                offset = -5.0
        return offset

    rng = np.random.default_rng(int(t_origin * 1e3) % 2**31)
    noise = (1e-5 * rng.standard_normal((int(sfreq) * 3 + 7, n_channels))).astype(np.float32)
    period = 0.01
    now = pylsl.local_clock()
    index = int(round((now - t_origin) * sfreq))  # the sample index a perfect clock has
    t_next = now
    while now < t_stop:
        kind = phase(now)
        if now >= next_cue:
            cues.push_sample(["left" if n_cues % 2 else "right"], next_cue)
            n_cues += 1
            next_cue += 2.0
        if kind == "markers":
            cues.push_sample([b"\\xff\\xfe cue"], now)  # not UTF-8
            cues.push_sample(["left"], now + 1e6)
            cues.push_sample(["right"], now - 1e5)
            plan = [p for p in plan if p[2] != "markers" or not p[0] <= now - t_origin < p[1]]
        rate = 0.8 * sfreq if kind == "drift" else sfreq
        if kind == "pause":
            t_next = now  # nothing sent; the samples of the pause never exist
        else:
            due = int((now - t_next) * rate) + 1
            if due > 0:
                stamps = t_next + np.arange(due) / rate
                chunk = noise[(index + np.arange(due)) % noise.shape[0]].copy()
                chunk[:, 0] = index + np.arange(due)
                if kind == "nan":
                    chunk[:, 1:] = np.nan
                elif kind == "inf":
                    chunk[:, 1::2] = np.inf
                    chunk[:, 2::2] = -np.inf
                elif kind == "flat":
                    chunk[:, 1:] = 0.4
                outlet.push_chunk(chunk, (stamps + clock_offset(now)).tolist())
                index += due
                t_next = stamps[-1] + 1.0 / rate
        time.sleep(period)
        now = pylsl.local_clock()
    """
)


def timeline(seconds: float) -> tuple[list, float]:
    """Return the sender's faults ``[(start, stop, kind)]`` and the kill time (seconds)."""
    T = float(seconds)
    plan = [
        (0.10 * T, 0.10 * T + 0.2, "nan"),
        (0.15 * T, 0.15 * T + 1.0, "markers"),
        (0.20 * T, 0.20 * T + 0.2, "inf"),
        (0.25 * T, 0.25 * T + 3.0, "flat"),
        (0.50 * T, 0.50 * T + 3.0, "pause"),
        (0.60 * T, 0.60 * T + 20.0, "drift"),
        (0.72 * T, 0.72 * T, "clock_ahead"),
        (0.80 * T, 0.80 * T, "clock_back"),
        (0.85 * T, 0.85 * T + 1.0, "markers"),
        (0.88 * T, 0.88 * T + 0.2, "nan"),
        (0.90 * T, 0.90 * T + 0.2, "inf"),
    ]
    return plan, 0.35 * T


class CheckingSink:
    """Wrap the loop's decision sink: count every decision pushed and the non-finite ones."""

    def __init__(self, sink):
        self.sink = sink
        self.n_pushed = 0
        self.n_nonfinite = 0
        self.labels = collections.Counter()

    def open(self):
        self.sink.open()

    def close(self):
        self.sink.close()

    def push(self, decision):
        values = [decision.get("window_end"), *decision["proba"].values()]
        if decision["label"] is None or not all(
            isinstance(v, float | int) and math.isfinite(v) for v in values
        ):
            self.n_nonfinite += 1
        self.n_pushed += 1
        self.labels[decision["label"]] += 1
        self.sink.push(decision)


def start_sender(args, source_id, t_origin, t_stop, plan):
    argv = [str(args.channels), str(args.sfreq), source_id, repr(t_origin), repr(t_stop)]
    return subprocess.Popen([sys.executable, "-c", SENDER, *argv, json.dumps(plan)])


def _late(late: list) -> str:
    if not late:
        return "none"
    # Runs of late decisions, by the time of their window's end.
    runs, (t0, lat0) = [], late[0]
    run = [t0, t0, lat0, 1]
    for t, lat in late[1:]:
        if t - run[1] > 1.0:
            runs.append(run)
            run = [t, t, lat, 0]
        run[1], run[2], run[3] = t, max(run[2], lat), run[3] + 1
    runs.append(run)
    return f"{len(late)}: " + ", ".join(
        f"{n} at {a:.1f}-{b:.1f} s (max {1e3 * m:.0f} ms)" for a, b, m, n in runs
    )


def _rss() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="wall minutes (>= 1.5)")
    parser.add_argument("--channels", type=int, default=118, help="with the index channel")
    parser.add_argument("--sfreq", type=float, default=1000.0)
    parser.add_argument("--rank", type=int, default=3)
    parser.add_argument("--hop", type=float, default=0.05, help="seconds of stream time")
    args = parser.parse_args(argv)
    if args.minutes < 1.5:
        parser.error("--minutes must be >= 1.5 (the rate drift alone lasts 20 s)")
    seconds = 60.0 * args.minutes
    plan, t_kill = timeline(seconds)
    tag = uuid.uuid4().hex[:8]
    source_id = f"fault-soak-{tag}"
    print(
        f"fault soak: {args.channels} ch ({args.channels - 1} EEG + index) at {args.sfreq:g} "
        f"Hz for {args.minutes:g} min; trial mode (a cue every 2 s), hop {args.hop:g} s; "
        "faults (s from start): "
        + ", ".join(f"{kind} {a:.1f}-{b:.1f}" for a, b, kind in plan)
        + f", kill at {t_kill:.1f} and return 2 s later",
        flush=True,
    )
    models = {
        f: make_model(f, args.rank, n_channels=args.channels - 1, sfreq=args.sfreq)
        for f in ("waveform", "bandpower")
    }
    for model in models.values():
        model.metadata["unit"] = "V"  # the sender declares volts: the unit check passes
    t_origin = local_clock() + 1.0
    t_stop = t_origin + seconds
    sender = start_sender(args, source_id, t_origin, t_stop, plan)
    loops, sinks = {}, {}
    states = {f: [] for f in models}
    late = {f: [] for f in models}  # (stream seconds, latency) of decisions > 100 ms late
    undecodable = dict.fromkeys(models, 0)
    try:
        for features, model in models.items():
            loop = OnlineLoop.from_lsl(
                model,
                source_id=source_id,
                hop=args.hop,
                mode="trial",
                marker_source_id=f"{source_id}-markers",
                outlet_name=f"fault-soak-{features}",
                outlet_source_id=f"{source_id}-{features}",
                timeout=30.0,
            )
            loop.sink = sinks[features] = CheckingSink(loop.sink)
            loops[features] = loop.start()
        time.sleep(5.0)  # warm-up: windows filled
        rss0 = _rss()
        print(f"start: RSS {rss0:.1f} MiB", flush=True)
        rss_settled = None  # once the 30 s raw buffers have been written through
        killed = returned = False
        while local_clock() < t_stop + 2.0:
            time.sleep(0.25)
            t = local_clock() - t_origin
            if rss_settled is None and t >= min(35.0, t_kill - 1.0):
                rss_settled = _rss()
                print(f"{t:6.1f} s: RSS {rss_settled:.1f} MiB (raw buffers full)", flush=True)
            if not killed and t >= t_kill:
                sender.terminate()
                sender.wait(timeout=10)
                killed = True
                print(f"{t:6.1f} s: sender killed", flush=True)
            if killed and not returned and t >= t_kill + 2.0:
                sender = start_sender(args, source_id, t_origin, t_stop, plan)
                returned = True
                print(f"{t:6.1f} s: sender back (same source_id)", flush=True)
            for features, loop in loops.items():
                for d in loop.pop_decisions():
                    if d["published"] - d["window_end"] > 0.1:
                        late[features].append(
                            (d["window_end"] - t_origin, d["published"] - d["window_end"])
                        )
                snap = loop.snapshot(n_decisions=0)
                undecodable[features] = loop.markers.status()["n_undecodable"]
                stream = snap.stream
                summary = "rate far off" if stream.rate_far_off else stream.state
                summary += " + halted" if snap.halted else ""
                if not states[features] or states[features][-1][1] != summary:
                    states[features].append((t, summary))
        snaps = {f: loop.snapshot(n_decisions=0) for f, loop in loops.items()}
        rss1 = _rss()
    finally:
        for loop in loops.values():
            loop.stop()
        sender.terminate()
        sender.wait(timeout=10)
    bad = 0
    for features, snap in snaps.items():
        sink = sinks[features]
        bad += sink.n_nonfinite
        d, r = snap.dropped, snap.refused_cues
        print(
            f"\n{features} ({snap.form} form): {snap.n_decisions} decisions made "
            f"({snap.n_trial_decisions} at cues, of {snap.n_cues} markers), "
            f"{sink.n_pushed} published ({dict(sink.labels)}); non-finite decisions "
            f"published: {sink.n_nonfinite}\n"
            f"  windows refused: {d.total} (gap {d.gap}, refilling {d.refilling}, "
            f"nonfinite {d.nonfinite}, behind {d.behind}, trials {d.trials}, halted "
            f"{d.halted}, flat {d.flat}, clipped {d.clipped}, amplitude {d.amplitude})\n"
            f"  cues refused: {r.total} (far {r.far}, unavailable {r.unavailable}, expired "
            f"{r.expired}); markers not UTF-8 skipped: {undecodable[features]}\n"
            f"  gaps {snap.n_gaps}, non-finite samples {snap.n_nonfinite_samples}, "
            f"overruns {snap.n_overruns}, reconnects {snap.stream.n_reconnects}, "
            f"{snap.stream.n_samples} samples received; step p99 "
            f"{1e6 * snap.step_time.p99:.0f} us, latency p99 {1e3 * snap.latency.p99:.1f} ms\n"
            f"  decisions published > 100 ms after their window's end: {_late(late[features])}\n"
            "  stream states seen: " + ", ".join(f"{s} ({t:.0f} s)" for t, s in states[features])
        )
    print(
        f"\nmemory: RSS {rss0:.1f} MiB at start, {rss_settled:.1f} MiB once the raw buffers "
        f"were full, {rss1:.1f} MiB at end ({rss1 - rss_settled:+.1f} MiB since full); "
        f"non-finite decisions published: {bad}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

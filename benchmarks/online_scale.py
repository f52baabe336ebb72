"""Scale of the online side (issue 15): cost against channels, rate and number of loops.

Used by ``benchmarks/online.py`` (``--scaling``, ``--loops``); not run on its own.

- :func:`print_scaling`: the incremental form of every feature kind on arrays (no LSL) at
  several channel counts and rates: decision CPU time, ingest CPU per 10 ms hop and the
  CPU share of one core at real time.
- :func:`bench_loops`: several :class:`~sblr_rt.online.OnlineLoop` in this process on one
  live LSL stream (a sender in another process), each with its own model and outlet; the
  end-to-end latency of a decision is its publish time minus the LSL time of its
  window's last sample (``published - window_end``), p99 per loop.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
import uuid

import numpy as np
import psutil

from sblr_rt.online import OnlineClassifier, OnlineLoop, freeze_heap


def _ok(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def print_scaling(make_model, bench_steps, features, channels, rates, base, reps) -> None:
    """Print the incremental forms' cost against channels (at ``base`` rate) and rate.

    Parameters
    ----------
    make_model, bench_steps : callable
        ``benchmarks/online.py``'s model factory and step timer.
    features : list of str
        Feature kinds.
    channels, rates : list
        Channel counts (at the base rate) and rates in Hz (at the base channel count).
    base : (int, float)
        Base channel count and rate.
    reps : int
        Decisions timed per configuration.
    """
    grid = [(c, base[1]) for c in channels] + [(base[0], r) for r in rates if r != base[1]]
    print("Cost against channels and rate (incremental form, no LSL; CPU = thread CPU time):")
    print(
        f"  {'features':<10} {'channels':>8} {'Hz':>6} {'step p50':>9} {'step p99':>9} "
        f"{'ingest/hop':>10} {'core %':>7}"
    )
    for feat in features:
        for n_ch, sfreq in grid:
            s = bench_steps(make_model(feat, 1, n_channels=n_ch, sfreq=sfreq), reps, plain=False)
            p50, p99, _ = s["cpu_step"]
            print(
                f"  {feat:<10} {n_ch:>8} {sfreq:>6g} {p50:>7.0f}us {p99:>7.0f}us "
                f"{s['cpu_ingest']:>8.0f}us {100 * s['cpu_share']:>6.1f}%"
            )
    print()


def bench_loops(models, *, sender, n_channels, sfreq, duration, hop) -> dict:
    """Run one loop per model at once on one live stream; per-loop latency, process CPU.

    Parameters
    ----------
    models : list of (str, BCIModel)
        A name and a model per loop (all on the same channels and rate).
    sender : str
        The sender script (``benchmarks/online.py``'s ``SENDER``).
    n_channels, sfreq : int, float
        The stream.
    duration, hop : float
        Seconds measured; seconds between decisions.

    Returns
    -------
    result : dict
        ``cpu`` (process CPU / wall), ``loops`` (per loop: name, ``e2e`` p50/p99/max in
        ms, ``step`` p99 in us, decisions/s, dropped, overruns).
    """
    eeg_id = f"bench-scale-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        [sys.executable, "-c", sender, str(n_channels), str(sfreq), str(duration + 40), eeg_id],
        env=dict(os.environ),
    )
    loops = []
    try:
        for k, (_, model) in enumerate(models):
            loops.append(
                OnlineLoop.from_lsl(
                    OnlineClassifier(model),
                    source_id=eeg_id,
                    hop=hop,
                    outlet_source_id=f"{eeg_id}-pred{k}",
                    timeout=30.0,
                    history_seconds=duration + 30.0,
                ).start()
            )
        freeze_heap()  # as `sblr-rt run` and the dashboard do once their loop started
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(lp.snapshot().n_decisions < 10 for lp in loops):
            time.sleep(0.05)
        for lp in loops:
            lp.pop_decisions()
        snaps0 = [lp.snapshot() for lp in loops]
        me = psutil.Process()
        cpu0, wall0 = me.cpu_times(), time.monotonic()
        time.sleep(duration)
        cpu1, wall1 = me.cpu_times(), time.monotonic()
        decisions = [lp.pop_decisions() for lp in loops]
        snaps = [lp.snapshot() for lp in loops]
    finally:
        for lp in loops:
            lp.stop()
        proc.kill()
        proc.wait(timeout=30)
    wall = wall1 - wall0
    result = {"cpu": (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / wall, "loops": []}
    for (name, _), dec, s0, s1 in zip(models, decisions, snaps0, snaps, strict=True):
        lat = 1e3 * np.array([d["published"] - d["window_end"] for d in dec])
        steps = 1e6 * np.array([d["step_time"] for d in dec])
        dropped = {
            f.name: getattr(s1.dropped, f.name) - getattr(s0.dropped, f.name)
            for f in dataclasses.fields(s1.dropped)
        }
        dropped["total"] = sum(dropped.values())
        result["loops"].append(
            {
                "name": name,
                "e2e": (np.percentile(lat, 50), np.percentile(lat, 99), lat.max())
                if lat.size
                else (np.nan,) * 3,
                "step99": np.percentile(steps, 99) if steps.size else np.nan,
                "rate": (s1.n_decisions - s0.n_decisions) / wall,
                "dropped": dropped["total"],
                "overruns": s1.n_overruns - s0.n_overruns,
            }
        )
    return result


def print_loops(models, counts, **kwargs) -> None:
    """Print :func:`bench_loops` for the first ``n`` models, for each ``n`` in ``counts``."""
    hop = kwargs["hop"]
    for n in counts:
        res = bench_loops(models[:n], **kwargs)
        print(
            f"{n} loop(s) in one process on one {kwargs['n_channels']} ch x "
            f"{kwargs['sfreq']:g} Hz LSL stream, hop {1e3 * hop:g} ms, "
            f"{kwargs['duration']:g} s: process CPU {100 * res['cpu']:.1f} % of one core "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
        for lp in res["loops"]:
            e50, e99, emax = lp["e2e"]
            print(
                f"  {lp['name']:<14} e2e (published - window_end) p50 {e50:6.2f} p99 "
                f"{e99:6.2f} max {emax:7.2f} ms; step p99 {lp['step99']:7.0f} us; "
                f"{lp['rate']:5.1f} decisions/s; dropped {lp['dropped']}, overruns "
                f"{lp['overruns']}; e2e p99 < 10 ms: {_ok(e99 < 10)}"
            )
        if n == counts[-1]:
            ok = all(lp["e2e"][1] < 10 for lp in res["loops"])
            print(f"  target: {n} loops at once, each e2e p99 < 10 ms: {_ok(ok)}")
        print()

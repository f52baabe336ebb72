"""Soak test of the online loop: an hour (or more) of stream time at accelerated speed.

A float32 EEG source in another process plays noise with a cue every 8 s at ``--speed``
times real time (timestamps follow the LSL clock, spaced ``1 / (sfreq * speed)``, as
:mod:`sblr_rt.playback.stream_player` does). :class:`OnlineLoop` classifies it in trial
mode (a sliding decision every ``--hop`` seconds of stream time plus one per cue) and publishes on
``SBLR-Predictions``. The loop process's resident memory (RSS) and the Python heap
(``tracemalloc``) are printed at the start (after warm-up), every few minutes and at the
end: they must not grow beyond noise. Not part of CI. Run
``python benchmarks/soak.py --help``; default: 118 channels at 1000 Hz, 1 h of stream time
at 10 x (6 min).
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
import uuid
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LSLAPICFG", str(ROOT / "tests" / "lsl_api.cfg"))

import numpy as np  # noqa: E402
import psutil  # noqa: E402
import threadpoolctl  # noqa: E402

from sblr_rt.bci_model import BCIModel, SingleModel  # noqa: E402
from sblr_rt.model import SparseBilinearLogisticRegression  # noqa: E402
from sblr_rt.online import OnlineLoop  # noqa: E402
from sblr_rt.preprocessing import Preprocessor  # noqa: E402

SENDER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import pylsl
    n_channels, sfreq, speed, stream_seconds, source_id = sys.argv[1:6]
    n_channels, sfreq, speed = int(n_channels), float(sfreq), float(speed)
    stream_seconds = float(stream_seconds)
    info = pylsl.StreamInfo("soak-EEG", "EEG", n_channels, sfreq, "float32", source_id)
    chans = info.desc().append_child("channels")
    for k in range(n_channels):
        chans.append_child("channel").append_child_value("label", f"E{k}")
    outlet = pylsl.StreamOutlet(info, 0)
    minfo = pylsl.StreamInfo("soak-Markers", "Markers", 1, 0, "string", source_id + "-m")
    markers = pylsl.StreamOutlet(minfo)
    if not (outlet.wait_for_consumers(60.0) and markers.wait_for_consumers(60.0)):
        sys.exit("no consumer")
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((int(sfreq) * 7 + 13, n_channels)).astype(np.float32)
    rate = sfreq * speed
    cue_every = int(8 * sfreq)
    total = int(stream_seconds * sfreq)
    t0, sent, period = pylsl.local_clock(), 0, 0.01
    while sent < total:
        due = min(int((pylsl.local_clock() - t0) * rate) + 1, total) - sent
        if due > 0:
            index = np.arange(sent, sent + due)
            outlet.push_chunk(noise[index % noise.shape[0]], (t0 + index / rate).tolist())
            for i in index[index % cue_every == cue_every // 2]:
                markers.push_sample(["left" if (i // cue_every) % 2 else "right"], t0 + i / rate)
            sent += due
        time.sleep(period)
    print(sent, flush=True)
    time.sleep(2.0)
    """
)


def make_model(features: str, n_channels: int, sfreq: float, rank: int) -> BCIModel:
    """A fitted model on random features (memory behaviour does not depend on the data)."""
    rng = np.random.default_rng(0)
    kwargs = {"h_freq": 30.0} if features == "waveform" else {}
    pre = Preprocessor(
        ch_names=[f"E{k}" for k in range(n_channels)],
        sfreq=sfreq,
        tmin=0.5,
        tmax=4.0,
        features=features,
        **kwargs,
    )
    Z = rng.standard_normal((40, pre.n_rows, pre.n_columns))
    pre.fit_scaling(Z)
    y = np.arange(40) % 2
    est = SparseBilinearLogisticRegression(rank=rank, mu2=1e-3, nu2=1e-3, max_iter=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(pre.scale(Z) + 0.3 * y[:, None, None], y)
    return SingleModel(preprocessor=pre, estimator=est, classes=["left", "right"])


def _mem(proc) -> tuple[float, float]:
    gc.collect()
    return proc.memory_info().rss / 2**20, tracemalloc.get_traced_memory()[0] / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0, help="hours of stream time")
    parser.add_argument("--speed", type=float, default=10.0, help="x real time")
    parser.add_argument("--channels", type=int, default=118)
    parser.add_argument("--sfreq", type=float, default=1000.0)
    parser.add_argument("--features", choices=("waveform", "bandpower"), default="waveform")
    parser.add_argument("--rank", type=int, default=3)
    parser.add_argument("--hop", type=float, default=0.05, help="seconds of stream time")
    parser.add_argument("--report-every", type=float, default=60.0, help="wall seconds")
    args = parser.parse_args(argv)
    stream_seconds = args.hours * 3600.0
    wall = stream_seconds / args.speed
    if args.hours < 1:
        print(f"note: {args.hours:g} h of stream time is below the issue's hour")
    print(
        f"soak: {args.channels} ch at {args.sfreq:g} Hz, {args.features} rank {args.rank}, "
        f"{args.hours:g} h of stream at x{args.speed:g} = {wall / 60:.1f} min; trial mode, hop "
        f"{args.hop:g} s; BLAS {threadpoolctl.threadpool_info()[0]['num_threads']} threads "
        "(loop under threadpool_limits(1))",
        flush=True,
    )
    model = make_model(args.features, args.channels, args.sfreq, args.rank)
    tag = uuid.uuid4().hex[:8]
    eeg_id = f"soak-{tag}"
    sender = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SENDER,
            str(args.channels),
            str(args.sfreq),
            str(args.speed),
            str(stream_seconds),
            eeg_id,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    proc = psutil.Process()
    tracemalloc.start()
    loop = OnlineLoop.from_lsl(
        model,
        source_id=eeg_id,
        mode="trial",
        hop=args.hop,
        marker_source_id=f"{eeg_id}-m",
        outlet_source_id=f"soak-pred-{tag}",
        timeout=60.0,
        buffer_seconds=30.0,
    )
    rows = []
    try:
        loop.start()
        t_start = time.monotonic()
        # Warm-up past the loop's 60 s statistics horizon: buffers full, deques grown.
        time.sleep(min(90.0, wall / 4))
        rss0, heap0 = _mem(proc)
        rows.append((time.monotonic() - t_start, loop.snapshot(n_decisions=0), rss0, heap0))
        print(f"start (after warm-up): RSS {rss0:.1f} MiB, Python heap {heap0:.2f} MiB")
        next_report = time.monotonic() + args.report_every
        while sender.poll() is None:
            time.sleep(1.0)
            loop.pop_decisions()  # as a consumer of the Python API would
            if time.monotonic() >= next_report:
                next_report += args.report_every
                snap = loop.snapshot(n_decisions=0)
                rss, heap = _mem(proc)
                rows.append((time.monotonic() - t_start, snap, rss, heap))
                print(
                    f"{(time.monotonic() - t_start) / 60:6.1f} min wall, "
                    f"{snap.stream.n_samples / args.sfreq / 3600:5.2f} h stream: RSS "
                    f"{rss:.1f} MiB, heap {heap:.2f} MiB, {snap.n_decisions} decisions, "
                    f"{snap.n_trial_decisions} trials, dropped {snap.dropped.total}, "
                    f"gaps {snap.n_gaps}, overruns {snap.n_overruns}",
                    flush=True,
                )
        time.sleep(1.0)
        snap = loop.snapshot(n_decisions=0)
        rss1, heap1 = _mem(proc)
    finally:
        loop.stop()
        sender.wait(timeout=30)
    n_stream = snap.stream.n_samples / args.sfreq
    print(
        f"end: {n_stream / 3600:.2f} h of stream received; RSS {rss1:.1f} MiB "
        f"({rss1 - rss0:+.1f} MiB since start), Python heap {heap1:.2f} MiB "
        f"({heap1 - heap0:+.2f} MiB); {snap.n_decisions} decisions "
        f"({snap.n_trial_decisions} trials), dropped {snap.dropped}, gaps "
        f"{snap.n_gaps}, overruns {snap.n_overruns}; latency p99 "
        f"{1e3 * snap.latency.p99:.2f} ms, step p99 {1e6 * snap.step_time.p99:.1f} us"
    )
    grew = rss1 - rss0 > max(20.0, 0.05 * rss0) or heap1 - heap0 > 5.0
    print("memory: " + ("GREW beyond noise" if grew else "no growth beyond noise"))
    return 1 if grew else 0


if __name__ == "__main__":
    sys.exit(main())

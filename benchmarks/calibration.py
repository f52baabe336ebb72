"""Time the paper's full selection: rank, then the 6 x 5 x 6 x 5 grid, 5-fold CV.

Data: (210 epochs, 118 channels, 100 times) like BCI Competition III IVb in the paper,
synthetic (a rank-one class difference in Gaussian noise) so the benchmark runs anywhere.
Prints the wall-clock time, the BLAS thread setting and the selection.

    python benchmarks/calibration.py [--n-jobs 2] [--search paper|fast] [--cv 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_data(n=210, s=118, t=100, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    u = np.zeros(s)
    u[[30, 50, 51, 55]] = [1.0, 0.8, -0.6, 0.5]
    v = np.sin(np.linspace(0, np.pi, t)) * np.exp(-np.linspace(0, 2, t))
    X = rng.standard_normal((n, s, t))
    X += 0.35 * (2 * y - 1)[:, None, None] * np.outer(u, v)[None]
    return X, y


def _cpu_seconds():
    import psutil

    proc = psutil.Process()
    total = sum(proc.cpu_times()[:2])
    for child in proc.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def main():
    from sblr_rt.calibration.config import CalibrationConfig
    from sblr_rt.calibration.selection import select
    from threadpoolctl import threadpool_info

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--search", default="paper", choices=("paper", "fast"))
    p.add_argument("--cv", default=5, type=int)
    p.add_argument("--ranks", default="1,2,3")
    args = p.parse_args()
    X, y = make_data()
    cfg = CalibrationConfig(
        search=args.search,
        cv=args.cv,
        n_jobs=args.n_jobs,
        ranks=tuple(int(r) for r in args.ranks.split(",")),
    )
    blas = [
        f"{i.get('internal_api')} {i.get('version')} num_threads={i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"BLAS: {'; '.join(blas)} (fits run with threadpool_limits(1) per worker)")
    print(
        f"data: {X.shape}, search={args.search}, {args.cv}-fold CV, ranks {cfg.ranks}, "
        f"n_jobs={args.n_jobs}"
    )
    n_points = {"paper": 6 * 5 * 6 * 5, "fast": 6 * 6 * 5}[args.search]
    n_fits = (len(cfg.ranks) + n_points) * args.cv
    t0 = time.perf_counter()
    cpu0 = _cpu_seconds()
    _, report, _ = select(X, y, config=cfg, center=False)
    dt = time.perf_counter() - t0
    cpu = _cpu_seconds() - cpu0
    load = os.getloadavg()[0]
    b = report["best"]
    print(
        f"selection time: {dt:.1f} s for {n_fits} fits (+ the final fit) "
        f"= {1e3 * dt / n_fits:.1f} ms/fit; rank step {report['seconds']['rank']:.1f} s, "
        f"grid {report['seconds']['grid']:.1f} s; target < 60 s"
    )
    print(
        f"CPU time (this process + joblib workers): {cpu:.1f} s = {cpu / 2:.1f} s of wall "
        f"time on 2 idle cores; load average at the end {load:.1f} (other work on the "
        "machine slows the wall-clock figure)"
    )
    print(
        f"chosen: rank {report['rank']}, mu1 {b['mu1_fraction']:g} x max, mu2 {b['mu2']:g}, "
        f"nu1 {b['nu1_fraction']:g} x max, nu2 {b['nu2']:g}: "
        f"CV accuracy {b['mean']:.3f} +/- {b['std']:.3f}"
    )


if __name__ == "__main__":
    main()

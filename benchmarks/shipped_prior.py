"""Build the shipped prior from ../shared/data and report its leave-one-person-out figures.

Writes ``sblr_rt/priors/physionet-eegmmidb-left-right.sblr.npz``: a prior
(:func:`sblr_rt.calibration.build_prior`, default settings) of PhysioNet eegmmidb
S002-S014 runs 4, 8 and 12 (imagined left vs right fist, markers T1/T2), window 0.5-3.5 s.
S001 is left out, so that ``make demo`` (which replays S001 run 4, shipped in
``recordings/``) shows the prior on a person it has never seen. Its report, each person's
runs classified by the prior of the other people, goes to docs/benchmarks/shipped_prior.md.

    python benchmarks/shipped_prior.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._report import Table, write_report  # noqa: E402
from benchmarks.accuracy import DATA, LEFT_RIGHT, physionet_file  # noqa: E402


def main() -> int:
    """Build, save and report the shipped prior."""
    if not (DATA / "physionet-eegmmidb-more").is_dir():
        print(f"benchmarks/shipped_prior.py: the shared data are absent ({DATA}); nothing built")
        return 0
    import warnings

    warnings.simplefilter("ignore")
    from sblr_rt.calibration import build_prior

    from sblr_rt.io import save_model
    from sblr_rt.priors import shipped_prior_path

    files = [physionet_file(s, r) for s in range(2, 15) for r in (4, 8, 12)]
    prior = build_prior(files, classes=LEFT_RIGHT, tmin=0.5, tmax=3.5)
    out = save_model(prior, shipped_prior_path("physionet-eegmmidb-left-right"))
    lopo = prior.metadata["prior"]["lopo"]
    print(prior.summary())
    print(f"written to {out} ({out.stat().st_size / 1e6:.1f} MB)")
    rows = [[p, f"{a:.3f}"] for p, a in lopo["per_person"].items()]
    rows.append(["mean", f"{lopo['mean']:.3f}"])
    rows.append(["worst", f"{lopo['worst']:.3f}"])
    write_report(
        "shipped_prior",
        Table(
            ["person", "accuracy"],
            rows,
            caption="Each person's left/right imagery runs 4, 8 and 12, classified trial by "
            "trial with causal run centring by the prior built from the other 12 people (no "
            "trial of the person).",
        ),
        blas="1 thread (OPENBLAS_NUM_THREADS=1)",
        notes=f"The shipped file: {out.name}, {out.stat().st_size / 1e6:.1f} MB.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

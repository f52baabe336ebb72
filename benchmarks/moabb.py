"""MOABB: the SBLR pipeline across many people, on any MOABB motor-imagery data set.

MOABB (Mother of All BCI Benchmarks) loads the data set (downloading it into MNE_DATA on
first use), cuts the trials with its paradigm (band-pass, window, resampling) and runs the
evaluation: within-session k-fold CV, or cross-session (train on the other sessions). Our
pipeline, ``SBLR`` (:class:`sblr_rt.calibration.moabb.SelectedSBLR`, importable from the
installed package), standardises each channel and selects rank and penalties on the
training trials only, with the calibration's own selection nested inside MOABB's folds;
CSP + LDA runs beside it on the same trials. This script is the command line of
:func:`sblr_rt.calibration.moabb.evaluate`.

    python benchmarks/moabb.py --dataset BNCI2014_001 [--subjects 1,2,3]
        [--evaluation within|cross-session] [--fmin 8 --fmax 30] [--resample 100]
        [--search fast|none] [--results moabb-results] [--n-jobs 1]

``--dataset`` is any class name in ``moabb.datasets`` (``FakeDataset`` generates its data,
no download). The scores are per subject and session; the summary is the mean per pipeline.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# This file is called moabb.py: run as a script, its folder comes first on sys.path and
# "import moabb" would import this file again instead of the package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from sblr_rt.calibration.moabb import SelectedSBLR, evaluate, pipelines  # noqa: E402

__all__ = ["SelectedSBLR", "evaluate", "main", "pipelines"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="BNCI2014_001")
    parser.add_argument("--subjects", default="", help="comma-separated (default: all)")
    parser.add_argument("--evaluation", choices=("within", "cross-session"), default="within")
    parser.add_argument("--fmin", type=float, default=8.0)
    parser.add_argument("--fmax", type=float, default=30.0)
    parser.add_argument("--resample", type=float, default=100.0)
    parser.add_argument("--search", choices=("fast", "paper", "none"), default="fast")
    parser.add_argument("--results", default=None, help="MOABB's result folder")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args(argv)
    import moabb
    import moabb.datasets

    moabb.set_log_level("ERROR")
    dataset = getattr(moabb.datasets, args.dataset)()
    if args.subjects:
        dataset.subject_list = [int(s) for s in args.subjects.split(",")]
    scores = evaluate(
        dataset,
        evaluation=args.evaluation,
        fmin=args.fmin,
        fmax=args.fmax,
        resample=args.resample,
        search=args.search,
        results=args.results,
        n_jobs=args.n_jobs,
    )
    cols = ["dataset", "subject", "session", "pipeline", "score"]
    print(scores[cols].to_string(index=False))
    print(scores.groupby("pipeline")["score"].agg(["mean", "std", "count"]).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A prior across people: the learning curve of a new person's first trials.

Leave one person out: for each of PhysioNet S002-S014 (imagined left vs right fist), a
prior is built with :func:`sblr_rt.calibration.build_prior` from every *other* shared
person (S001 runs 4 + 8; S002-S014 runs 4, 8 and 12), and the held-out person's run 12
(15 cues) is classified trial by trial with run centring, as ``sblr-rt run`` does,
after calibrating on the person's first ``k`` cues of runs 4 then 8:

- **prior only**: the prior as built (``k = 0``: decisions from the first trial);
- **prior + person**: ``calibrate(runs, prior=prior, max_trials=k)`` (the adapted prior
  alone below ``PriorSettings.auto_min_trials``, beside the person's ``auto`` model above,
  its weight chosen by cross-validation on the person's trials);
- **person only**: ``calibrate(runs, max_trials=k)``, ``auto`` on the person's cues alone
  (n/a where its 5-fold CV cannot run).

Nothing of the held-out person is used to build its prior, and the prior's settings
(``PriorSettings``) were chosen by this same leave-one-person-out protocol on these
people, so its ``k = 0`` figures are optimistic for a small grid of choices (rank 1-4 and
8, ``l2`` 1e-4 to 1e-1, covariance or band power, all channels or the sensorimotor strip;
rank 8 with ``l2`` 0.1 was chosen last, by the worst person: 0.47 against 0.40 at rank 4,
``l2`` 0.01, the mean equal at 0.631).

    python benchmarks/prior.py [--people S002,S003,...] [--ks 0,5,10,15,20,30]
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._report import Table, write_report  # noqa: E402
from benchmarks.accuracy import DATA, LEFT_RIGHT, physionet_file, raw_test_epochs  # noqa: E402

WINDOW = (0.5, 3.5)


def prior_files(exclude: str) -> list[Path]:
    """The shared people's left/right imagery runs, without person ``exclude``."""
    files = [physionet_file(1, r) for r in (4, 8)]
    files += [physionet_file(s, r) for s in range(2, 15) for r in (4, 8, 12)]
    return [f for f in files if not f.name.startswith(exclude)]


def main(argv=None) -> int:
    """Run the benchmark and write docs/benchmarks/prior.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", default=",".join(f"S{s:03d}" for s in range(2, 15)))
    parser.add_argument("--ks", default="0,5,10,15,20,30")
    parser.add_argument("--no-person-only", action="store_true")
    parser.add_argument(
        "--cv-from",
        type=int,
        default=10,
        help="also choose the prior's weight by CV from this many trials (0: no)",
    )
    args = parser.parse_args(argv)
    if not (DATA / "physionet-eegmmidb-more").is_dir():
        print(f"benchmarks/prior.py: the shared data are absent ({DATA}); nothing measured")
        return 0
    warnings.simplefilter("ignore")
    from sblr_rt.calibration import PriorSettings, build_prior, calibrate

    from sblr_rt.io import read_recording

    ks = [int(k) for k in args.ks.split(",")]
    people = args.people.split(",")
    rows = {}
    t_start = time.perf_counter()
    for person in people:
        subject = int(person[1:])
        t0 = time.perf_counter()
        prior = build_prior(
            prior_files(person), classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1], lopo=False
        )
        t_prior = time.perf_counter() - t0
        runs = [read_recording(physionet_file(subject, r)) for r in (4, 8)]
        test = read_recording(physionet_file(subject, 12))
        X, y = raw_test_epochs(test, prior, LEFT_RIGHT)
        row = {"prior only": float(np.mean(prior.predict_run(X) == y))}
        for k in ks:
            if k == 0:
                row["prior + person", 0] = row["prior only"]
                continue
            model = calibrate(
                runs, prior=prior, max_trials=k, classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1]
            )
            Xk, yk = raw_test_epochs(test, model, LEFT_RIGHT)
            row["prior + person", k] = float(np.mean(model.predict_run(Xk) == yk))
            row["weight", k] = (model.metadata.get("prior") or {}).get("weight")
            if args.cv_from and args.cv_from <= k < PriorSettings().auto_min_trials:
                early = copy.deepcopy(prior)  # the prior's weight chosen by CV from here
                early.metadata["prior"]["settings"]["auto_min_trials"] = args.cv_from
                model = calibrate(
                    runs,
                    prior=early,
                    max_trials=k,
                    classes=LEFT_RIGHT,
                    tmin=WINDOW[0],
                    tmax=WINDOW[1],
                )
                Xk, yk = raw_test_epochs(test, model, LEFT_RIGHT)
                row["cv from", k] = float(np.mean(model.predict_run(Xk) == yk))
            if args.no_person_only:
                continue
            try:
                own = calibrate(
                    runs, max_trials=k, classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1]
                )
            except (ValueError, RuntimeError):  # too few cues of a class for the CV
                row["person only", k] = None
                continue
            Xk, yk = raw_test_epochs(test, own, LEFT_RIGHT)
            row["person only", k] = float(np.mean(own.predict_run(Xk) == yk))
        rows[person] = row
        print(
            f"{person}: prior {row['prior only']:.3f} ({t_prior:.0f} s); "
            + "; ".join(
                f"k={k}: +person {row.get(('prior + person', k), float('nan')):.3f} "
                f"(w {row.get(('weight', k))}) own {_fmt(row.get(('person only', k)))} "
                f"cv-from {_fmt(row.get(('cv from', k)))}"
                for k in ks
                if k
            ),
            flush=True,
        )
    header = [
        "person",
        "k",
        "prior + person",
        "person only",
        "prior weight",
        f"weight by CV from {args.cv_from} cues",
    ]
    table_rows = []
    for k in ks:
        for person, row in rows.items():
            table_rows.append(
                [
                    person,
                    k,
                    _fmt(row.get(("prior + person", k))),
                    _fmt(row.get(("person only", k))),
                    _fmt(row.get(("weight", k)), 2),
                    _fmt(row.get(("cv from", k))),
                ]
            )
    summary = []
    for k in ks:
        both = [r.get(("prior + person", k)) for r in rows.values()]
        own = [r.get(("person only", k)) for r in rows.values()]
        own = [v for v in own if v is not None]
        early = [r[("cv from", k)] for r in rows.values() if ("cv from", k) in r]
        summary.append(
            [
                k,
                _fmt(np.mean(both)),
                _fmt(np.min(both)),
                _fmt(np.mean(own)) if own else "n/a",
                _fmt(np.min(own)) if own else "n/a",
                len(own),
                _fmt(np.mean(early)) if early else "n/a",
                _fmt(np.min(early)) if early else "n/a",
            ]
        )
    tables = (
        Table(
            [
                "k (person's cues)",
                "prior + person: mean",
                "worst",
                "person only: mean",
                "worst",
                "people with a person-only model",
                "weight by CV: mean",
                "worst",
            ],
            summary,
            caption="Accuracy on run 12 (15 cues, run-centred), leaving each person out of "
            "the prior; k = 0 is the prior alone. 'Weight by CV' chooses the prior's weight "
            f"by cross-validation from {args.cv_from} cues instead of from "
            "PriorSettings.auto_min_trials.",
        ),
        Table(header, table_rows, caption="Every person."),
    )
    write_report(
        "prior",
        *tables,
        blas="1 thread per process (OPENBLAS_NUM_THREADS=1)",
        notes=f"People {', '.join(people)}; {time.perf_counter() - t_start:.0f} s in all.",
    )
    return 0


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


if __name__ == "__main__":
    sys.exit(main())

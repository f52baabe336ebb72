"""Run centring, chosen by leaving people out: which test-time setting holds on new people.

For each person and test run of ``benchmarks/accuracy.py`` (S001's four, S002-S014's run
12), ``auto`` is calibrated twice on the calibration runs: with every run centred on its own
mean (the default) and without. The test run is then classified in time order under each
setting:

- ``none``: the model calibrated without centring, each trial scored alone;
- ``static``: the centred model, each trial scored at the calibration reference;
- ``w=K``: the centred model with the test run's running mean, starting at the calibration
  reference with the weight of K trials (K = 1 is the shipped default).

A setting is then chosen **leaving each person out**: the setting with the best mean over
the other people's test runs is applied to the person left out. The "chosen by LOPO" column
is what a default picked this way scores on people it was not picked on; it is the honest
figure to compare with the fixed settings.

    python benchmarks/run_centring.py [--people S001,S002,...]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
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
from benchmarks.accuracy import (  # noqa: E402
    DATA,
    WINDOW,
    cases,
    physionet_file,
    raw_test_epochs,
)

WARMUPS = (1.0, 3.0, 10.0, 30.0)
SETTINGS = ("none", "static", *(f"w={w:g}" for w in WARMUPS))


def _with_warmup(model, warmup):
    out = copy.copy(model)
    out.run_centring = dataclasses.replace(model.run_centring, warmup=warmup)
    return out


def main(argv=None) -> int:
    """Run the benchmark and write docs/benchmarks/run_centring.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", default=",".join(f"S{s:03d}" for s in range(1, 15)))
    args = parser.parse_args(argv)
    if not (DATA / "physionet-eegmmidb-more").is_dir():
        print(f"benchmarks/run_centring.py: the shared data are absent ({DATA}); nothing run")
        return 0
    warnings.simplefilter("ignore")
    from sblr_rt.calibration import calibrate

    from sblr_rt.io import read_recording

    t0 = time.perf_counter()
    rows = []
    for person, task, cal, test, class_map in cases(args.people.split(",")):
        recs = [read_recording(physionet_file(int(person[1:]), r)) for r in (*cal, test)]
        kw = {"classes": class_map, "tmin": WINDOW[0], "tmax": WINDOW[1], "n_jobs": 1}
        centred = calibrate(recs[:-1], **kw)
        plain = calibrate(recs[:-1], recentre=False, **kw)
        X, y = raw_test_epochs(recs[-1], centred, class_map)
        Xp, yp = raw_test_epochs(recs[-1], plain, class_map)
        acc = {
            "none": float(np.mean(plain.predict(Xp) == yp)),
            "static": float(np.mean(centred.predict(X) == y)),
        }
        for w in WARMUPS:
            acc[f"w={w:g}"] = float(np.mean(_with_warmup(centred, w).predict_run(X) == y))
        rows.append({"person": person, "task": task, **acc})
        print(f"{person} {task}: " + " ".join(f"{s} {acc[s]:.3f}" for s in SETTINGS), flush=True)
    people = sorted({r["person"] for r in rows})
    for r in rows:  # the setting the other people's test runs choose
        others = [o for o in rows if o["person"] != r["person"]]
        best = max(SETTINGS, key=lambda s: (np.mean([o[s] for o in others]), s == "none"))
        r["chosen"], r["lopo"] = best, r[best]
    header = ["person", "test run", *SETTINGS, "chosen by LOPO", "its accuracy"]
    table = [
        [
            r["person"],
            r["task"],
            *(f"{r[s]:.3f}" for s in SETTINGS),
            r["chosen"],
            f"{r['lopo']:.3f}",
        ]
        for r in rows
    ]
    summary = []
    for label, keep in (
        ("S002-S014", lambda r: r["person"] != "S001"),
        ("S001", lambda r: r["person"] == "S001"),
    ):
        sel = [r for r in rows if keep(r)]
        if not sel:
            continue
        for what, f in (("mean", np.mean), ("worst", np.min)):
            summary.append(
                [
                    what,
                    label,
                    *(f"{f([r[s] for r in sel]):.3f}" for s in SETTINGS),
                    "",
                    f"{f([r['lopo'] for r in sel]):.3f}",
                ]
            )
    write_report(
        "run_centring",
        Table(
            header,
            table + summary,
            caption="Cross-run accuracy of auto under each "
            "test-time setting, and of the setting chosen leaving the person out.",
        ),
        blas="1 thread (OPENBLAS_NUM_THREADS=1)",
        notes=f"{len(people)} people, {len(rows)} test runs, {time.perf_counter() - t0:.0f} s.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

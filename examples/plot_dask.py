"""
Calibration on a Dask cluster
=============================

The selection's folds run through :mod:`joblib`, so the same calibration runs unchanged on
a Dask (or Ray) cluster inside :func:`joblib.parallel_config`. Here a
:class:`~distributed.LocalCluster` in this process stands in for the cluster; on a real
one, connect with ``Client("tcp://scheduler:8786")`` instead.

A :class:`~distributed.LocalCluster` with ``processes=True`` (the default) starts worker
processes that import the calling script: put the calibration under
``if __name__ == "__main__":`` then.
"""

# %%
import os
from pathlib import Path

from dask.distributed import Client, LocalCluster
from joblib import parallel_config
from sblr_rt.calibration import calibrate

# The shipped recordings: run from a clone's root, or set SBLR_RT_RECORDINGS.
recordings = Path(os.environ.get("SBLR_RT_RECORDINGS", "recordings")) / "physionet-eegmmidb-S001"
runs = [recordings / f"S001R{r:02d}.edf" for r in (6, 10)]

with LocalCluster(n_workers=1, threads_per_worker=2, processes=False) as cluster:
    with Client(cluster) as client, parallel_config(backend="dask"):
        print(f"Dask workers: {len(client.scheduler_info()['workers'])}")
        model = calibrate(runs, classes={"T1": "fists", "T2": "feet"}, tmin=0.5, tmax=3.5)
print(model)
print("chosen:", model.metadata["selection"]["chosen"])

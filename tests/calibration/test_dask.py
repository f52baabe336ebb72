"""The selection runs on a Dask cluster through joblib's Dask backend, unchanged.

A lab that outgrows one machine points joblib at its cluster with
``joblib.parallel_config(backend="dask")``; no scheduler of ours is involved. Here the
cluster is a LocalCluster of two worker processes on the loopback interface.
"""

from __future__ import annotations

import numpy as np
import pytest
from distributed import Client, LocalCluster, get_task_stream
from joblib import parallel_config
from sblr_rt.calibration import CalibrationConfig, select


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(40) % 2
    Z = rng.standard_normal((40, 4, 12))
    Z[:, 1, 3:8] += 0.8 * y[:, None]
    return Z, y


def _chosen(report):
    return report["params"], report["best"]


@pytest.mark.slow
def test_selection_on_a_dask_cluster_chooses_the_local_model():
    Z, y = _data()
    config = CalibrationConfig(
        features="waveform", ranks=(1, 2), l1_fractions=(0.0, 0.1), l2_values=(0.01, 1.0),
        cv=3, n_jobs=2, max_iter=100,
    )  # fmt: skip
    local_est, local_report, _ = select(Z, y, config=config, center=False)
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
        get_task_stream(client) as tasks,
        parallel_config(backend="dask"),
    ):
        est, report, _ = select(Z, y, config=config, center=False)
    assert len(tasks.data) > 0  # the folds ran on the cluster's workers
    assert _chosen(report) == _chosen(local_report)
    np.testing.assert_allclose(est.coef_, local_est.coef_, rtol=1e-10, atol=1e-12)

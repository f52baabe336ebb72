"""An ensemble's members that pick and filter alike share one filter bank, to rounding."""

from __future__ import annotations

import warnings

import numpy as np

from sblr_rt.bci_model import EnsembleModel, SingleModel
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.online import OnlineClassifier
from sblr_rt.online.incremental.ensemble_form import EnsembleForm
from sblr_rt.preprocessing import Preprocessor

CH_NAMES = ["C3", "Cz", "C4", "FC3", "FC4", "CP3", "CP4", "Pz"]


def _member(features, spatial, seed):
    """A fitted 8-channel model of ``features`` through ``spatial`` on random epochs."""
    rng = np.random.default_rng(seed)
    pre = Preprocessor(
        ch_names=CH_NAMES, sfreq=100.0, tmin=0.5, tmax=1.5, features=features, spatial=spatial
    )
    y = np.arange(30) % 2
    raw = rng.standard_normal((30, len(CH_NAMES), pre.n_times_raw))
    raw[y == 1, 0] *= 1.5
    X = pre.fit(raw).transform(raw)
    est = SparseBilinearLogisticRegression(rank=1, mu2=1e-3, nu2=1e-3, max_iter=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return SingleModel(preprocessor=pre, estimator=est, classes=["a", "b"])


def test_members_filtering_alike_share_a_bank_and_score_as_unshared():
    """Band power raw, through a common average and a Laplacian: one bank, same scores.

    The shared scores equal the unshared ones (each member filtering on its own) to rounding,
    before and after lost samples, and the offline pipeline's.
    """
    members = [
        _member("bandpower", None, 0),
        _member("waveform", "car", 1),
        _member("bandpower", "car", 2),
        _member("covariance", None, 3),  # other filters: its own bank
        _member("bandpower", "csd", 4),
    ]
    model = EnsembleModel(members, weights=[0.3, 0.1, 0.2, 0.2, 0.2])
    clf = OnlineClassifier(model)
    n, capacity = clf.n_times_raw, 3 * clf.n_times_raw
    shared = EnsembleForm(clf.scoring, capacity)
    alone = EnsembleForm(clf.scoring, capacity, share=False)
    assert len(shared.shared_banks) == 1 and not alone.shared_banks
    rng = np.random.default_rng(5)
    data = rng.standard_normal((6 * n, len(CH_NAMES)))
    pos, index, compared, lost = 0, 0, 0, None  # data read, absolute sample index
    for size in [7, 50, 300, 1, 23] * 20:
        chunk = data[pos : pos + size]
        if not len(chunk):
            break
        if lost is None and pos >= 3 * n:
            lost = index  # 10 lost samples: the shared bank restarts too
            for form in (shared, alone):
                form.skip(10)
            index += 10
        for form in (shared, alone):
            form.push(chunk)
            form.settle()
        pos, index = pos + len(chunk), index + len(chunk)
        if index >= n and (lost is None or index - n >= lost + 10):
            got, want = shared.scores(index), alone.scores(index)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
            compared += 1
            if lost is None:  # and the offline pipeline's, on the same samples
                offline = model.decision_function(data[index - n : index].T[None])[0]
                np.testing.assert_allclose(got, np.atleast_1d(offline), rtol=1e-9)
    assert lost is not None and compared > 10

"""Fixtures of the command-line tests: one small model file, error lines."""

from __future__ import annotations

import pytest

from sblr_rt.io.model_file import save_model

#: Channels and rate of the small model; a stream for ``run`` must match them.
CH_NAMES = ["C3", "Cz", "C4"]
SFREQ = 100.0
DEADLINE = 30.0  # generous: the machine may be loaded; tests never assert timings


@pytest.fixture(scope="session")
def model_path(tmp_path_factory):
    """Return a model file: 3 channels (C3, Cz, C4) at 100 Hz, classes left/right."""
    import numpy as np

    from sblr_rt.bci_model import SingleModel
    from sblr_rt.model import SparseBilinearLogisticRegression
    from sblr_rt.preprocessing import Preprocessor

    rng = np.random.default_rng(0)
    pre = Preprocessor(ch_names=CH_NAMES, sfreq=SFREQ, tmin=0.0, tmax=0.5)
    raw = rng.standard_normal((40, 3, pre.n_times_raw))
    y = np.repeat([0, 1], 20)
    raw[y == 1, 0] += 1.0
    est = SparseBilinearLogisticRegression().fit(pre.fit(raw).transform(raw), y)
    path = tmp_path_factory.mktemp("cli-model") / "m.sblr.npz"
    save_model(SingleModel(preprocessor=pre, estimator=est, classes=["left", "right"]), path)
    return path


def _one_line_error(err, command):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"sblr-rt {command}: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def one_line_error():
    """Return ``one_line_error(err, command)``: assert ``err`` is one ``sblr-rt COMMAND:
    error: ...`` line and no traceback; return that line."""
    return _one_line_error

"""The estimator, calibration and online loop import and run without Qt.

The dashboard's packages (PyQt5, pyqtgraph) stay in the default install, but a user who
wants only the estimator may not have them: a subprocess in which they cannot be
imported fits a model, calibrates a small recording and builds the online classifier.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKER = textwrap.dedent(
    """
    import importlib.abc
    import sys

    BLOCKED = ("PyQt5", "PyQt6", "PySide2", "PySide6", "pyqtgraph", "pytestqt")


    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None


    sys.meta_path.insert(0, Blocker())
    """
)

SCRIPT = textwrap.dedent(
    """
    import sys

    import numpy as np

    try:
        import PyQt5  # noqa: F401
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("the blocker did not block PyQt5")

    import sblr_rt
    import sblr_rt.calibration
    import sblr_rt.online
    from sblr_rt import SparseBilinearLogisticRegression
    from sblr_rt.calibration import calibrate

    rng = np.random.default_rng(0)
    y = np.arange(30) % 2
    X = rng.standard_normal((30, 3, 10))
    X[:, 0, 2:6] += y[:, None]
    clf = SparseBilinearLogisticRegression(mu2=0.1, nu2=0.1).fit(X, y)
    assert clf.score(X, y) > 0.8

    model = calibrate(
        sys.argv[1], classes={"T1": "left", "T2": "right"}, tmin=0.5, tmax=2.5,
        features="bandpower", spatial=None, search="none", ranks=(1,), cv=3, n_jobs=1,
    )
    assert model.classes == ["left", "right"]
    # the online side: a streaming state fed raw samples decides like the model
    from sblr_rt.online import OnlineClassifier

    online = OnlineClassifier(model)
    n = online.n_times_raw + 50
    raw = rng.standard_normal((n, len(online.ch_names))).astype(np.float32) * 1e-5
    state = online.streaming(capacity=n)
    state.push(raw, np.arange(n) / online.sfreq)
    decision = state.decide(n)
    assert decision["label"] in model.classes
    window = raw[n - online.n_times_raw :].T.astype(np.float64)
    ref = online.decision_function(window, form="plain")
    np.testing.assert_allclose(decision["score"], ref, rtol=1e-6, atol=1e-9)
    qt = sorted(m for m in sys.modules if m.split(".")[0] in ("PyQt5", "pyqtgraph"))
    assert not qt, qt
    print("ok without Qt")
    """
)


def test_estimator_calibration_and_online_run_without_qt(tmp_path, physionet_dir):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {
        "PYTHONPATH": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "OPENBLAS_NUM_THREADS": "1",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, str(script), str(physionet_dir / "S001R06.edf")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ok without Qt" in proc.stdout

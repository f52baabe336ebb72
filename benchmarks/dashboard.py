"""Redraw cost of the Live tab at 118 channels: ``python benchmarks/dashboard.py``.

Feeds the Live tab snapshots shaped like ``OnlineLoop.snapshot()`` (118 channels, 10 s of
traces at the loop's 100 Hz display rate, 20 decisions/s, cues and trial decisions) and
times, per frame, the update (numpy work and pyqtgraph item updates in :meth:`LiveTab.draw`)
and the paint of the whole tab into an offscreen image, at 1600 x 1000 pixels. The budget
is one frame per timer tick at 30 Hz (33 ms). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._report import Table, write_report


def synthetic_snapshot(n_channels: int = 118, *, seconds: float = 10.0, rate: float = 100.0):
    """Return a Telemetry with the sizes ``OnlineLoop.snapshot()`` produces."""
    rng = np.random.default_rng(0)
    now = time.monotonic()
    n = int(seconds * rate)
    times = now - 0.01 - np.arange(n)[::-1] / rate
    names = [f"E{i:03d}" for i in range(n_channels)]
    data = (rng.standard_normal((n_channels, n)) * 1e-5).astype(np.float32)
    decisions = []
    for t in np.arange(now - seconds, now, 0.05):
        p = float(1 / (1 + np.exp(-np.sin(t))))
        decisions.append(
            {
                "label": "right" if p > 0.5 else "left",
                "proba": {"left": 1 - p, "right": p},
                "window_end": float(t),
                "trial": False,
                "cue": None,
            }
        )
    cues = [(now - s, "left" if k % 2 else "right") for k, s in enumerate((1.5, 5.5, 9.5))]
    trials = [
        {"label": v, "proba": {"left": 0.3, "right": 0.7}, "window_end": t + 1.0, "trial": True}
        for t, v in cues
        if t + 1.0 < now
    ]
    from sblr_rt.online.telemetry import RawTraces, Stats, StreamTelemetry, Telemetry

    return Telemetry(
        time=now,
        mode="trial",
        stream=StreamTelemetry(
            name="bench",
            sfreq=1000.0,
            n_channels=n_channels,
            ch_names=tuple(names),
            connected=True,
            buffer_fill=0.5,
        ),
        raw=RawTraces(data, times, tuple(names)),
        decisions=tuple(decisions),
        trials=tuple(trials),
        cues=tuple(cues),
        step_time=Stats(p50=5e-5, p99=1e-4),
        latency=Stats(p50=1e-3, p99=3e-3),
        decisions_per_second=20.0,
    )


def main(n_frames: int = 60) -> int:
    """Time ``n_frames`` redraws of 118 channels and print the figures."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt5 import QtGui, QtWidgets
    from sblr_rt.gui.app import configure_pyqtgraph
    from sblr_rt.gui.live_tab import LiveTab

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    configure_pyqtgraph()
    tab = LiveTab()
    tab.resize(1600, 1000)
    tab.show()
    snapshots = [synthetic_snapshot() for _ in range(4)]
    tab.draw(snapshots[0])
    tab.select_channels(list(snapshots[0].stream.ch_names))  # all 118
    app.processEvents()
    image = QtGui.QImage(tab.size(), QtGui.QImage.Format_ARGB32_Premultiplied)
    update, frame, full, cpu = [], [], [], []
    for i in range(n_frames):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        tab.draw(snapshots[i % len(snapshots)])
        t1 = time.perf_counter()
        app.processEvents()  # Qt repaints what changed, as in the running dashboard
        t2 = time.perf_counter()
        cpu.append(time.thread_time() - c0)
        painter = QtGui.QPainter(image)
        tab.render(painter)  # everything, including widgets that did not change
        painter.end()
        t3 = time.perf_counter()
        update.append(t1 - t0)
        frame.append(t2 - t0)
        full.append(t1 - t0 + t3 - t2)
    x, _ = tab.trace_curve.getData()
    print(f"Live tab, 118 channels x {x.size // 118} points drawn, 1600 x 1000 px, offscreen")
    rows = (
        ("update", update),
        ("update + repaint", frame),
        ("update + full render", full),
        ("CPU of update+repaint", cpu),
    )
    table = []
    for name, values in rows:
        ms = 1e3 * np.array(values)
        print(
            f"  {name:21s} p50 {np.median(ms):6.1f} ms   p90 {np.percentile(ms, 90):6.1f} ms"
            f"   max {ms.max():6.1f} ms   (budget at 30 Hz: 33.3 ms)"
        )
        table.append([name, *(f"{v:.1f} ms" for v in np.percentile(ms, [50, 90, 100]))])
    print(
        f"  CPU cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}: wall-clock "
        "figures are noisy on a shared machine; the CPU time of the GUI thread is not"
    )
    write_report(
        "dashboard",
        Table(["per frame", "p50", "p90", "max"], table),
        notes=(
            f"Live tab, 118 channels x {x.size // 118} points drawn, 1600 x 1000 px, "
            f"offscreen, {n_frames} frames; the budget at 30 Hz is 33.3 ms. *Full render* "
            "paints every widget, changed or not; the CPU row is the GUI thread's."
        ),
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

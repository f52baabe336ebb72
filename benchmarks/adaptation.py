"""A model that adapts during the session, measured: trial accuracy and step time.

**Accuracy.** Per person: calibrate on ONE run (15 cues, ``calibrate`` with its defaults:
``features="auto"``), then replay the next two runs of the same task through the online
loop in trial mode, once with that model fixed and once adapting (each decided trial joins
the calibration set; warm refits with the chosen path and penalties, a whole re-selection
every ``--every`` trials). Reported: the trial accuracy of each replayed run, fixed and
adapted. The runs (../shared/data):

- PhysioNet S002-S009, imagined left (T1) / right (T2) fist: calibrate on run 4, replay
  runs 8 and 12.
- PhysioNet S001, left (T1) / right (T2) fist: calibrate on run 3 (executed), replay runs
  4 (imagined) and 7 (executed): S001's only three left/right runs.

How the timing is simulated: the loop is stepped at full speed on an in-memory source
(chunks of 0.1 s), but each refit is run when it would start (the first step after a new
trial, when no refit runs) and timed on the wall clock; its model is swapped in only at
the first step whose stream time is at least the start plus that wall time, i.e. as if
the stream ran in real time and the refit ran beside it. Refits that would finish after
the last trial are not run.

**Step time during a refit.** A real session on one core's worth of decisions: the loop's
worker thread classifies a run replayed in real time (sliding decisions every 50 ms plus
the trials), while :class:`~sblr_rt.calibration.adapt.Adapter` refits in its spawned
worker process (every refit a whole re-selection, the longest kind). The step times of
the decisions published while a refit ran are compared with those published while none
ran.

    python benchmarks/adaptation.py [--people S001,S002,...] [--every 10]
                                    [--rt-seconds 60] [--skip-accuracy] [--skip-steps]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DATA, LEFT_RIGHT, physionet_file

WINDOW = (0.5, 3.5)
CHUNK = 16  # samples per step of the accuracy replay (0.1 s at 160 Hz)
RT_CHUNK = 4  # samples per push of the real-time replay (25 ms at 160 Hz)


def runs_of(person):
    """(calibration run, replayed runs) of a person."""
    return (3, (4, 7)) if person == "S001" else (4, (8, 12))


class MemorySource:
    """An EEG source whose ring buffer the caller fills (``send``) or a thread feeds."""

    def __init__(self, data, timestamps, ch_names, sfreq):
        from sblr_rt.stream.ring_buffer import RingBuffer

        self.data, self.timestamps = data, timestamps
        self.ch_names, self.sfreq = list(ch_names), float(sfreq)
        self.n_channels, self.name = len(ch_names), "replay"
        self.buffer = RingBuffer(self.n_channels, int(60 * sfreq))
        self.sent = 0

    def send(self, n, timestamps=None):
        stop = min(self.sent + n, len(self.data))
        ts = self.timestamps[self.sent : stop] if timestamps is None else timestamps
        self.buffer.push(self.data[self.sent : stop], ts)
        self.sent = stop

    def status(self):
        return {"connected": True, "effective_sfreq": self.sfreq}


class MemoryMarkers:
    def __init__(self):
        self.queue = []

    def pop(self):
        out, self.queue = self.queue, []
        return out


def session_stream(recs):
    """Join runs end to end: samples (n, ch), timestamps, cue samples and values."""
    data = np.concatenate([r.data.T for r in recs])
    offsets = np.cumsum([0] + [r.n_samples for r in recs[:-1]])
    cues = [
        (off + round(t * r.sfreq), v)
        for r, off in zip(recs, offsets, strict=True)
        for t, v in zip(r.marker_times, r.marker_values, strict=True)
        if v in LEFT_RIGHT
    ]
    return data, 1000.0 + np.arange(len(data)) / recs[0].sfreq, cues, offsets


def replay(model, recs, calibration, *, adapt, every):
    """Replay ``recs`` through the loop; return the trial decisions and the refits."""
    from sblr_rt.calibration.adapt import trial_recording
    from sblr_rt.calibration.refit import RefitError, labelled_recording, refit_model

    from sblr_rt.online import OnlineLoop

    data, ts, cues, offsets = session_stream(recs)
    source, markers = MemorySource(data, ts, model.ch_names, recs[0].sfreq), None
    markers = MemoryMarkers()
    clock = [ts[0]]
    loop = OnlineLoop(
        model, source, markers=markers, clock=lambda: clock[0], mode="trial", hop=0.0,
        keep_trials=adapt,
    )  # fmt: skip
    loop.start(thread=False)
    cal = [labelled_recording(r, LEFT_RIGHT) for r in calibration]
    current, trials, refits = model, [], []
    pending = None  # (model, ready at stream time)
    since_reselect, attempted = 0, 0
    last_cue = max(i for i, _ in cues)
    k = 0
    while source.sent < len(data):
        start = source.sent
        source.send(CHUNK)
        while k < len(cues) and cues[k][0] < source.sent:
            markers.queue.append((ts[cues[k][0]], cues[k][1]))
            k += 1
        now = clock[0] = ts[source.sent - 1]
        loop.step_once()
        if not adapt:
            continue
        for t in loop.pop_trials(seconds_before=2.0):
            trials.append(t)
            since_reselect += 1
        if pending is not None and now >= pending[1]:
            loop.swap_model(pending[0], version=pending[2])
            current, pending = pending[0], None
        if pending is None and len(trials) > attempted and start < last_cue:
            attempted = len(trials)
            reselect = every > 0 and since_reselect >= every
            if reselect:
                since_reselect = 0
            recordings = cal + [trial_recording(t, "V") for t in trials]
            t0 = time.perf_counter()
            version = len([r for r in refits if r["ok"]]) + 1
            try:
                new = refit_model(current, recordings, version=version, reselect=reselect)
                ok = True
            except RefitError as err:
                new, ok, error = None, False, str(err)
            else:
                error = None
            seconds = time.perf_counter() - t0
            refits.append({"ok": ok, "reselect": reselect, "seconds": seconds, "error": error})
            if ok:
                pending = (new, now + seconds, version)
    decisions = [d for d in loop.pop_decisions() if d["trial"]]
    loop.stop()
    run_of = [int(np.searchsorted(offsets, d["window_start_index"], side="right")) - 1
              for d in decisions]  # fmt: skip
    return decisions, run_of, refits


def accuracy_table(people, every):
    from sblr_rt.calibration import calibrate

    from sblr_rt.io.reading import read_recording

    rows = []
    print(f"\nAdaptation: calibrate on one run (15 cues), replay the next two; re-selection "
          f"every {every} trials\n")  # fmt: skip
    header = (f"{'person':7s} {'runs':11s} {'fixed 2nd':>9s} {'adapt 2nd':>9s} "
              f"{'fixed 3rd':>9s} {'adapt 3rd':>9s}  refits ok/failed, re-selections, "
              "mean s")  # fmt: skip
    print(header)
    for person in people:
        cal_run, replayed = runs_of(person)
        subject = int(person[1:])
        files = [physionet_file(subject, r) for r in (cal_run, *replayed)]
        if not all(f.exists() for f in files):
            print(f"{person}: data absent ({files[0].parent}), skipped")
            continue
        recs = [read_recording(f) for f in files]
        model = calibrate(recs[:1], classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1], n_jobs=1)
        row = {"person": person}
        for adapt in (False, True):
            decisions, run_of, refits = replay(model, recs[1:], recs[:1], adapt=adapt, every=every)
            truth = [LEFT_RIGHT[d["cue"]] for d in decisions]
            for run in (0, 1):
                hits = [d["label"] == y for d, y, r in zip(decisions, truth, run_of, strict=True)
                        if r == run]  # fmt: skip
                row[(adapt, run)] = float(np.mean(hits)) if hits else float("nan")
            if adapt:
                row["refits"] = refits
                row["versions"] = sorted({d["model_version"] for d in decisions})
        refits = row["refits"]
        n_ok = sum(r["ok"] for r in refits)
        n_sel = sum(r["reselect"] for r in refits)
        mean_s = np.mean([r["seconds"] for r in refits]) if refits else float("nan")
        runs = f"R{cal_run:02d}>{replayed[0]:02d},{replayed[1]:02d}"
        print(f"{person:7s} {runs:11s} {row[(False, 0)]:9.3f} {row[(True, 0)]:9.3f} "
              f"{row[(False, 1)]:9.3f} {row[(True, 1)]:9.3f}  {n_ok}/{len(refits) - n_ok}, "
              f"{n_sel}, {mean_s:.1f} s", flush=True)  # fmt: skip
        errors = sorted({r["error"].split(":")[0] for r in refits if r["error"]})
        if errors:
            print(f"        failed refits: {'; '.join(errors)}")
        rows.append(row)
    if rows:
        mean = {
            key: np.nanmean([r[key] for r in rows]) for key in rows[0] if isinstance(key, tuple)
        }
        print(f"{'mean':7s} {'':11s} {mean[(False, 0)]:9.3f} {mean[(True, 0)]:9.3f} "
              f"{mean[(False, 1)]:9.3f} {mean[(True, 1)]:9.3f}  ({len(rows)} people)")  # fmt: skip
        for run, name in ((0, "2nd"), (1, "3rd")):
            diff = [r[(True, run)] - r[(False, run)] for r in rows]
            print(
                f"{name} run, adapted - fixed: helps {sum(d > 0 for d in diff)}, hurts "
                f"{sum(d < 0 for d in diff)}, same {sum(d == 0 for d in diff)}; per person "
                + " ".join(f"{r['person']} {d:+.3f}" for r, d in zip(rows, diff, strict=True))
            )
    return rows


def _realtime_pass(model, run, cal, seconds, *, adapt, speed=1.0):
    """Replay ``run`` at ``speed`` x real time into a threaded loop; return its snapshot and
    refits."""
    from sblr_rt.calibration.adapt import Adapter

    from sblr_rt.online import OnlineLoop
    from sblr_rt.stream import local_clock

    data, _, cues, _ = session_stream([run])
    source, markers = MemorySource(data, None, model.ch_names, run.sfreq), None
    markers = MemoryMarkers()
    loop = OnlineLoop(model, source, markers=markers, mode="trial", hop=0.05, keep_trials=adapt,
                      history_seconds=3600.0, max_history=100_000)  # fmt: skip
    n_total = min(len(data), int(seconds * run.sfreq))

    rate = run.sfreq * speed  # samples per second of wall clock

    behind = []  # (clock, windows dropped as behind so far) whenever the count grows

    def feed():  # RT_CHUNK samples at a time, stamped on the LSL clock as a player would
        t0, k = local_clock(), 0
        dropped = loop._telemetry.dropped  # read only: the counts of the running loop
        while source.sent < n_total:
            n = source.sent
            if dropped["behind"] > (behind[-1][1] if behind else 0):
                behind.append((local_clock(), dropped["behind"]))
            source.send(RT_CHUNK, t0 + np.arange(n, n + RT_CHUNK) / rate)
            while k < len(cues) and cues[k][0] < source.sent:
                markers.queue.append((t0 + cues[k][0] / rate, cues[k][1]))
                k += 1
            time.sleep(max(0.0, t0 + source.sent / rate - local_clock()))

    with tempfile.TemporaryDirectory() as folder:
        adapter = (
            Adapter(loop, model, folder=folder, calibration=[cal], every=1) if adapt else None
        )
        loop.start()
        if adapter is not None:
            adapter.start()
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        feeder.join()
        time.sleep(0.5)
        snap = loop.snapshot()
        if adapter is not None:
            adapter.stop()
        loop.stop()
    return snap, ([] if adapter is None else adapter.history), behind


def _stats_line(name, x):
    if not x.size:
        return f"  {name:30s}     0 decisions"
    p50, p99 = np.percentile(x, [50, 99]) * 1e6
    return (f"  {name:30s} {x.size:5d} decisions: step p50 {p50:6.1f} us, p99 {p99:7.1f} us, "
            f"max {x.max() * 1e6:7.1f} us")  # fmt: skip


def step_times_during_refits(person, seconds, speed=1.0):
    """Real time (or ``speed`` x): the loop's worker decides while the Adapter refits.

    ``seconds`` of the stream are replayed (``seconds / speed`` of wall clock). Reported
    beside the step times: the windows dropped as ``behind`` (the loop woke too late and
    skipped hops), with and without adaptation.
    """
    from sblr_rt.calibration import calibrate

    from sblr_rt.io.reading import read_recording

    cal_run, replayed = runs_of(person)
    subject = int(person[1:])
    files = [physionet_file(subject, r) for r in (cal_run, replayed[0])]
    if not all(f.exists() for f in files):
        print(f"{person}: data absent, step times during refits not measured")
        return
    cal, run = (read_recording(f) for f in files)
    model = calibrate([cal], classes=LEFT_RIGHT, tmin=WINDOW[0], tmax=WINDOW[1], n_jobs=1)
    fixed, _, _ = _realtime_pass(model, run, cal, seconds, adapt=False, speed=speed)
    snap, history, behind = _realtime_pass(model, run, cal, seconds, adapt=True, speed=speed)
    spans = [(h["started"], h["finished"] or np.inf) for h in history]
    decisions = list(snap.decisions)
    during = [any(a <= d["published"] <= b for a, b in spans) for d in decisions]
    steps = np.array([d["step_time"] for d in decisions])
    print(f"\nStep time: {person} run {replayed[0]} replayed at {speed:g}x twice ({seconds:.0f} s "
          f"of stream, chunks of {RT_CHUNK} samples, {snap.form} form, hop 50 ms + trials), "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print(_stats_line("fixed model (no adaptation)", np.array([d["step_time"] for d in
                                                                 fixed.decisions])))  # fmt: skip
    during_refit = steps[np.array(during, dtype=bool)]
    print(_stats_line("adapting, during a refit", during_refit))
    print(_stats_line("adapting, no refit running", steps[~np.array(during, dtype=bool)]))
    if during_refit.size:
        p99 = np.percentile(during_refit, 99) * 1e6
        verdict = "PASS" if p99 < 200 else "FAIL"
        print(f"  TARGET step p99 during a refit under 200 us: {p99:.0f} us: {verdict}")
    ok = [h for h in history if h["error"] is None and h["finished"]]
    versions = sorted({d["model_version"] for d in decisions})
    mean = np.mean([h["finished"] - h["started"] for h in ok]) if ok else float("nan")
    print(f"  refits (each a whole re-selection): {len(history)} submitted, {len(ok)} swapped "
          f"in (versions decided: {versions}), {mean:.1f} s each; windows dropped: fixed "
          f"{fixed.dropped.total}, adapting {snap.dropped.total}")  # fmt: skip
    # When were hops skipped: while a refit ran, in the second after a new model came
    # (its streaming state prepared on the adapter's thread, adopted by the loop), or else.
    when = {"refit": 0, "swap": 0, "other": 0}
    previous = 0
    for t, count in behind:
        if any(a <= t <= b for a, b in spans):
            key = "refit"
        elif any(b <= t <= b + 1.0 for _, b in spans):
            key = "swap"
        else:
            key = "other"
        when[key] += count - previous
        previous = count
    print(f"  behind while adapting, seen: during a refit {when['refit']}, within 1 s after a "
          f"swap {when['swap']}, other {when['other']}")  # fmt: skip
    verdict = "none while refitting: " + ("PASS" if snap.dropped.behind == 0 else "FAIL")
    print(f"  windows dropped as behind ({speed:g}x): fixed {fixed.dropped.behind} of "
          f"{fixed.dropped.behind + len(fixed.decisions)}, adapting {snap.dropped.behind} of "
          f"{snap.dropped.behind + len(decisions)}"
          + (f" (TARGET at 1x, {verdict})" if speed == 1 else ""))  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", default="S001,S002,S003,S004,S005,S006,S007,S008,S009")
    parser.add_argument("--every", type=int, default=10, help="re-select every N trials")
    parser.add_argument("--rt-seconds", type=float, default=60.0,
                        help="seconds of real-time replay for the step times")  # fmt: skip
    parser.add_argument("--rt-person", default="S002")
    parser.add_argument("--speed", type=float, nargs="+", default=[1.0, 4.0],
                        help="replay speeds of the step-time part (x real time)")  # fmt: skip
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-steps", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"{DATA} is absent: nothing to measure (the benchmark needs ../shared/data)")
        return
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    if not args.skip_steps:
        for speed in args.speed:
            step_times_during_refits(args.rt_person, args.rt_seconds, speed)
    if not args.skip_accuracy:
        accuracy_table(args.people.split(","), args.every)


if __name__ == "__main__":
    main()

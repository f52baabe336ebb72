"""A model that adapts during the session: refits, versions, and every way a refit fails."""

from __future__ import annotations

import os
import signal
import types
from pathlib import Path

import numpy as np
import pytest
from sblr_rt.calibration import calibrate
from sblr_rt.calibration.adapt import Adapter, trial_recording
from sblr_rt.calibration.refit import (
    RefitError,
    TooFewTrials,
    labelled_recording,
    refit_model,
    version_path,
)

from sblr_rt.io.model_file import load_model
from sblr_rt.io.recording import Recording
from sblr_rt.online import OnlineLoop
from sblr_rt.online.tap import LabelledTrial
from sblr_rt.stream.ring_buffer import RingBuffer
from tests.calibrations import NO_SEARCH

SFREQ = 100.0
CH = [f"EEG{i:03d}" for i in range(6)]
FAST = dict(
    classes={"A": "left", "B": "right"},
    features="waveform",
    tmin=0.0,
    tmax=1.0,
    **NO_SEARCH,
)
DEADLINE = 180.0  # a spawned worker imports scikit-learn first; tests never assert timings


def _signal(n_trials, *, seed, labels=("A", "B"), gap=1.5, lead=2.0):
    """Continuous EEG with a class waveform after each cue: (data (n, ch), cue samples, values)."""
    rng = np.random.default_rng(seed)
    n = int((lead + gap * n_trials + 2.0) * SFREQ)
    data = rng.standard_normal((n, len(CH)))
    onsets = [int((lead + gap * k) * SFREQ) for k in range(n_trials)]
    values = [labels[k % len(labels)] for k in range(n_trials)]
    bump = np.sin(np.linspace(0, np.pi, int(SFREQ)))
    for i, v in zip(onsets, values, strict=True):
        data[i : i + bump.size, 0 if v == labels[0] else 1] += 2.0 * bump
    return data, onsets, values


def _recording(n_trials=18, seed=0):
    data, onsets, values = _signal(n_trials, seed=seed)
    return Recording(
        data=data.T, sfreq=SFREQ, ch_names=CH, marker_times=np.array(onsets) / SFREQ,
        marker_values=values, source="synthetic", unit="uV",
    )  # fmt: skip


@pytest.fixture(scope="module")
def calibration():
    rec = _recording()
    return rec, calibrate(rec, **FAST)


def _trial(rec, k, label, *, index=0):
    """The k-th cue of ``rec`` as a LabelledTrial (2 s of samples before it)."""
    i = round(rec.marker_times[k] * SFREQ)
    seg = rec.data[:, i - 200 : i + 100]
    return LabelledTrial(
        data=seg, timestamps=(np.arange(i - 200, i + 100)) / SFREQ, ch_names=CH, sfreq=SFREQ,
        t_cue=i / SFREQ, cue=label, label=label, predicted=label, model_version=0, index=index,
    )  # fmt: skip


def test_warm_refit_is_a_saved_version_naming_its_trials(calibration, tmp_path):
    rec, model = calibration
    more = _recording(seed=1)
    trials = [
        trial_recording(_trial(more, k, "left" if k % 2 == 0 else "right"), "uV") for k in range(6)
    ]
    recs = [labelled_recording(rec, {"A": "left", "B": "right"}), *trials]
    new = refit_model(model, recs, version=1, folder=tmp_path, info={"trials": [0, 1]})
    meta = new.metadata["adaptation"]
    assert meta["version"] == 1 and meta["parent"] == 0 and not meta["reselected"]
    assert meta["trials"] == [0, 1] and meta["n_epochs"] == 18 + 6
    assert new.classes == model.classes and new.features == model.features
    assert new.estimator.get_params()["mu2"] == model.estimator.get_params()["mu2"]
    loaded = load_model(version_path(tmp_path, 1))
    assert loaded.metadata["adaptation"]["version"] == 1
    raw = np.stack([rec.data[:, i : i + model.n_times_raw] for i in (200, 350)])
    np.testing.assert_allclose(loaded.decision_function(raw), new.decision_function(raw))
    again = refit_model(model, recs, version=2, reselect=True)
    assert again.metadata["adaptation"]["reselected"] and "selection" in again.metadata


def test_a_warm_refit_starts_from_the_current_factors(calibration):
    # On the very epochs the model was fitted on, a refit that starts from its factors
    # is already at a stationary point: it stops at once, where a cold start iterates.
    from sblr_rt.calibration.epochs import extract_epochs

    rec, model = calibration
    recs = [labelled_recording(rec, {"A": "left", "B": "right"})]
    warm = refit_model(model, recs, version=1)
    epochs = extract_epochs(recs, warm.preprocessor, {"left": "left", "right": "right"})
    cold = load_model_copy(model.estimator).set_params(warm_start=False)
    cold.fit(warm.preprocessor.scale(epochs.Z), epochs.y)
    assert warm.estimator.n_iter_ <= 2 < cold.n_iter_, (warm.estimator.n_iter_, cold.n_iter_)


def test_refit_failures_raise_refit_error(calibration):
    rec, model = calibration
    only_left = [trial_recording(_trial(rec, k, "left"), "uV") for k in (0, 2, 4, 6)]
    with pytest.raises(TooFewTrials, match="too few trials of a class"):  # the session waits
        refit_model(model, only_left, version=1)
    with pytest.raises(RefitError, match="at least 3 per class"):  # re-selection: the CV's
        refit_model(model, [*only_left[:1], trial_recording(_trial(rec, 1, "right"), "uV")],
                    version=1, reselect=True, min_per_class=1)  # fmt: skip
    heavy = load_model_copy(model)
    heavy.estimator.set_params(mu1=1e6, nu1=1e6)  # penalties that zero every factor
    recs = [labelled_recording(rec, {"A": "left", "B": "right"})]
    with pytest.raises(RefitError, match="degenerate fit"):
        refit_model(heavy, recs, version=1)


def load_model_copy(model):
    import copy

    return copy.deepcopy(model)


# --------------------------------------------------------------------------------------
# The adapter beside a loop on in-memory collaborators (its worker is a real process).
class _Source:
    def __init__(self, data, times):
        self.data, self.timestamps = data, times
        self.ch_names, self.sfreq, self.n_channels, self.name = CH, SFREQ, len(CH), "mem"
        self.buffer = RingBuffer(len(CH), len(data))
        self.sent = 0

    def send(self, n):
        stop = min(self.sent + n, len(self.data))
        self.buffer.push(self.data[self.sent : stop], self.timestamps[self.sent : stop])
        self.sent = stop

    def status(self):
        return {"connected": True, "effective_sfreq": SFREQ}


class _Markers:
    def __init__(self):
        self.queue = []

    def pop(self):
        out, self.queue = self.queue, []
        return out


def _session(model, labels, *, seed=2, cues=None):
    data, onsets, values = _signal(len(labels), seed=seed, labels=labels)
    times = 100.0 + np.arange(len(data)) / SFREQ
    source, markers = _Source(data, times), _Markers()
    clock = types.SimpleNamespace(t=times[0])
    loop = OnlineLoop(
        model, source, markers=markers, clock=lambda: clock.t, mode="trial", hop=0.0,
        cues=cues, keep_trials=True,
    )  # fmt: skip
    loop.start(thread=False)
    state = types.SimpleNamespace(
        loop=loop, source=source, markers=markers, clock=clock, onsets=onsets, values=values
    )
    return state


def _play(s, until):
    while s.source.sent < until:
        start = s.source.sent
        s.source.send(10)
        s.markers.queue += [
            (s.source.timestamps[i], v)
            for i, v in zip(s.onsets, s.values, strict=True)
            if start <= i < s.source.sent
        ]
        s.clock.t = s.source.timestamps[s.source.sent - 1]
        s.loop.step_once()


def _until_idle(adapter, s):
    assert adapter.finish(DEADLINE), "the refit did not finish"
    _play(s, s.source.sent + 10)  # one more step: the decision thread adopts the version


def _die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def _die_while_saving(*args, **kwargs):
    def rename(src, dst):  # killed once the data is written, before the rename
        Path(kwargs["folder"], "died-while-saving").write_text(str(src))
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = rename  # in the worker process only
    return refit_model(*args, **kwargs)


def test_the_session_switches_to_each_new_version(calibration, tmp_path):
    rec, model = calibration
    s = _session(model, ["A", "B", "nothing", "A", "B", "A"], cues="A,B,nothing")
    adapter = Adapter(s.loop, model, folder=tmp_path, calibration=[rec], every=4)
    assert version_path(tmp_path, 0).exists()  # the starting model is version 0
    adapter.start(thread=False)  # the test drives the steps: no timing
    try:
        _play(s, s.onsets[1] + 150)
        adapter.step()
        assert adapter.status()["n_trials"] == 2 and adapter.status()["refit"].startswith("run")
        _until_idle(adapter, s)
        assert s.loop.model_version == 1 and adapter.status()["version"] == 1
        _play(s, s.onsets[-1] + 150)
        adapter.step()
        _until_idle(adapter, s)
    finally:
        adapter.stop()
    status = adapter.status()
    assert status["n_unlabelled"] == 1 and status["n_trials"] == 5 and status["n_failures"] == 0
    assert s.loop.model_version == 2 and s.loop.snapshot().adaptation["version"] == 2
    v2 = load_model(version_path(tmp_path, 2)).metadata["adaptation"]
    assert v2["reselected"] and v2["n_session_trials"] == 5  # 4 trials since: re-selected
    assert [t["cue"] for t in v2["trials"]] == ["A", "B", "A", "B", "A"]
    versions = [d["model_version"] for d in s.loop.pop_decisions()]
    assert versions == [0, 0, 1, 1, 1, 1]  # the 2nd refit used them all: no trial left


@pytest.mark.parametrize("job", [_die, _die_while_saving])
def test_a_killed_refit_is_survived(calibration, tmp_path, job):
    rec, model = calibration
    s = _session(model, ["A", "B", "A", "B"])
    adapter = Adapter(s.loop, model, folder=tmp_path, calibration=[rec], job=job)
    adapter.start(thread=False)
    try:
        _play(s, s.onsets[1] + 150)
        adapter.step()
        _until_idle(adapter, s)
        status = adapter.status()
        assert status["refit"] == "failed" and "died" in status["last_error"]
        assert s.loop.snapshot().adaptation["n_failures"] == 1
        assert not version_path(tmp_path, 1).exists()  # never half-written
        if job is _die_while_saving:  # it did die mid-write; its temporary file is gone
            assert Path((tmp_path / "died-while-saving").read_text()).name.endswith(".tmp")
            assert not list(tmp_path.glob(".v0001.sblr.npz.*.tmp"))
        adapter.job = refit_model  # the next trial: a new worker, a good refit
        _play(s, s.onsets[-1] + 150)
        adapter.step()
        _until_idle(adapter, s)
    finally:
        adapter.stop()
    assert s.loop.model_version == 1 and load_model(version_path(tmp_path, 1)).classes
    decisions = s.loop.pop_decisions()
    assert len(decisions) == 4 and decisions[0]["model_version"] == 0


def test_warm_up_waits_for_trials_as_a_status_not_a_failure(calibration, tmp_path, caplog):
    # A session adapting from its own trials alone needs min_per_class of each class: the
    # first trials are the normal warm-up, shown as waiting, logged at INFO, no refit run.
    _, model = calibration
    s = _session(model, ["A", "A", "A", "B", "B", "B"])
    adapter = Adapter(s.loop, model, folder=tmp_path)  # no calibration runs: trials only
    adapter.start(thread=False)
    try:
        with caplog.at_level("INFO", logger="sblr_rt"):
            _play(s, s.onsets[2] + 150)
            adapter.step()
            _until_idle(adapter, s)
        status = adapter.status()
        assert status["refit"] == "waiting for 3 trials per class (left 3, right 0)", status
        assert status["n_failures"] == 0 and status["last_error"] is None
        assert adapter.history == []  # no refit submitted
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
        assert "Refit waits for trials" in caplog.text
        assert s.loop.model_version == 0 and s.loop.snapshot().adaptation["n_failures"] == 0
        _play(s, s.onsets[-1] + 150)
        adapter.step()
        _until_idle(adapter, s)
    finally:
        adapter.stop()
    assert s.loop.model_version == 1 and adapter.status()["n_failures"] == 0
    assert len(s.loop.pop_decisions()) == 6  # every trial decided, through the warm-up


def _adapt_all(model, folder, job):
    """Decide six trials (3 per class) with an adapter running ``job``; return its status."""
    s = _session(model, ["A", "B", "A", "B", "A", "B"])
    adapter = Adapter(s.loop, model, folder=folder, job=job)
    adapter.start(thread=False)
    try:
        _play(s, s.onsets[-1] + 150)
        adapter.step()
        _until_idle(adapter, s)
    finally:
        adapter.stop()
    assert s.loop.model_version == 0  # the current model keeps deciding
    return adapter.status()


def test_a_refit_whose_trials_are_rejected_waits_too(calibration, tmp_path):
    # The worker's own count (after rejection) says too few: waiting, not a failure.
    status = _adapt_all(calibration[1], tmp_path, _too_few)
    assert status["refit"].startswith("waiting for 3 trials per class"), status
    assert status["n_failures"] == 0


def test_a_failed_refit_keeps_the_current_model(calibration, tmp_path):
    status = _adapt_all(calibration[1], tmp_path, _degenerate)
    assert status["refit"] == "failed" and "degenerate" in status["last_error"]
    assert status["n_failures"] == 1


def _too_few(model, recordings, **kwargs):
    from sblr_rt.calibration.refit import TooFewTrials

    raise TooFewTrials({"left": 3, "right": 2}, 3)


def _degenerate(model, recordings, **kwargs):
    raise RefitError("degenerate fit: the factors are all zero")


def test_a_session_started_from_a_version_continues_its_counter_in_a_new_folder(
    calibration, tmp_path, monkeypatch
):
    from sblr_rt.io.model_file import load_model, save_model

    _, model = calibration
    old = tmp_path / "sessions" / "old" / "versions"
    old.mkdir(parents=True)
    for k in (3, 4):
        v = load_model_copy(model)
        v.metadata = {**(v.metadata or {}), "adaptation": {"version": k, "parent": k - 1}}
        save_model(v, old / f"v{k:04d}.sblr.npz")
    before = {p.name: p.read_bytes() for p in old.iterdir()}
    start = load_model(old / "v0003.sblr.npz")
    monkeypatch.chdir(tmp_path)
    adapter = Adapter.for_model_file(object(), start, old / "v0003.sblr.npz", calibration=[])
    # a new session folder of its own, the counter continuing from the file's version
    assert adapter.folder.parent.parent == Path("sessions") and adapter.version == 3
    assert sorted(p.name for p in adapter.folder.iterdir()) == ["v0003.sblr.npz"]
    assert {p.name: p.read_bytes() for p in old.iterdir()} == before  # left unchanged
    # a folder holding another session's versions is refused, never written over
    with pytest.raises(ValueError, match=r"no model versions but this session's \(v0003\), "
                       r"got v0004.sblr.npz"):  # fmt: skip
        Adapter(object(), start, folder=old)


def test_the_refit_worker_runs_below_the_session(tmp_path):
    # The lowest niceness and (Linux) the batch policy, so that the decision thread, on
    # waking, takes the CPU from a refit at once; never above the session's own.
    executor = Adapter._new_executor()
    try:
        nice = executor.submit(os.nice, 0).result(timeout=60)
        policy = (
            executor.submit(os.sched_getscheduler, 0).result(timeout=60)
            if hasattr(os, "sched_getscheduler")
            else None
        )
    finally:
        executor.shutdown(wait=True)
    assert nice == max(19, os.nice(0))
    if policy is not None and hasattr(os, "SCHED_BATCH"):
        assert policy == os.SCHED_BATCH


def test_a_model_calibrated_with_a_renaming_adapts_on_its_own_labels(tmp_path, monkeypatch):
    import dataclasses

    import sblr_rt.io

    rec = _recording()
    cap = dataclasses.replace(rec, ch_names=[f"CAP {c}" for c in CH])
    model = calibrate(cap, rename_channels={f"CAP {c}": c for c in CH}, **FAST)
    assert model.ch_names == CH
    # the adapter reads the model's own run as its calibration did: renamed
    source = tmp_path / "cap_raw.fif"
    source.touch()
    model.metadata["sources"] = [str(source)]
    monkeypatch.setattr(sblr_rt.io, "read_recording", lambda path: cap)
    adapter = Adapter.for_model_file(object(), model, tmp_path / "m.sblr.npz",
                                     folder=tmp_path / "versions")  # fmt: skip
    assert [r.ch_names for r in adapter.calibration] == [CH]
    # a refit on those and the session's trials (the model's labels) keeps the renaming
    trials = [trial_recording(_trial(rec, k, ("left", "right")[k % 2]), "uV") for k in range(4)]
    for reselect in (False, True):  # a warm refit, and a new selection (calibrate again)
        new = refit_model(model, [*adapter.calibration, *trials], version=1, reselect=reselect)
        assert new.ch_names == CH
        assert new.metadata["config"]["rename_channels"] == {f"CAP {c}": c for c in CH}

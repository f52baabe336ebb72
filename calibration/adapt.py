"""A model that adapts during the session: each labelled trial joins the calibration set.

:class:`Adapter` runs beside an :class:`~sblr_rt.online.OnlineLoop` built with
``keep_trials=True``, on a thread of its own:

1. it takes the trials the loop decided (:meth:`OnlineLoop.pop_trials`); a trial whose
   cue names a class joins the calibration set (a cue with no class is logged and left
   out);
2. when no refit runs and new trials arrived, it submits one to a **worker process**
   (``concurrent.futures`` with a ``spawn`` context, BLAS single-threaded, the lowest
   priority and the batch policy, and, where the OS allows, half the CPUs):
   a warm refit with the current path and penalties, or a whole re-selection once
   ``every`` trials arrived since the last (:func:`~sblr_rt.calibration.refit.refit_model`);
3. the worker saves the new version (``v0001.sblr.npz``, ... in ``folder``; the model-file
   format with ``metadata["adaptation"]``: version, parent, trials used), and the adapter
   hands it to the loop (:meth:`OnlineLoop.swap_model`), which switches between two
   decisions.

The decision thread never waits: the refit's CPU is in the other process, and the new
model's streaming state is prepared on the adapter's thread. A refit that fails (too few
trials of a class, a degenerate fit) or a worker that dies mid-refit is logged and shown
in the loop's snapshot (``Telemetry.adaptation``); the current model keeps deciding and the
next trial triggers a new attempt (a dead worker process is replaced).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from sblr_rt.calibration.assembly import SESSION_TRIAL_SOURCE
from sblr_rt.calibration.refit import (
    RefitError,
    TooFewTrials,
    labelled_recording,
    refit_model,
    version_path,
)

from sblr_rt.io.model_file import save_model
from sblr_rt.io.recording import Recording
from sblr_rt.lifetime import watch_parent
from sblr_rt.online.run_info import RunInfo

logger = logging.getLogger("sblr_rt.calibration")

__all__ = ["SESSIONS", "Adapter", "trial_recording"]


#: Where a session keeps its versions by default: a new session folder in the working
#: folder's ``sessions/`` (:func:`~sblr_rt.online.session.new_session_folder`), ``versions/``
#: in it.
SESSIONS = Path("sessions")


def _later_versions(folder: Path, version: int) -> list[str]:
    """Return the names of the version files in ``folder`` other than ``version``'s."""
    own = version_path(folder, version).name
    return sorted(p.name for p in folder.glob("v*.sblr.npz") if p.name != own)


def trial_recording(trial, unit: str = "V") -> Recording:
    """Return a decided trial as a one-marker recording (marker = its class label).

    Parameters
    ----------
    trial : LabelledTrial
        From :meth:`OnlineLoop.pop_trials`, with a class label.
    unit : str
        The samples' unit (the model's).

    Returns
    -------
    recording : Recording
    """
    return Recording(
        data=trial.data,
        sfreq=trial.sfreq,
        ch_names=trial.ch_names,
        marker_times=[trial.cue_offset],
        marker_values=[trial.label],
        source=f"{SESSION_TRIAL_SOURCE} {trial.index}",
        unit=unit,
    )


#: The refit worker's niceness: the lowest priority, so that a decision thread that wakes
#: takes the CPU from it at once.
WORKER_NICE = 19


def _worker_init() -> None:
    """Keep the worker off the decision thread's core and below its priority.

    The lowest priority (``WORKER_NICE``) and, on Linux, the batch policy, under which
    the scheduler treats the refit as a background job that never preempts a waking
    thread; one CPU in two (the last ones). And end it with the session: it imported the
    package before multiprocessing named its parent, so the package's own watch did not
    start (:mod:`sblr_rt.lifetime`).
    """
    watch_parent()
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    _lower_priority()
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) > 1:  # the decision thread runs wherever; the refit takes the last CPUs
        os.sched_setaffinity(0, cpus[len(cpus) // 2 :])


def _lower_priority() -> None:
    """Give this process the lowest priority the OS allows without privileges."""
    try:
        os.nice(max(0, WORKER_NICE - os.nice(0)))
    except OSError:  # pragma: no cover - not allowed here
        pass
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_BATCH"):
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:  # pragma: no cover - not allowed here
            pass


#: In the worker process: the calibration set of each session, as shipped so far. Only
#: the recordings a worker has not seen are sent with a refit, so a refit's submission
#: pickles one trial (~0.5 MB), not the whole set, on the session's process.
_RECEIVED: dict[str, list] = {}


def _in_worker(job, session: str, new_recordings, model, **kwargs):
    from threadpoolctl import threadpool_limits

    recordings = _RECEIVED.setdefault(session, [])
    recordings.extend(new_recordings)
    with threadpool_limits(limits=1):
        return job(model, list(recordings), **kwargs)


class Adapter:
    """Refit the loop's model in the background as labelled trials arrive.

    Parameters
    ----------
    loop : OnlineLoop
        A loop in trial mode built with ``keep_trials=True``.
    model : BCIModel
        The loop's current model (version ``metadata["adaptation"]["version"]``, else 0).
    folder : path
        Where the versions are saved (created if missing): a folder of this session alone.
        The starting model is saved there too when its version file is absent.
    calibration : sequence of Recording
        Calibration runs that stay in the calibration set (markers mapped with the
        model's configuration); empty: the session's trials only.
    every : int
        Re-select the feature path and penalties once this many trials arrived since
        the last re-selection; 0: never (warm refits only).
    min_per_class : int
        Fewest epochs of each class a refit accepts.
    seconds_before : float
        Seconds of samples kept before each trial's raw epoch.
    poll : float
        Seconds between looks at the loop's trials.
    job : callable
        The function the worker runs (default :func:`refit_model`, under one BLAS
        thread); same signature.

    Attributes
    ----------
    history : list of dict
        One entry per refit submitted: ``version``, ``reselect``, ``n_session_trials``,
        ``started`` and ``finished`` (the loop's clock), ``error`` (None if it succeeded).
    """

    def __init__(
        self,
        loop,
        model,
        *,
        folder,
        calibration=(),
        every: int = 10,
        min_per_class: int = 3,
        seconds_before: float = 2.0,
        poll: float = 0.05,
        job=None,
    ) -> None:
        if int(every) < 0:
            raise ValueError(f"'every' must be >= 0 trials, got {every!r}.")
        self.loop, self.model = loop, model
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        run_info = RunInfo.from_model(model)
        others = _later_versions(self.folder, run_info.version)
        if others:  # another session's: its files are never written over
            raise ValueError(
                f"'folder' must hold no model versions but this session's (v"
                f"{run_info.version:04d}), got {', '.join(others[:3])}"
                f"{', ...' if len(others) > 3 else ''} in {self.folder}: choose a new folder"
            )
        class_map = dict(run_info.classes) or None
        self.calibration = [labelled_recording(r, class_map) for r in calibration]
        self.trials: list = []
        self._recordings = list(self.calibration)  # the calibration set, in order
        self._session, self._shipped = uuid.uuid4().hex, 0
        self.every, self.min_per_class = int(every), int(min_per_class)
        self.seconds_before, self.poll = float(seconds_before), float(poll)
        self.job = refit_model if job is None else job
        self.version = self.start_version = run_info.version
        # A model of unknown unit: so are its trials, and a refit rejects what the loop
        # refused, no more (the bound of a measurement depends on the unit).
        self._unit = run_info.unit or "unknown"
        self._since_reselect = 0
        self._attempted = 0  # session trials in the last refit submitted
        self._pending = None  # (future, version, n_trials, reselect, t_submit)
        self._executor = None
        self._thread = None
        self._stop = threading.Event()
        self.history: list[dict] = []
        self._status = {
            "version": self.version,
            "n_trials": 0,
            "n_unlabelled": 0,
            "refit": "idle",
            "n_refits": 0,
            "n_failures": 0,
            "last_error": None,
            "last_seconds": None,
        }
        path = version_path(self.folder, self.version)
        if not path.exists():
            save_model(model, path)

    # ------------------------------------------------------------------------------------
    def start(self, *, thread: bool = True) -> Adapter:
        """Start the worker process and the adapter's thread.

        Parameters
        ----------
        thread : bool
            Start the thread; False leaves the calls to :meth:`step` to the caller.
        """
        self._executor = self._new_executor()
        self._stop.clear()
        if thread:
            self._thread = threading.Thread(target=self._run, name="sblr-rt-adapt", daemon=True)
            self._thread.start()
        self._publish()
        return self

    def stop(self) -> None:
        """Stop the thread and the worker (a running refit is abandoned)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
            self._thread = None
        executor, self._executor = self._executor, None
        if executor is not None:
            # A refit may take minutes: end the worker we started instead of waiting.
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                if process.is_alive():
                    process.terminate()
            executor.shutdown(wait=False, cancel_futures=True)

    def finish(self, timeout: float) -> bool:
        """Adapt to every trial taken so far: wait for the refits they need to land.

        For the end of a session whose last trials should reach the saved model: the
        refit in flight, and one more when trials arrived after it was submitted, are
        waited for at most ``timeout`` seconds (a failed refit counts as landed: the
        current version goes on deciding). Call it on a started adapter; :meth:`stop`
        still ends the worker.

        Parameters
        ----------
        timeout : float
            Seconds to wait at the most.

        Returns
        -------
        done : bool
            True when no refit is running and every trial taken was in one (or waits
            for trials of a class); False when ``timeout`` passed first.
        """
        end = time.monotonic() + float(timeout)
        while True:
            if self._thread is None:  # started with thread=False: the caller steps
                self.step()
            if self._pending is None and self._attempted >= len(self.trials):
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(self.poll)

    def __enter__(self) -> Adapter:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def status(self) -> dict:
        """Return the adaptation's status (also in the loop's ``Telemetry.adaptation``)."""
        return dict(self._status)

    @classmethod
    def for_model_file(
        cls, loop, model, model_file, *, folder=None, calibration=None, every: int = 10
    ) -> Adapter:
        """Return the adapter of a session started from a model file (``--adapt``).

        Parameters
        ----------
        loop : OnlineLoop
            A loop in trial mode built with ``keep_trials=True``.
        model : BCIModel
            The model loaded from ``model_file``.
        model_file : str | Path
            Its file.
        folder : str | Path | None
            Where versions go; None: ``versions/`` in a new session folder in
            :data:`SESSIONS` (:func:`~sblr_rt.online.session.new_session_folder`).
        calibration : sequence of str | Path | None
            Calibration recordings kept in the calibration set; None: the model's own
            calibration runs (``metadata["sources"]``) that still exist, their channels
            renamed as the calibration did (the configuration's ``rename_channels``).
        every : int
            Re-selection every this many trials (0: never).

        Returns
        -------
        adapter : Adapter
            Not started.
        """
        from sblr_rt.io import read_recording

        rename = None
        if calibration is None:
            record = model.record
            calibration = [f for f in record.sources if Path(f).is_file()]
            # the model's own runs, read as its calibration read them
            rename = (record.config or {}).get("rename_channels")
        if folder is None:
            from sblr_rt.online.session import new_session_folder

            folder = new_session_folder(SESSIONS) / "versions"
        return cls(
            loop,
            model,
            folder=folder,
            calibration=[read_recording(f).rename_channels(rename) for f in calibration],
            every=every,
        )

    # ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as err:  # the adapter must not take the session down
                logger.exception("The adaptation step failed.")
                self._failed(f"{type(err).__name__}: {err}", refit=False)
            self._stop.wait(self.poll)

    def step(self) -> None:
        """Take new trials, collect a finished refit, submit the next one if due."""
        self.add_trials(self.loop.pop_trials(seconds_before=self.seconds_before))
        if self._pending is not None and self._pending[0].done():
            self._collect()
        if self._pending is None and len(self.trials) > self._attempted:
            counts = self._class_counts()
            if min(counts.values()) < self.min_per_class:
                self._attempted = len(self.trials)  # no refit until a trial arrives
                self._wait(counts)
            else:
                self._submit()

    def _class_counts(self) -> dict:
        """Return the labelled trials per class in the calibration set (runs and session)."""
        counts = {str(c): 0 for c in self.model.classes}
        for recording in self.calibration:
            for value in recording.marker_values:
                if value in counts:
                    counts[value] += 1
        for trial in self.trials:
            counts[trial.label] = counts.get(trial.label, 0) + 1
        return counts

    def _wait(self, counts: dict) -> None:
        """Say that a refit waits for trials of a class: a status, not a failure."""
        have = ", ".join(f"{c} {n}" for c, n in counts.items())
        self._status["refit"] = f"waiting for {self.min_per_class} trials per class ({have})"
        logger.info(
            "Refit waits for trials: %d per class needed, %s so far; version %d decides.",
            self.min_per_class,
            have,
            self.version,
        )
        self._publish()

    def add_trials(self, trials) -> None:
        """Add the labelled trials to the calibration set; log those with no class."""
        for trial in trials:
            if trial.label is None:
                self._status["n_unlabelled"] += 1
                logger.warning(
                    "Trial %d: cue %r names no class of the model; not used to adapt.",
                    trial.index,
                    trial.cue,
                )
                continue
            self.trials.append(trial)
            self._recordings.append(trial_recording(trial, self._unit))
            self._since_reselect += 1
        self._status["n_trials"] = len(self.trials)
        self._publish()

    def _submit(self) -> None:
        version = self.version + 1
        n = self._attempted = len(self.trials)  # a failed set is retried with more trials
        reselect = self.every > 0 and self._since_reselect >= self.every
        if reselect:
            self._since_reselect = 0
        new, self._shipped = self._recordings[self._shipped :], len(self._recordings)
        info = {
            "n_session_trials": n,
            "trials": [
                {"index": t.index, "cue": t.cue, "label": t.label, "t_cue": t.t_cue}
                for t in self.trials
            ],
            "n_calibration_runs": len(self.calibration),
        }
        future = self._executor.submit(
            _in_worker,
            self.job,
            self._session,
            new,
            self.model,
            version=version,
            reselect=reselect,
            folder=self.folder,
            min_per_class=self.min_per_class,
            info=info,
        )
        self._pending = (future, version, n, reselect, time.monotonic())
        self.history.append(
            {"version": version, "reselect": reselect, "n_session_trials": n}
            | {"started": self.loop.clock(), "finished": None, "error": None}
        )
        self._status["refit"] = f"running v{version} ({'re-selection' if reselect else 'warm'})"
        self._publish()

    def _collect(self) -> None:
        future, version, n, reselect, t0 = self._pending
        self._pending = None
        self.history[-1]["finished"] = self.loop.clock()
        try:
            model = future.result()
        except BrokenProcessPool:
            # A worker killed while saving leaves its temporary file (never the version).
            for tmp in self.folder.glob(f".{version_path(self.folder, version).name}.*.tmp"):
                tmp.unlink(missing_ok=True)
            self._executor = self._new_executor()
            self._shipped = 0  # the new worker has received nothing
            self._failed(f"v{version}: the refit process died; restarted it")
            return
        except TooFewTrials as err:  # trials rejected in the refit: wait for more
            self.history[-1]["error"] = str(err)
            self._wait(err.counts)
            return
        except RefitError as err:
            self._failed(f"v{version}: {err}")
            return
        except Exception as err:
            self._failed(f"v{version}: {type(err).__name__}: {err}")
            return
        self.loop.swap_model(model, version=version)
        self.model, self.version = model, version
        self._status.update(
            version=version,
            refit="idle",
            n_refits=self._status["n_refits"] + 1,
            last_seconds=time.monotonic() - t0,
        )
        logger.info(
            "Model version %d (%s, %d session trials) in %.1f s; saved to %s.",
            version,
            "re-selected" if reselect else "warm refit",
            n,
            time.monotonic() - t0,
            version_path(self.folder, version),
        )
        self._publish()

    def _failed(self, message: str, *, refit: bool = True) -> None:
        if refit:
            self.history[-1]["error"] = message
        logger.error("Refit failed, still deciding with version %d: %s", self.version, message)
        self._status.update(
            refit="failed",
            n_failures=self._status["n_failures"] + 1,
            last_error=message,
        )
        self._publish()

    def _publish(self) -> None:
        self.loop.set_adaptation(self.status())

    @staticmethod
    def _new_executor() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
        )

r"""Play a recording (or any sample source) as LSL EEG + marker streams in real time.

Timestamps
----------
Sample ``k`` pushed since the start (counting on across loops) is stamped

.. math:: t_k = t_0 + k / (f_s \cdot \mathrm{speed})

where :math:`t_0` is :func:`sblr_rt.stream.clock.local_clock` at the start, and it is
pushed as soon as that time has passed (in chunks of about ``chunk_seconds``). A marker is
stamped with exactly the timestamp of its sample. So:

- at ``speed=1`` the streams look like a live amplifier and cue program: samples arrive
  when their timestamp is "now", and latency (``local_clock() - timestamp``) means what it
  means live;
- at ``speed=X`` the timestamps still follow the LSL clock (data never lie in the future,
  latency figures stay meaningful), spaced ``1 / (sfreq * X)`` apart. The stream's nominal
  rate stays the file's ``sfreq``, since that is the rate of the *data* (filters and the
  model's time grid depend on it). Consumers must therefore count samples, not seconds,
  to cut windows, and align a marker to its sample by timestamp (the marker's timestamp
  equals its sample's, at every speed; LSL's dejittering follows the actual spacing within
  a few samples). The effective rate a consumer measures from timestamps is
  ``sfreq * speed``.

A virtual clock running at ``1 / sfreq`` spacing but pushed X times faster would put
timestamps ever further into the future, and every latency or "age of the newest sample"
figure would be meaningless, so it is not used.
"""

from __future__ import annotations

import logging
import math
import numbers
import threading
import time
from pathlib import Path

import numpy as np

from sblr_rt.io.reading import Recording, read_recording

logger = logging.getLogger("sblr_rt.playback.stream_player")

_UNITS = {"V": "volts", "uV": "microvolts", "µV": "microvolts", "mV": "millivolts"}


class RecordingReader:
    """Serve a :class:`Recording` sample by sample, optionally looping.

    Parameters
    ----------
    recording : Recording
        What to serve.
    loop : bool
        Start again at the first sample after the last one.

    Notes
    -----
    Same interface as :class:`sblr_rt.playback.simulator.Simulator`: ``ch_names``, ``sfreq`` and
    ``read(n) -> (data (n, n_channels), [(absolute sample index, marker), ...])``; the
    absolute index counts on across loops, so marker ``j`` of loop ``m`` is at
    ``m * n_samples + marker_samples[j]``.
    """

    def __init__(self, recording: Recording, *, loop: bool = False) -> None:
        if not isinstance(recording, Recording):
            raise TypeError(f"'recording' must be a Recording, got {type(recording).__name__}")
        if recording.n_samples == 0:
            raise ValueError(f"recording '{recording.source}' has no samples, got 0")
        self.recording = recording
        self.ch_names = list(recording.ch_names)
        self.sfreq = recording.sfreq
        self.loop = bool(loop)
        self._data = np.ascontiguousarray(recording.data.T)  # (n_samples, n_channels)
        self._markers = np.clip(recording.marker_samples, 0, recording.n_samples - 1)
        self._pos = 0  # absolute index of the next sample

    @property
    def n_read(self) -> int:
        """Number of samples served so far (across loops)."""
        return self._pos

    @property
    def remaining(self) -> float:
        """Samples left before the end (``inf`` when looping)."""
        return math.inf if self.loop else max(0, self.recording.n_samples - self._pos)

    def read(self, n_samples: int) -> tuple[np.ndarray, list[tuple[int, str]]]:
        """Return up to ``n_samples`` next samples and the markers among them.

        Parameters
        ----------
        n_samples : int
            How many samples; fewer are returned at the end of a non-looping recording.

        Returns
        -------
        data : ndarray, shape (n, n_channels)
            Samples (a view when they do not wrap around).
        markers : list of (int, str)
            ``(absolute sample index, value)`` of the markers within them.
        """
        total = self.recording.n_samples
        if not self.loop:
            n_samples = min(n_samples, total - self._pos)
        start, stop = self._pos, self._pos + max(0, n_samples)
        if stop - start <= 0:
            return self._data[:0], []
        first, last = start % total, (stop - 1) % total
        n_wraps = (stop - 1) // total - start // total
        if n_wraps == 0:
            data = self._data[first : last + 1]
        else:
            idx = np.arange(start, stop) % total
            data = self._data[idx]
        markers = []
        for lap in range(start // total, (stop - 1) // total + 1):
            base = lap * total
            for k in np.flatnonzero(
                (self._markers + base >= start) & (self._markers + base < stop)
            ):
                markers.append((int(self._markers[k] + base), self.recording.marker_values[k]))
        markers.sort(key=lambda m: m[0])
        self._pos = stop
        return data, markers


class StreamPlayer:
    """Push a sample reader to an EEG outlet and a marker outlet in real time.

    Parameters
    ----------
    reader : RecordingReader | sblr_rt.playback.simulator.Simulator
        Anything with ``ch_names``, ``sfreq``, ``n_read`` and ``read(n)`` as
        :class:`RecordingReader`.
    name : str
        EEG stream name; the marker stream is ``name + "-Markers"``.
    source_id : str
        EEG ``source_id``; the marker stream's is ``source_id + "-markers"``.
    speed : float
        Playback speed (> 0); see the module notes on timestamps.
    duration : float | None
        Stop after this many seconds of *data* (None: until the reader ends or stop()).
    chunk_seconds : float
        Wall-clock push period.
    dtype : str
        Sample format on the wire (``"float32"`` or ``"float64"``).
    unit : str
        Unit written to the channel metadata.
    markers : bool
        Create the marker outlet.
    wait_for_consumers : float
        Before starting the clock, wait up to this many seconds for an inlet on the EEG
        outlet and on the marker outlet (0: start at once).
    linger : float
        Seconds :meth:`run` waits after the last sample of a finite stream, so that the
        last chunks reach the inlets before the outlets are closed.

    Examples
    --------
    >>> from sblr_rt.io import read_recording  # doctest: +SKIP
    >>> rec = read_recording("recordings/physionet-eegmmidb-S001/S001R05.edf")  # doctest: +SKIP
    >>> player = StreamPlayer(RecordingReader(rec), name="r", source_id="r1")  # doctest: +SKIP
    >>> player.start().wait(10.0)  # doctest: +SKIP
    >>> player.stop()  # doctest: +SKIP
    """

    def __init__(
        self,
        reader,
        *,
        name: str,
        source_id: str,
        speed: float = 1.0,
        duration: float | None = None,
        chunk_seconds: float = 0.01,
        dtype: str = "float32",
        unit: str = "volts",
        markers: bool = True,
        wait_for_consumers: float = 0.0,
        linger: float = 0.5,
    ) -> None:
        for key, value in (("speed", speed), ("chunk_seconds", chunk_seconds)):
            if not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
                raise ValueError(f"'{key}' must be a positive number, got {value!r}")
        if duration is not None and not duration >= 0:
            raise ValueError(f"'duration' must be None or >= 0 seconds, got {duration!r}")
        if not wait_for_consumers >= 0:
            raise ValueError(
                f"'wait_for_consumers' must be >= 0 seconds, got {wait_for_consumers!r}"
            )
        self.reader = reader
        self.name = name
        self.source_id = source_id
        self.speed = float(speed)
        self.duration = duration
        self.chunk_seconds = float(chunk_seconds)
        self.dtype = dtype
        self.unit = unit
        self.markers = bool(markers)
        self.wait_for_consumers = float(wait_for_consumers)
        self.linger = float(linger)
        self.sfreq = float(reader.sfreq)
        self.t_start: float | None = None  #: LSL time of sample 0, once started
        self.n_pushed = 0  #: samples pushed so far
        self.n_markers = 0  #: markers pushed so far
        self._stop = threading.Event()
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._eeg = self._marker_outlet = None
        self._open()

    def _open(self) -> None:
        from sblr_rt.stream import EEGOutlet, MarkerOutlet

        self._eeg = EEGOutlet(
            name=self.name,
            ch_names=self.reader.ch_names,
            sfreq=self.sfreq,
            source_id=self.source_id,
            dtype=self.dtype,
            unit=self.unit,
            speed=self.speed,
        )
        if self.markers:
            self._marker_outlet = MarkerOutlet(
                name=f"{self.name}-Markers", source_id=f"{self.source_id}-markers"
            )

    # ------------------------------------------------------------------ public
    def run(self) -> int:
        """Stream in the calling thread until the end, ``duration`` or :meth:`stop`.

        Returns
        -------
        n_pushed : int
            Samples pushed.
        """
        from threadpoolctl import threadpool_limits

        from sblr_rt.stream import local_clock

        # OpenBLAS worker threads spin between the small products of a simulator block and
        # would burn a core for nothing
        with threadpool_limits(1):
            return self._run(local_clock)

    def _run(self, local_clock) -> int:
        try:
            self._wait_for_consumers()
            rate = self.sfreq * self.speed
            limit = math.inf if self.duration is None else round(self.duration * self.sfreq)
            t0 = self.t_start = local_clock()
            self._started.set()
            logger.info(
                "streaming %r (%s) at %g Hz x %g, markers on %r",
                self.name,
                self.source_id,
                self.sfreq,
                self.speed,
                f"{self.name}-Markers" if self.markers else None,
            )
            while not self._stop.is_set() and self.n_pushed < limit:
                due = int((local_clock() - t0) * rate) + 1  # samples whose time has come
                due = min(due, limit)
                requested = int(due - self.n_pushed)
                if requested > 0:
                    data, cues = self.reader.read(requested)
                    n = len(data)
                    if n:
                        stamps = t0 + np.arange(self.n_pushed, self.n_pushed + n) / rate
                        self._eeg.push_chunk(data, stamps)
                    if self._marker_outlet is not None:
                        # reader indices are absolute in the reader; place them in the chunk
                        first = self.reader.n_read - n
                        for index, value in cues:
                            stamp = t0 + (self.n_pushed + index - first) / rate
                            self._marker_outlet.push(value, stamp)
                            self.n_markers += 1
                    self.n_pushed += n
                    if n < requested:
                        break  # end of a non-looping recording
                delay = t0 + self.n_pushed / rate + self.chunk_seconds - local_clock()
                if delay > 0:
                    self._stop.wait(delay)
            logger.info("pushed %d samples and %d markers", self.n_pushed, self.n_markers)
            if not self._stop.is_set():
                # let the outlets' send threads deliver the tail before anyone closes them
                self._stop.wait(self.linger)
            return self.n_pushed
        finally:
            self._started.set()

    def start(self) -> StreamPlayer:
        """Stream from a background thread (see :meth:`run`).

        Returns
        -------
        self : StreamPlayer
            The player.
        """
        if self._thread is not None:
            raise RuntimeError("StreamPlayer already started; call stop() before starting again")
        self._thread = threading.Thread(target=self._run_thread, name="sblr-player", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background stream to end.

        Parameters
        ----------
        timeout : float | None
            Longest wait in seconds.

        Returns
        -------
        finished : bool
            True if streaming ended.
        """
        if self._thread is None:
            raise RuntimeError("StreamPlayer not started; call start() first")
        self._thread.join(timeout)
        self._raise_if_failed()
        return not self._thread.is_alive()

    @property
    def is_alive(self) -> bool:
        """Whether the background thread is streaming."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Stop streaming and close the outlets (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        if self._marker_outlet is not None:
            self._marker_outlet.close()
        if self._eeg is not None:
            self._eeg.close()
        self._raise_if_failed()

    def __enter__(self) -> StreamPlayer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ internals
    def _run_thread(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # re-raised on the next public call
            logger.exception("player %r stopped on an error", self.name)
            self._error = exc

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise RuntimeError(f"player {self.name!r} failed: {error}") from error

    def _wait_for_consumers(self) -> None:
        if self.wait_for_consumers <= 0:
            return
        from sblr_rt.stream import local_clock

        deadline = local_clock() + self.wait_for_consumers
        outlets = [self._eeg] + ([self._marker_outlet] if self._marker_outlet else [])
        for outlet in outlets:
            while not self._stop.is_set() and not outlet.have_consumers():
                left = deadline - local_clock()
                if left <= 0:
                    logger.warning("no consumer on %r; streaming anyway", outlet.name)
                    break
                outlet.wait_for_consumers(min(left, 0.1))


def hold_outlets(seconds: float) -> None:
    """Keep a finished stream's outlets open for ``seconds`` before the caller closes them.

    A consumer that closes its inlets before the outlets go away ends the session cleanly;
    an outlet vanishing under an open inlet is, to the consumer, a lost stream (liblsl
    reports an error and the online loop waits for the stream to return). Ctrl-C or
    SIGTERM ends the wait early.

    Parameters
    ----------
    seconds : float
        Longest wait (0: return at once).
    """
    if seconds > 0:
        time.sleep(seconds)


def replay(
    recording,
    *,
    name: str | None = None,
    source_id: str = "sblr-replay",
    speed: float = 1.0,
    loop: bool = False,
    duration: float | None = None,
    chunk_seconds: float = 0.01,
    dtype: str = "float32",
    wait_for_consumers: float = 0.0,
) -> StreamPlayer:
    """Prepare a :class:`StreamPlayer` for a recording (call ``run()`` or ``start()``).

    Parameters
    ----------
    recording : Recording | str | Path
        The recording or its file.
    name : str | None
        EEG stream name; the file's stem when None.
    source_id : str
        EEG ``source_id`` (markers: ``source_id + "-markers"``).
    speed, duration, chunk_seconds, dtype, wait_for_consumers
        See :class:`StreamPlayer`.
    loop : bool
        Start again at the beginning after the end.

    Returns
    -------
    player : StreamPlayer
        With its outlets open (discoverable) and not yet streaming.
    """
    if isinstance(recording, str | Path):
        recording = read_recording(recording)
    if name is None:
        name = Path(recording.source.split(" + ")[0]).stem or "SBLR-Replay"
    if not recording.has_markers:
        logger.warning("%s has no markers; the marker stream will stay silent", recording.source)
    return StreamPlayer(
        RecordingReader(recording, loop=loop),
        name=name,
        source_id=source_id,
        speed=speed,
        duration=duration,
        chunk_seconds=chunk_seconds,
        dtype=dtype,
        unit=_UNITS.get(recording.unit, recording.unit),
        wait_for_consumers=wait_for_consumers,
    )

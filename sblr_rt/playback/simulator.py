"""A simulated motor-imagery EEG source: deterministic generator and its LSL player.

:class:`Simulator` is pure numpy/scipy (no LSL): it produces a continuous multi-channel
signal and a cue paradigm, the same numbers for the same seed however it is read (in one
call or sample by sample). :func:`run_simulator` pushes it to LSL in real time.

The signal, in volts, is the sum of

- a 1/f ("pink") background per channel, spatially smoothed so neighbours correlate;
- an occipito-parietal alpha rhythm (about 10 Hz) with a slowly wandering amplitude;
- sensorimotor mu (about 11 Hz) and beta (about 22 Hz) rhythms over the left and right
  hand areas (C3, C4) and the foot area (Cz);
- white sensor noise;
- for each cue, a class-dependent spatio-temporal pattern over the matching motor cortex
  (left hand -> C4 area, right hand -> C3 area, feet -> Cz area): an event-related
  desynchronisation (mu/beta power drop) during the imagery period, and a slow negative
  potential peaking about 0.8 s after the cue, both focused on that area.

Cues follow a seeded random, balanced order: each block of ``4 * n_classes`` trials holds
every class four times. A trial is ``cue`` -> ``trial_duration`` seconds of imagery ->
a rest drawn uniformly in ``iti``. The marker value of a cue is its class name.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Sequence

import numpy as np
from scipy import signal

from sblr_rt.timing import DEFAULT_TIMING

logger = logging.getLogger("sblr_rt.playback.simulator")

#: Motor focus of known class names: (electrode, sign) of the imagery pattern.
CLASS_FOCUS = {
    "left": "C4",
    "left_hand": "C4",
    "right": "C3",
    "right_hand": "C3",
    "feet": "Cz",
    "foot": "Cz",
    "both_feet": "Cz",
    "tongue": "FCz",
}
_FALLBACK_FOCI = ("C4", "C3", "Cz", "CPz", "FCz", "C5", "C6")

# Pink-noise IIR (Kellet's approximation of a -3 dB/octave slope).
_PINK_B = np.array([0.049922035, -0.095993537, 0.050612699, -0.004408786])
_PINK_A = np.array([1.0, -2.494956002, 2.017265875, -0.522189400])
_PINK_GAIN = float(
    np.sqrt(np.sum(signal.lfilter(_PINK_B, _PINK_A, np.r_[1.0, np.zeros(2**16)]) ** 2))
)


def simulator_channels(n_channels: int) -> list[str]:
    """Return the channel labels used for ``n_channels`` simulated channels.

    Parameters
    ----------
    n_channels : int
        At least 1.

    Returns
    -------
    ch_names : list of str
        118: the Berlin cap :data:`sblr_rt.montage.BERLIN_118`. More: the Berlin
        cap plus ``EEG119``, ``EEG120``, ... (background only). Fewer: C3, Cz, C4 and the
        10-10 labels nearest to them, then intermediate-row labels, in cap order.
    """
    from sblr_rt.montage import (
        BERLIN_118,
        BERLIN_HALF_POSITIONS,
        BERLIN_TO_1005,
        channel_positions,
    )

    if not isinstance(n_channels, numbers.Integral) or n_channels < 1:
        raise ValueError(f"'n_channels' must be a positive int, got {n_channels!r}")
    if n_channels >= len(BERLIN_118):
        extra = [f"EEG{i + 1}" for i in range(len(BERLIN_118), n_channels)]
        return [*BERLIN_118, *extra]
    # keep the 10-10 labels nearest to the three motor foci first, then the Berlin
    # intermediate rows, so that C3, Cz and C4 are always among them
    pos = channel_positions(BERLIN_118)
    foci = np.array([pos[ch] for ch in ("C3", "Cz", "C4")])
    key = [
        (ch in BERLIN_TO_1005 or ch in BERLIN_HALF_POSITIONS,
         np.linalg.norm(foci - np.asarray(pos[ch]), axis=1).min())
        for ch in BERLIN_118
    ]  # fmt: skip
    keep = set(sorted(range(len(BERLIN_118)), key=key.__getitem__)[:n_channels])
    return [ch for i, ch in enumerate(BERLIN_118) if i in keep]


class Simulator:
    """Deterministic generator of simulated motor-imagery EEG with cues.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz (>= 50).
    n_channels : int
        Number of channels (labels from :func:`simulator_channels`).
    classes : sequence of str
        Two or more class names; ``left``, ``right``, ``feet`` (and ``tongue``) get their
        physiological focus, other names the next free one of C4, C3, Cz, CPz, FCz, C5, C6.
    seed : int
        Seed of everything random.
    first_cue : float
        Time of the first cue in seconds.
    trial_duration : float
        Imagery period after each cue in seconds (default: the cue paradigm's cue and
        imagery, :attr:`sblr_rt.timing.TrialTiming.task`).
    iti : tuple of float
        (min, max) rest after the imagery period, seconds (default: the paradigm's rest
        and fixation, :attr:`sblr_rt.timing.TrialTiming.gap`).
    erd : float
        Relative drop of mu/beta amplitude at the focus during imagery (0..1).
    slow_amplitude : float
        Peak of the slow negative potential at the focus, in volts.

    Examples
    --------
    >>> sim = Simulator(sfreq=100.0, n_channels=16, seed=1)
    >>> data, markers = sim.read(1000)
    >>> data.shape
    (1000, 16)
    >>> markers[0]
    (200, 'right')
    """

    _BLOCK_SECONDS = 0.1

    def __init__(
        self,
        *,
        sfreq: float = 1000.0,
        n_channels: int = 118,
        classes: Sequence[str] = ("left", "right"),
        seed: int = 0,
        first_cue: float = 2.0,
        trial_duration: float = DEFAULT_TIMING.task,
        iti: tuple[float, float] = DEFAULT_TIMING.gap,
        erd: float = 0.5,
        slow_amplitude: float = 6e-6,
    ) -> None:
        if not isinstance(sfreq, numbers.Real) or not (math.isfinite(sfreq) and sfreq >= 50):
            raise ValueError(f"'sfreq' must be a number >= 50 Hz, got {sfreq!r}")
        if isinstance(classes, str) or len(classes) < 2:
            raise ValueError(f"'classes' must hold two or more class names, got {classes!r}")
        classes = [str(c) for c in classes]
        if len(set(classes)) != len(classes):
            raise ValueError(f"'classes' must be distinct, got {classes!r}")
        if not isinstance(seed, numbers.Integral):
            raise TypeError(f"'seed' must be an int, got {type(seed).__name__}")
        lo, hi = (float(v) for v in iti)
        if not 0 <= lo <= hi:
            raise ValueError(f"'iti' must be (min, max) with 0 <= min <= max, got {iti!r}")
        if trial_duration <= 0 or first_cue < 0:
            raise ValueError(
                "'trial_duration' must be > 0 and 'first_cue' >= 0, got "
                f"{trial_duration!r} and {first_cue!r}"
            )
        if not 0 <= erd <= 1:
            raise ValueError(f"'erd' must be within [0, 1], got {erd!r}")
        self.sfreq = float(sfreq)
        self.ch_names = simulator_channels(n_channels)
        self.classes = classes
        self.seed = int(seed)
        self.first_cue = float(first_cue)
        self.trial_duration = float(trial_duration)
        self.iti = (lo, hi)
        self.erd = float(erd)
        self.slow_amplitude = float(slow_amplitude)
        self._setup()

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        from sblr_rt.montage import channel_positions

        sf = self.sfreq
        n_ch = len(self.ch_names)
        root = np.random.SeedSequence(self.seed)
        noise_seq, paradigm_seq, static_seq = root.spawn(3)
        self._rng = np.random.default_rng(noise_seq)
        self._paradigm_rng = np.random.default_rng(paradigm_seq)
        static = np.random.default_rng(static_seq)

        pos = channel_positions(self.ch_names)
        xyz = np.array([pos.get(ch, (np.nan,) * 3) for ch in self.ch_names], dtype=float)
        known = np.isfinite(xyz[:, 0])
        self._xyz = xyz

        def pattern(centre: str, width: float = 0.035) -> np.ndarray:
            c = np.asarray(channel_positions([centre])[centre])
            d2 = np.sum((xyz - c) ** 2, axis=1)
            p = np.exp(-d2 / (2 * width**2))
            return np.where(known, p, 0.0)

        # background: pink noise mixed by a row-normalised Gaussian kernel over positions
        d = np.linalg.norm(xyz[:, None] - xyz[None], axis=-1)
        kernel = np.where(np.isfinite(d), np.exp(-(d**2) / (2 * 0.03**2)), 0.0)
        np.fill_diagonal(kernel, 1.0)
        kernel /= np.sqrt((kernel**2).sum(1, keepdims=True))
        self._mix = kernel * (10e-6 / _PINK_GAIN)  # about 10 uV rms of 1/f background
        self._pink_zi = np.zeros((n_ch, 3))

        # rhythmic sources: alpha (occipital) and mu/beta at C3, C4, Cz
        self._foci = {}
        free = [f for f in _FALLBACK_FOCI if f not in CLASS_FOCUS.values()]
        for cls in self.classes:
            focus = CLASS_FOCUS.get(cls.lower())
            if focus is None or focus in self._foci.values():
                focus = next(f for f in (*_FALLBACK_FOCI, *free) if f not in self._foci.values())
            self._foci[cls] = focus
        motor = list(dict.fromkeys(["C3", "C4", "Cz", *self._foci.values()]))
        self._motor_sites = motor
        self._patterns = {site: pattern(site) for site in motor}
        self._alpha_pattern = pattern("POz", 0.05) + 0.5 * pattern("Oz", 0.04)
        self._slow_patterns = {site: pattern(site, 0.045) for site in motor}
        bands = []
        for f0, bw in ((10.0, 2.0), (11.0, 2.0), (22.0, 4.0)):
            if f0 + bw < 0.45 * sf:
                bands.append(signal.butter(2, [f0 - bw, f0 + bw], "bandpass", fs=sf))
            else:
                bands.append(None)
        self._alpha_ba, self._mu_ba, self._beta_ba = bands
        self._alpha_zi = np.zeros(4)
        self._mu_zi = np.zeros((len(motor), 4))
        self._beta_zi = np.zeros((len(motor), 4))
        self._mu_gain = 5e-6 / np.sqrt(2 * 2.0 / (sf / 2)) * (1 + 0.2 * static.random(len(motor)))
        self._alpha_gain = 7e-6 / np.sqrt(2 * 2.0 / (sf / 2))
        self._alpha_env_zi = np.zeros(1)
        self._sensor_noise = 1e-6

        # state
        self._block = max(1, round(self._BLOCK_SECONDS * sf))
        self._buffer = np.zeros((0, n_ch))
        self._buffer_start = 0  # absolute index of the first buffered sample
        self._n_generated = 0  # samples produced into the buffer so far
        self._n_read = 0
        self._trials: list[tuple[int, str]] = []  # (cue sample, class) scheduled so far
        self._next_cue = round(self.first_cue * sf)
        self._order: list[str] = []

    # ------------------------------------------------------------------ paradigm
    def _schedule_until(self, stop: int) -> None:
        """Schedule cues up to absolute sample ``stop`` (plus one trial of look-ahead)."""
        while self._next_cue < stop + round((self.trial_duration + 2) * self.sfreq):
            if not self._order:
                block = [c for c in self.classes for _ in range(4)]
                self._paradigm_rng.shuffle(block)
                self._order = block
            cls = self._order.pop(0)
            self._trials.append((self._next_cue, cls))
            rest = self._paradigm_rng.uniform(*self.iti)
            self._next_cue += round((self.trial_duration + rest) * self.sfreq)

    @property
    def trials(self) -> list[tuple[int, str]]:
        """Cues scheduled so far as ``(sample index, class)``; read() extends the list."""
        return list(self._trials)

    @property
    def n_read(self) -> int:
        """Number of samples returned by :meth:`read` so far."""
        return self._n_read

    # ------------------------------------------------------------------ generation
    def _envelopes(self, start: int, n: int) -> tuple[dict[str, np.ndarray], dict]:
        """ERD envelope (0..1) and slow potential time course per motor site."""
        sf = self.sfreq
        t_abs = start + np.arange(n)
        erd = {site: np.zeros(n) for site in self._motor_sites}
        slow = {site: np.zeros(n) for site in self._motor_sites}
        for cue, cls in self._trials:
            if cue > start + n or cue + (self.trial_duration + 2) * sf < start:
                continue
            t = (t_abs - cue) / sf
            site = self._foci[cls]
            # smooth onset 0.3-0.8 s after the cue, offset over 0.5 s after the imagery
            on = 0.5 * (1 + np.tanh((t - 0.5) / 0.12))
            off = 0.5 * (1 - np.tanh((t - self.trial_duration) / 0.15))
            erd[site] += on * off
            # slow negative potential: gamma-shaped, peak 0.8 s after the cue
            tt = np.clip(t, 0, None)
            slow[site] += -((tt / 0.8) ** 2) * np.exp(2 * (1 - tt / 0.8)) * (t > 0)
        return {k: np.clip(v, 0, 1) for k, v in erd.items()}, slow

    def _generate_block(self) -> np.ndarray:
        n, start = self._block, self._n_generated
        n_ch = len(self.ch_names)
        rng = self._rng
        self._schedule_until(start + n)
        white = rng.standard_normal((n_ch, n))
        pink, self._pink_zi = signal.lfilter(_PINK_B, _PINK_A, white, axis=1, zi=self._pink_zi)
        data = self._mix @ pink
        data += self._sensor_noise * rng.standard_normal((n_ch, n))
        # alpha with a slowly wandering amplitude (low-passed noise, always positive)
        if self._alpha_ba is not None:
            drive = rng.standard_normal(n)
            alpha, self._alpha_zi = signal.lfilter(*self._alpha_ba, drive, zi=self._alpha_zi)
            wander = rng.standard_normal(n) * 0.05
            env, self._alpha_env_zi = signal.lfilter(
                [1 - 0.999], [1, -0.999], wander, zi=self._alpha_env_zi
            )
            data += np.outer(self._alpha_pattern, self._alpha_gain * alpha * np.exp(env * 5))
        erd, slow = self._envelopes(start, n)
        drive = rng.standard_normal((2, len(self._motor_sites), n))
        for i, site in enumerate(self._motor_sites):
            amp = 1.0 - self.erd * erd[site]
            source = np.zeros(n)
            if self._mu_ba is not None:
                mu, self._mu_zi[i] = signal.lfilter(*self._mu_ba, drive[0, i], zi=self._mu_zi[i])
                source += mu
            if self._beta_ba is not None:
                beta, self._beta_zi[i] = signal.lfilter(
                    *self._beta_ba, drive[1, i], zi=self._beta_zi[i]
                )
                source += 0.5 * beta
            data += np.outer(self._patterns[site], self._mu_gain[i] * amp * source)
            data += np.outer(self._slow_patterns[site], self.slow_amplitude * slow[site])
        self._n_generated += n
        return data.T

    def read(self, n_samples: int) -> tuple[np.ndarray, list[tuple[int, str]]]:
        """Return the next ``n_samples`` samples and the cues among them.

        Parameters
        ----------
        n_samples : int
            Number of samples (>= 0).

        Returns
        -------
        data : ndarray, shape (n_samples, n_channels)
            Samples in volts, float64.
        markers : list of (int, str)
            ``(absolute sample index, class)`` of each cue within the returned samples.
        """
        if not isinstance(n_samples, numbers.Integral) or n_samples < 0:
            raise ValueError(f"'n_samples' must be a non-negative int, got {n_samples!r}")
        start = self._n_read
        stop = start + int(n_samples)
        blocks = [self._buffer]
        available = self._buffer_start + len(self._buffer)
        while available < stop:
            block = self._generate_block()
            blocks.append(block)
            available += len(block)
        buffer = np.concatenate(blocks) if len(blocks) > 1 else self._buffer
        offset = start - self._buffer_start
        data = buffer[offset : offset + n_samples]
        self._buffer = buffer[offset + n_samples :]
        self._buffer_start = stop
        self._n_read = stop
        markers = [(cue, cls) for cue, cls in self._trials if start <= cue < stop]
        return np.array(data), markers


def run_simulator(
    *,
    name: str = "SBLR-Sim",
    source_id: str = "sblr-sim",
    duration: float | None = None,
    chunk_seconds: float = 0.01,
    wait_for_consumers: float = 0.0,
    background: bool = False,
    **simulator_kwargs,
):
    """Stream a :class:`Simulator` on LSL in real time.

    Two outlets: EEG (``name``, type ``EEG``, float32 volts, ``source_id``) and markers
    (``name + "-Markers"``, type ``Markers``, ``source_id + "-markers"``). Sample ``i`` is
    stamped ``t0 + i / sfreq`` (an ideal amplifier clock started at
    :func:`sblr_rt.stream.clock.local_clock` ``t0``) and pushed once that time has passed,
    in chunks of about ``chunk_seconds``. A cue marker carries exactly the timestamp of its sample.

    Parameters
    ----------
    name, source_id : str
        Stream name and source id of the EEG outlet.
    duration : float | None
        Seconds to stream; None runs until stopped (KeyboardInterrupt or ``stop()``).
    chunk_seconds : float
        Push period.
    wait_for_consumers : float
        Seconds to wait for inlets before starting the clock (0: start at once).
    background : bool
        Return the started :class:`sblr_rt.playback.stream_player.StreamPlayer` (stop it
        with ``stop()``) instead of streaming in the calling thread.
    **simulator_kwargs
        Passed to :class:`Simulator`.

    Returns
    -------
    result : int | StreamPlayer
        Samples pushed, or the running player when ``background``.
    """
    from sblr_rt.playback.stream_player import StreamPlayer

    player = StreamPlayer(
        Simulator(**simulator_kwargs),
        name=name,
        source_id=source_id,
        duration=duration,
        chunk_seconds=chunk_seconds,
        dtype="float32",
        unit="volts",
        wait_for_consumers=wait_for_consumers,
    )
    if background:
        return player.start()
    try:
        return player.run()
    finally:
        player.stop()

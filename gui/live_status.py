"""The Live tab's status line and stream banner: what one snapshot says about the session.

:func:`status_html` renders the one-line summary under the plots (stream health, rate,
buffer fill and, for a loop, decision rate, step time, latency, dropped windows, the model
version deciding and, in an adapting session, the refits' state and failures);
:func:`banner_message` says why no decisions come, if so. The two widgets are built by
:func:`make_banner` and :func:`make_status_label`; :class:`sblr_rt.gui.live_tab.LiveTab` places
them and sets their text from each snapshot.
"""

from __future__ import annotations

import dataclasses
import html

import numpy as np
from PyQt5 import QtCore, QtWidgets

from sblr_rt.online.telemetry import Telemetry

#: Text of the status line before any stream is connected.
NO_STREAM = "No stream: choose one above and press Connect."


def make_banner() -> QtWidgets.QLabel:
    """Return the red banner (hidden) that says why no decisions come."""
    banner = QtWidgets.QLabel("")
    banner.setWordWrap(True)
    banner.setStyleSheet(
        "QLabel { background: #B2182B; color: white; font-weight: bold; padding: 6px; }"
    )
    banner.hide()
    return banner


def precue_note(window_length: float | None) -> str:
    """Return what a sliding decision just after a cue holds, for a window of this length.

    Parameters
    ----------
    window_length : float | None
        The model's window, ``tmax - tmin`` seconds; None: no model yet.

    Returns
    -------
    text : str

    Examples
    --------
    >>> precue_note(3.5)[:60]
    'Each decision is drawn at the end of the 3.5 s window it cla'
    """
    if window_length is None:
        return (
            "Each decision is drawn at the end of the window it classified. A window that "
            "ends soon after a cue still holds mostly the EEG from before the cue, so its "
            "probability says little about the cued class."
        )
    length = float(window_length)
    return (
        f"Each decision is drawn at the end of the {length:g} s window it classified (the "
        f"model's). A window ending 0.5 s after a cue holds {max(length - 0.5, 0):g} s of EEG "
        f"from before the cue; for {length / 2:g} s after each cue (grey) most of the window "
        "precedes it, so its probability says little about the cued class. Read the "
        "smoothed curve later in the trial, or the trial decision (▲)."
    )


def make_status_label() -> QtWidgets.QLabel:
    """Return the rich-text status line shown under the plots."""
    status = QtWidgets.QLabel(NO_STREAM)
    status.setTextFormat(QtCore.Qt.RichText)
    status.setWordWrap(True)
    return status


def status_html(snapshot: Telemetry) -> str:
    """Render the status line of one snapshot.

    Parameters
    ----------
    snapshot : Telemetry
        As returned by ``OnlineLoop.snapshot()``; ``mode`` None for a bare stream.

    Returns
    -------
    text : str
        Rich text: a coloured dot (green = streaming at the nominal rate, orange =
        connected but not healthy, red = lost), then facts separated by " · ".
    """
    stream = snapshot.stream
    name = stream.name or "?"
    connected = bool(stream.connected)
    sfreq = stream.sfreq
    eff = stream.effective_sfreq
    rate = f"{sfreq:g} Hz" if np.isfinite(sfreq) and sfreq else "? Hz"
    if eff is not None and np.isfinite(eff):
        rate += f" (measured {eff:.1f})"
    fill = stream.buffer_fill
    step, latency, dropped = snapshot.step_time, snapshot.latency, snapshot.dropped
    state = stream.summary
    good = connected and state == "streaming" and not stream.rate_far_off
    dot = "#1a9641" if good else ("#E08214" if connected else "#B2182B")
    if not good:
        state = f"<b>{state}</b>"
    parts = [
        f"<span style='color:{dot}'>●</span> <b>{name}</b> {state}",
        f"{stream.n_channels or len(stream.ch_names)} ch @ {rate}",
        f"buffer {100 * fill:.0f}%",
    ]
    if snapshot.mode is not None:  # a loop, not a bare stream
        parts += [
            f"{snapshot.decisions_per_second:.1f} decisions/s",
            f"step p50 {_fmt_seconds(step.p50)} / p99 {_fmt_seconds(step.p99)}",
            f"latency p50 {_fmt_seconds(latency.p50)} / p99 {_fmt_seconds(latency.p99)}"
            + (f" ({latency.caveat})" if latency.caveat else ""),
        ]
    parts.append(f"gaps {snapshot.n_gaps}")
    if snapshot.mode is not None:
        detail = ", ".join(
            f"{f.name} {getattr(dropped, f.name)}" for f in dataclasses.fields(dropped)
        )
        parts.append(f"dropped windows {dropped.total} ({detail})")
        parts.append(_model_html(snapshot))
    return " · ".join(parts)


def _model_html(snapshot: Telemetry) -> str:
    """Render the model version deciding now and, when adapting, the refits' state."""
    text = f"model v{snapshot.model_version}"
    share = getattr(snapshot, "prior_share", None)
    if share is not None:
        text += f", {100 * share:.0f}% prior"
    adaptation = snapshot.adaptation
    if adaptation is None:
        return text
    text += f" (adapting: {adaptation.get('n_trials', 0)} trials, refit {adaptation['refit']}"
    if adaptation.get("n_unlabelled"):
        text += (
            f", <span style='color:#E08214'>{adaptation['n_unlabelled']} cue(s) naming no "
            "class left out</span>"
        )
    if adaptation.get("n_failures"):
        colour = "#B2182B" if adaptation["refit"] == "failed" else "#E08214"
        error = html.escape(str(adaptation.get("last_error")))
        text += (
            f", <span style='color:{colour}'><b>{adaptation['n_failures']} failed</b>, last: "
            f"{error}</span>"
        )
    return text + ")"


def banner_message(snapshot: Telemetry) -> str | None:
    """Say why no decisions come (stream vanished, silent, loop halted), or None.

    Parameters
    ----------
    snapshot : Telemetry
        As returned by ``OnlineLoop.snapshot()``.

    Returns
    -------
    message : str | None
        The banner's text; None when all is well (the banner is hidden).
    """
    stream = snapshot.stream
    name = stream.name or "?"
    if not stream.connected:
        return (
            f"Stream '{name}' has vanished: waiting for it to return "
            "(no decisions until it does; reconnects on its own)."
        )
    if stream.state == "stalled":
        return (
            f"Stream '{name}' is silent (no samples for a while): no decisions until "
            "samples arrive again."
        )
    if snapshot.halted:
        return f"No decisions: {snapshot.halted}."
    return None


def _fmt_seconds(value) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"

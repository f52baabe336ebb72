"""``run`` and ``record`` on streams that other tools publish, under their own types.

mne-lsl's ``PlayerLSL`` (a producer that is not ours) says ``eeg`` and sends its
annotations one-hot on ``<name>-annotations`` of type ``annotations``; OpenViBE's LSL
output says ``signal`` and sends int32 stimulations on a ``marker`` stream.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pylsl
import pytest
from sblr_rt.cli import main

from .conftest import CH_NAMES, DEADLINE, SFREQ

#: (second, description) of the annotations of the played file; it loops every PERIOD s.
ANNOTATIONS = [(1.0, "left"), (2.5, "right")]
PERIOD = 4.0


def _player(name, source_id):
    """Return mne-lsl's player (started) of a looping file with ANNOTATIONS."""
    import mne
    from mne_lsl.player import PlayerLSL

    info = mne.create_info(CH_NAMES, SFREQ, "eeg")
    data = np.random.default_rng(0).standard_normal((len(CH_NAMES), int(PERIOD * SFREQ)))
    raw = mne.io.RawArray(data * 1e-5, info, verbose="error")
    onsets, descriptions = zip(*ANNOTATIONS, strict=True)
    raw.set_annotations(mne.Annotations(onsets, 0.0, descriptions))
    return PlayerLSL(raw, chunk_size=5, name=name, source_id=source_id).start()


def _trials(out):
    line = r"^trial \d+: cue '(\w+)' \([\w ]+\) -> (\w+)(?:,.*)?; p left [\d.]+, right [\d.]+; .*"
    return re.findall(line, out, re.MULTILINE)


@pytest.mark.lsl
def test_run_takes_an_mne_lsl_player_and_its_annotations(model_path, source_id, tmp_path,
                                                        capsys):  # fmt: skip
    name = f"mnelsl-{source_id[-12:]}"
    player = _player(name, source_id)
    try:
        # by name, whatever the types (eeg, annotations; the player's NAME-annotations is
        # the EEG stream's own marker stream); the file loops 2-3 times
        code = main(["run", "--model", str(model_path), "--stream", name, "--mode", "trial",
                     "--hop", "0", "--duration", str(3 * PERIOD), "--status-every", "0",
                     "--outlet-name", name + "-Pred", "--timeout", str(DEADLINE),
                     "--sessions", str(tmp_path)])  # fmt: skip
    finally:
        player.stop()
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert f"classifying '{name}' (3 channels at 100 Hz)" in out
    cues = [cue for cue, _ in _trials(out)]
    # the one-hot annotation samples became their descriptions (the player's timing on a
    # loaded machine may cost a trial window: no count of each is asserted)
    assert len(cues) >= 2 and set(cues) <= {"left", "right"}, out


def _feed_openvibe(eeg, markers, stop, n_samples=300, speed=4.0):
    """Push float32 'signal' samples and int32 stimulations 1, 2, 1 with their samples."""
    cues = [(n_samples // 5, 1), (n_samples // 2, 2), (3 * n_samples // 4, 1)]
    if not (eeg.wait_for_consumers(DEADLINE) and markers.wait_for_consumers(DEADLINE)):
        return
    data = np.random.default_rng(1).standard_normal((n_samples, len(CH_NAMES)))
    rate = SFREQ * speed
    t0 = pylsl.local_clock()
    n = 0
    while n < n_samples and not stop.is_set():
        k = min(5, n_samples - n)
        for index, value in cues:
            if n <= index < n + k:
                markers.push_sample([value], t0 + index / rate)
        eeg.push_chunk(data[n : n + k].astype(np.float32).tolist(), t0 + (n + k - 1) / rate)
        n += k
        stop.wait(max(0.0, t0 + n / rate - pylsl.local_clock()))


def _openvibe_outlets(name, source_id):
    info = pylsl.StreamInfo(name, "signal", len(CH_NAMES), SFREQ, "float32", source_id)
    channels = info.desc().append_child("channels")
    for label in CH_NAMES:
        channels.append_child("channel").append_child_value("label", label)
    markers = pylsl.StreamInfo(
        name + "-stims", "marker", 1, pylsl.IRREGULAR_RATE, "int32", source_id + "-stims"
    )
    return pylsl.StreamOutlet(info), pylsl.StreamOutlet(markers)


@pytest.mark.lsl
def test_run_takes_an_openvibe_stream_with_int32_markers(model_path, source_id, tmp_path,
                                                        capsys):  # fmt: skip
    name = f"openvibe-{source_id[-12:]}"
    eeg, markers = _openvibe_outlets(name, source_id)
    stop = threading.Event()
    feeder = threading.Thread(target=_feed_openvibe, args=(eeg, markers, stop))
    feeder.start()
    try:
        # the EEG by source_id and its type in another case, the markers by type alone
        code = main(["run", "--model", str(model_path), "--source-id", source_id,
                     "--stream-type", "SIGNAL", "--marker-source-id", source_id + "-stims",
                     "--marker-type", "Marker", "--cues", "1,2", "--mode", "trial",
                     "--hop", "0", "--duration", "3", "--status-every", "0",
                     "--outlet-name", name + "-Pred", "--timeout", str(DEADLINE),
                     "--sessions", str(tmp_path)])  # fmt: skip
    finally:
        stop.set()
        feeder.join(DEADLINE)
        del markers, eeg
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert [cue for cue, _ in _trials(out)] == ["1", "2", "1"], out


@pytest.mark.lsl
def test_record_takes_an_openvibe_stream_with_int32_markers(source_id, tmp_path, capsys):
    import mne

    name = f"openvibe-rec-{source_id[-12:]}"
    eeg, markers = _openvibe_outlets(name, source_id)
    stop = threading.Event()
    # real time: the recorder opens the EEG, then the markers, then starts writing
    feeder = threading.Thread(target=_feed_openvibe, args=(eeg, markers, stop, 400, 1.0))
    feeder.start()
    out = tmp_path / "ov_raw.fif"
    try:
        code = main(["record", "--out", str(out), "--stream", name,
                     "--marker-stream", name + "-stims", "--duration", "5",
                     "--timeout", str(DEADLINE)])  # fmt: skip
    finally:
        stop.set()
        feeder.join(DEADLINE)
        del markers, eeg
    assert code == 0, capsys.readouterr()
    raw = mne.io.read_raw_fif(out, verbose="error")
    assert raw.ch_names == CH_NAMES
    assert list(raw.annotations.description) == ["1", "2", "1"]


@pytest.mark.lsl
def test_record_takes_an_mne_lsl_player_and_its_annotations(source_id, tmp_path, capsys):
    import mne

    name = f"mnelsl-rec-{source_id[-12:]}"
    out = tmp_path / "player_raw.fif"
    player = _player(name, source_id)
    try:
        # no marker option: the player's NAME-annotations is the EEG stream's own
        code = main(["record", "--out", str(out), "--stream", name,
                     "--duration", str(2 * PERIOD), "--timeout", str(DEADLINE)])  # fmt: skip
    finally:
        player.stop()
    assert code == 0, capsys.readouterr()
    recorded = mne.io.read_raw_fif(out, verbose="error")
    assert recorded.ch_names == CH_NAMES
    # the one-hot annotation samples were written as their descriptions (the player's
    # late chunks on a loaded machine may add BAD_gap marks)
    found = [d for d in recorded.annotations.description if not d.startswith("BAD_")]
    assert len(found) >= 2 and set(found) <= {"left", "right"}, found

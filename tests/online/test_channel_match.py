"""A stream that spells the model's channels another way: PhysioNet's ``Fc5.`` for ``FC5``.

Calibration stores standard labels; BCI2000 (or a player of the EDF file) publishes the
file's own. The start-up matches them (exact, case, normalised), says how, and refuses a
guess.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier, OnlineLoop, check_stream_info, match_stream
from tests.models import fit_model

SFREQ = 100.0
#: The model's labels (as calibration stores them) and the file's (as BCI2000 publishes).
MODEL = ["FC5", "FC3", "Cz", "C3", "Fpz", "AFz"]
FILE = ["Fc5.", "Fc3.", "Cz..", "C3..", "Fpz.", "Afz."]


@pytest.fixture(scope="module")
def model():
    return fit_model(MODEL, sfreq=SFREQ, tmax=0.5, n_epochs=30, classes=["a", "b"],
                     informative=["Cz"], signal="shift",
                     estimator={"max_iter": 30})[0]  # fmt: skip


def test_the_files_own_labels_find_the_models_channels(model, caplog):
    clf = OnlineClassifier(model)
    stream = ["X1", *reversed(FILE)]  # another order and an extra channel
    with caplog.at_level(logging.INFO, logger="sblr_rt.online"):
        match = match_stream(clf, stream, SFREQ, stream="EEG stream 'bci2000'")
    assert [stream[i] for i in match.picks] == FILE
    assert {rule for _, _, rule in match.pairs} == {"normalised"}
    record = next(r for r in caplog.records if "Channels of" in r.getMessage())
    assert record.levelno == logging.WARNING  # not the exact labels: say so
    assert "6 by normalised label" in record.getMessage() and "Fc5. -> FC5" in record.getMessage()
    picks = check_stream_info(clf, stream, SFREQ)
    np.testing.assert_array_equal(picks, match.picks)


def test_case_only_differences_and_exact_labels(model, caplog):
    clf = OnlineClassifier(model)
    assert check_stream_info(clf, MODEL, SFREQ) is None
    upper = [c.upper() for c in MODEL]
    match = match_stream(clf, upper, SFREQ)
    assert match.picks == tuple(range(6))
    assert [r for _, _, r in match.pairs] == ["exact", "exact", "case", "exact", "case", "case"]
    np.testing.assert_array_equal(check_stream_info(clf, upper, SFREQ), np.arange(6))


def test_missing_and_ambiguous_channels_are_refused(model):
    clf = OnlineClassifier(model)
    with pytest.raises(ValueError, match=r"lacks 1 of the model's 6 channels: Cz.*normalised"):
        check_stream_info(clf, [c for c in FILE if c != "Cz.."], SFREQ)
    with pytest.raises(ValueError, match=r"amp: model channel 'Cz' fits 2 stream channels"):
        check_stream_info(clf, [*FILE[:2], "cz", "CZ", *FILE[3:]], SFREQ, stream="amp")


def test_the_loop_reads_the_right_channels_and_reports_the_mapping(model, fakes, caplog):
    clf = OnlineClassifier(model)
    order = [3, 0, 5, 1, 4, 2]  # the stream's channel j is the model's channel order[j]
    n = 3 * clf.n_times_raw
    data = np.random.default_rng(1).standard_normal((n, 6))
    times = 10.0 + np.arange(n) / SFREQ
    source = fakes.Source(data, times, [FILE[k] for k in order], SFREQ)
    clock = fakes.Clock(times[0])
    with caplog.at_level(logging.INFO, logger="sblr_rt.online"):
        loop = OnlineLoop(clf, source, clock=clock, hop=0.1).start(thread=False)
    assert "Online loop started" in caplog.text and "by normalised label" in caplog.text
    while source.sent < n:
        source.send(7)
        clock.t = source.timestamps[source.sent - 1] + 0.002
        loop.step_once()
    decisions = loop.pop_decisions()
    assert decisions
    model_order = data[:, np.argsort(order)]  # back in the model's channel order
    for d in decisions:
        stop = d["window_stop_index"]
        window = model_order[stop - clf.n_times_raw : stop].T[None]
        np.testing.assert_allclose(d["score"], model.decision_function(window)[0], rtol=1e-9)
    channels = loop.snapshot().channels
    assert [(m, s) for m, s, _ in channels.pairs] == list(zip(MODEL, FILE, strict=True))
    assert "Fc5. -> FC5" in channels.summary
    loop.stop()


def test_a_missing_channel_names_the_close_labels_of_the_stream(model):
    from sblr_rt.io.labels import close_matches

    stream = [c if c != "Cz" else "EEG Cz-Ref" for c in MODEL]
    expected = (
        r"lacks 1 of the model's 6 channels: Cz; the stream has instead EEG Cz-Ref .*; close "
        r"labels: Cz -> 'EEG Cz-Ref': rename"
    )
    with pytest.raises(ValueError, match=expected):
        check_stream_info(OnlineClassifier(model), stream, SFREQ)

    assert close_matches(["C3", "Cz", "O1"], ["EEG C3-REF", "EEG CZ-REF", "C03", "Pz"]) == {
        "C3": ["EEG C3-REF", "C03"],
        "Cz": ["EEG CZ-REF"],
    }


#: A cap that publishes its own labels: only a renaming finds the model's channels.
CAP = [f"EEG {c.upper()}-REF" for c in MODEL]
RENAME = ",".join(f"{c}={m}" for c, m in zip(CAP, MODEL, strict=True))


def test_a_stream_of_another_cap_is_matched_after_the_renaming(model, caplog):
    clf = OnlineClassifier(model)
    stream = ["EOG", *reversed(CAP)]
    with pytest.raises(ValueError, match=r"lacks 6 of the model's 6 channels: .*close labels: "
                       r"FC5 -> 'EEG FC5-REF'.*--rename-channels 'EEG FC5-REF=FC5,"):  # fmt: skip
        match_stream(clf, stream, SFREQ)
    with caplog.at_level(logging.INFO, logger="sblr_rt.online"):
        match = match_stream(clf, stream, SFREQ, stream="amp", rename=RENAME)
    assert [stream[i] for i in match.picks] == CAP
    assert {rule for _, _, rule in match.pairs} == {"renamed"}
    record = next(r for r in caplog.records if "Channels of amp" in r.getMessage())
    assert record.levelno == logging.INFO  # asked for: no warning
    assert "6 by rename_channels" in record.getMessage()
    assert "EEG FC5-REF -> FC5" in record.getMessage()
    # a renaming that names a label the stream lacks: one line, what it has, the close ones
    with pytest.raises(ValueError, match=r"^amp: 'rename_channels' must name labels amp has, "
                       r"got 1 it lacks: 'EEG C5-REF' \(its 7 labels: EOG, .*\); close labels: "
                       r"EEG C5-REF -> 'EEG FC5-REF' or .*'EEG C3-REF'"):  # fmt: skip
        match_stream(clf, stream, SFREQ, stream="amp", rename=f"{RENAME},EEG C5-REF=C5")


def test_the_loop_renames_the_streams_labels(model, fakes):
    clf = OnlineClassifier(model)
    n = 2 * clf.n_times_raw
    data = np.random.default_rng(2).standard_normal((n, 6))
    times = 10.0 + np.arange(n) / SFREQ
    source = fakes.Source(data, times, CAP, SFREQ)
    loop = OnlineLoop(clf, source, clock=fakes.Clock(times[0]), hop=0.1, rename_channels=RENAME)
    assert loop.settings.rename_channels.mapping["EEG FC5-REF"] == "FC5"
    loop.start(thread=False)
    channels = loop.snapshot().channels
    assert [(m, s) for m, s, _ in channels.pairs] == list(zip(MODEL, CAP, strict=True))
    loop.stop()
    with pytest.raises(ValueError, match=r"lacks 6 of the model's 6 channels"):
        OnlineLoop(clf, fakes.Source(data, times, CAP, SFREQ), clock=fakes.Clock(times[0]),
                   hop=0.1).start(thread=False)  # fmt: skip

"""A session's folder, its decisions file, its scored trials and when its stream is gone."""

from __future__ import annotations

import datetime
import json

import pytest

from sblr_rt.online.decision import Decision
from sblr_rt.online.session import SessionLog, SessionSummary, StreamGone, new_session_folder


def test_a_new_session_folder_never_reuses_an_earlier_one(tmp_path):
    now = datetime.datetime(2026, 12, 7, 14, 3, 22)
    first = new_session_folder(tmp_path, now=now)
    (first / "summary.json").write_text("{}")
    second = new_session_folder(tmp_path, now=now)  # the same second
    third = new_session_folder(tmp_path, now=now)
    assert [p.name for p in (first, second, third)] == [
        "2026-12-07_14-03-22", "2026-12-07_14-03-22_2", "2026-12-07_14-03-22_3"
    ]  # fmt: skip
    assert (first / "summary.json").read_text() == "{}" and not list(second.iterdir())


def test_the_stream_is_gone_after_the_grace_and_back_when_it_streams():
    gone = StreamGone(5.0)
    assert not gone.update("connecting", 0.0)  # not yet there is not gone
    assert not gone.update("stalled", 1.0) and not gone.update("lost", 6.0)
    assert gone.update("lost", 6.5) and gone.gone_for(6.5) == 5.5
    assert not gone.update("streaming", 7.0) and not gone.update("stalled", 11.0)
    with pytest.raises(ValueError, match="'grace' must be a finite number of seconds > 0"):
        StreamGone(0)


def _decision(label, cue=None, *, end=10.0, early=None):
    proba = {"left": 0.8, "right": 0.2} if label == "left" else {"left": 0.2, "right": 0.8}
    return Decision(label, proba, 0.0, window_end=end, trial=cue is not None, cue=cue,
                    early=early, published=end + 0.002)  # fmt: skip


def test_the_log_writes_every_decision_and_scores_the_trials(tmp_path):
    log = SessionLog(tmp_path, ["left", "right"], {"T1": "left", "T2": "right"})
    assert log.add(_decision("left")) is None  # sliding: written, not scored
    a = log.add(_decision("left", "T1", end=12.0))
    b = log.add(_decision("left", "T2", end=16.0, early=True))
    c = log.add(_decision("right", "X", end=20.0))  # names no class: not scored
    d = log.add(_decision("right", "T2", end=24.0))
    log.close()
    assert (a.correct, b.correct, c.correct, d.correct) == (True, False, None, True)
    assert [(o.n_correct, o.n_scored) for o in (a, b, c, d)] == [(1, 1), (1, 2), (1, 2), (2, 3)]
    lines = [json.loads(x) for x in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert [x["cue"] for x in lines] == [None, "T1", "T2", "X", "T2"]
    assert lines[0]["latency"] == pytest.approx(0.002)
    score = log.score()
    assert (score.n_trials, score.n_correct, score.confusion) == (3, 2, ((1, 0), (1, 1)))
    assert score.seconds_per_trial == 4.0  # the median time between trial decisions
    summary = SessionSummary.of(
        log, folder=str(tmp_path), started="s", ended="e", seconds=20.0, ended_by="SIGINT",
        reason="SIGINT received", model="m.sblr.npz", mode="trial",
        paths={"folder": str(tmp_path), "decisions": str(log.path)},
    )  # fmt: skip
    text = "\n".join(summary.lines())
    assert "session ended (SIGINT received) after 20 s: 5 decisions, 4 trial decisions" in text
    assert "1 trial(s) whose cue names no class, not scored" in text
    assert "early decisions: 1 of 4 trials, 0 correct" in text
    written = json.loads(summary.write(tmp_path / "summary.json").read_text())
    assert written["score"]["n_correct"] == 2 and written["latency"]["n"] == 5

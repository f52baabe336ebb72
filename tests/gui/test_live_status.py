"""The Live tab's status line: the model version and how much of it is still a prior."""

from __future__ import annotations

import pytest

pytest.importorskip("PyQt5")

from sblr_rt.gui.live_status import status_html

from sblr_rt.online.telemetry import Telemetry

pytestmark = pytest.mark.gui


def test_the_status_says_how_much_of_the_decision_is_still_the_prior():
    text = status_html(Telemetry(mode="trial", model_version=3, prior_share=0.62))
    assert "model v3, 62% prior" in text
    assert "prior" not in status_html(Telemetry(mode="trial", model_version=3))


def test_a_negative_latency_says_the_streams_clock_runs_ahead():
    from sblr_rt.online.telemetry import Stats

    text = status_html(Telemetry(mode="sliding", latency=Stats(n=9, p50=-0.09, p99=-0.05)))
    assert "(the stream's timestamps run ahead of this computer's clock)" in text
    assert "run ahead" not in status_html(Telemetry(mode="sliding"))

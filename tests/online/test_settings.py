"""The loop's settings objects, their checks, and the keyword shorthand for their fields."""

from __future__ import annotations

import copy
import math

import pytest

from sblr_rt.online import (
    DisplaySettings,
    LSLStreams,
    OnlineClassifier,
    OnlineLoop,
    OnlineSettings,
    RunInfo,
    Smoothing,
)


def test_settings_are_checked_when_built():
    assert OnlineSettings(cues="T1, T2").cues == ("T1", "T2")
    assert OnlineSettings(mode="trial", hop=0).hop == 0.0
    with pytest.raises(ValueError, match="'mode' must be 'sliding' or 'trial', got"):
        OnlineSettings(mode="live")
    with pytest.raises(ValueError, match="'hop' must be > 0 in sliding mode"):
        OnlineSettings(hop=0)
    with pytest.raises(ValueError, match="'unit_mismatch' must be 'rescale' or 'refuse', got"):
        OnlineSettings(unit_mismatch="ignore")
    with pytest.raises(ValueError, match="'keep_trials' needs trial mode"):
        OnlineSettings(keep_trials=True)
    with pytest.raises(TypeError, match="Smoothing or None"):
        OnlineSettings(smoothing="ema")
    with pytest.raises(ValueError, match="'display_sfreq' must be > 0"):
        DisplaySettings(display_sfreq=0)
    with pytest.raises(ValueError, match="'timeout' must be > 0"):
        LSLStreams(timeout=0)


def test_keywords_are_a_shorthand_for_the_settings_fields(make_model):
    model = make_model()
    by_keywords = OnlineLoop(
        model, object(), markers=object(), mode="trial", hop=0.1, max_history=7
    )
    by_objects = OnlineLoop(
        model,
        object(),
        markers=object(),
        settings=OnlineSettings(mode="trial", hop=0.1),
        display=DisplaySettings(max_history=7),
    )
    assert by_keywords.settings == by_objects.settings
    assert by_keywords.display == by_objects.display == DisplaySettings(max_history=7)
    assert (by_keywords.mode, by_keywords.hop) == ("trial", 0.1)
    # a keyword wins over the object's field
    loop = OnlineLoop(model, object(), settings=OnlineSettings(hop=0.5), hop=0.2)
    assert loop.hop == 0.2
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['hopp'\]"):
        OnlineLoop(model, object(), hopp=0.1)
    with pytest.raises(ValueError, match="'markers' must be a marker source"):
        OnlineLoop(model, object(), mode="trial")


def test_from_lsl_sorts_its_keywords_by_settings_object(make_model):
    model = make_model()
    loop = OnlineLoop.from_lsl(
        model, stream="EEG-X", outlet=False, mode="trial", hop=0.25, display_seconds=3.0
    )
    assert loop.source.name == "EEG-X" and loop.sink is None and loop.markers is not None
    assert loop.settings.hop == 0.25 and loop.display.display_seconds == 3.0
    loop = OnlineLoop.from_lsl(model, LSLStreams(stream="EEG-Y", outlet=False))
    assert loop.source.name == "EEG-Y" and loop.markers is None
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        OnlineLoop.from_lsl(model, stream_name="EEG-X")


def test_the_run_info_is_read_once_from_the_model_file(make_model):
    model = copy.copy(make_model())  # the cached model stays as it is
    model.metadata = {
        "unit": "uV",
        "config": {"classes": {"T1": "class0"}, "smoothing": "mean", "clip_run": None},
        "epochs": {"markers": {"Comment/T1": "T1"}},
        "adaptation": {"version": 3},
    }
    info = OnlineClassifier(model).run_info
    assert info == RunInfo(
        unit="uV",
        classes=(("T1", "class0"),),
        recorded_markers=(("Comment/T1", "T1"),),
        smoothing=Smoothing("mean", tau=model.tmax - model.tmin),  # no tau: the window's
        clip_run=None,
        version=3,
    )
    assert info.marker_classes == (("T1", "class0"), ("Comment/T1", "T1"))
    loop = OnlineLoop(model, object())
    assert loop.settings.smoothing == info.smoothing and loop.model_version == 3
    # a file of any age: missing or malformed keys give the defaults
    assert RunInfo.from_metadata(None) == RunInfo()
    assert RunInfo.from_metadata({"config": "bad", "adaptation": {"version": "x"}}) == RunInfo()


def test_hop_and_smoothing_have_the_command_lines_ranges():
    # sblr_rt.validation.limits: the same ranges as run's --hop, --tau and --early-after.
    from sblr_rt.online.evidence import Smoothing

    with pytest.raises(ValueError, match=r"'hop' must be a finite number >= 0 and <= 1e\+07"):
        OnlineSettings(hop=1e9)
    with pytest.raises(ValueError, match=r"'tau' must be a finite number > 0 and <= 1e\+07"):
        Smoothing("ema", tau=1e9)
    with pytest.raises(ValueError, match=r"'early_after' must be a finite number >= 0 and <="):
        Smoothing("ema", early_after=1e9)


def test_the_evidence_forgets_over_the_models_window_unless_told():
    from types import SimpleNamespace

    model = SimpleNamespace(tmin=0.5, tmax=3.5, metadata={"config": {"smoothing": "ema"}})
    assert RunInfo.from_model(model).smoothing.tau == 3.0
    model.metadata = {"config": {"smoothing": "ema", "tau": 0.4}}  # the calibration's own
    assert RunInfo.from_model(model).smoothing.tau == 0.4
    # a new calibration stores no tau unless given one
    from sblr_rt.calibration.config import CalibrationConfig

    assert CalibrationConfig().to_dict()["tau"] is None
    assert CalibrationConfig(tau=2.0).to_dict()["tau"] == 2.0


@pytest.mark.parametrize(
    ("cls", "field", "value", "error"),
    [
        (OnlineSettings, "hop", "0.1", TypeError),
        (OnlineSettings, "hop", True, TypeError),
        (OnlineSettings, "model_version", 2.7, TypeError),  # was silently cut to 2
        (OnlineSettings, "model_version", 2**30, ValueError),  # beyond float32's integers
        (OnlineSettings, "model_version", -3, ValueError),
        (OnlineSettings, "cues", 5, TypeError),
        (OnlineSettings, "fast", "no", TypeError),  # a non-empty string was taken as True
        (OnlineSettings, "rename_channels", 5, TypeError),
        (DisplaySettings, "display_sfreq", math.inf, ValueError),
        (DisplaySettings, "display_seconds", 1e12, ValueError),
        (DisplaySettings, "max_history", 1e300, TypeError),
        (DisplaySettings, "max_history", 2.5, TypeError),
        (LSLStreams, "timeout", "5", TypeError),
        (LSLStreams, "timeout", math.inf, ValueError),
        (LSLStreams, "buffer_seconds", 1e15, ValueError),
        (LSLStreams, "stream", 5, TypeError),
        (LSLStreams, "outlet_name", " ", ValueError),
        (LSLStreams, "outlet", "no", TypeError),
        (Smoothing, "tau", "1", TypeError),
        (Smoothing, "early", math.nan, ValueError),
    ],
)  # fmt: skip
def test_a_setting_of_the_wrong_kind_is_refused_naming_it(cls, field, value, error):
    with pytest.raises(error, match=f"'{field}' must "):
        cls(**{field: value})


def test_a_display_beyond_memory_is_refused_before_allocating():
    import threading

    from sblr_rt.online._stats import RawDisplay

    with pytest.raises(ValueError, match=r"'display_seconds'.* refused before allocating"):
        RawDisplay(118, 1000.0, 1000.0, 1e7, threading.Lock())
    display = RawDisplay(118, 1000.0, 100.0, 10.0, threading.Lock())
    assert display.sfreq == 100.0

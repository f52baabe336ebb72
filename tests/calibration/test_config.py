"""Calibration configuration: every float field must be a finite number."""

from __future__ import annotations

import dataclasses
import math

import pytest
from sblr_rt.calibration.config import CalibrationConfig, load_config

FLOAT_FIELDS = [
    "tmin", "tmax", "l_freq", "h_freq", "filter_length", "reject", "flat", "tol", "search_tol"
]  # fmt: skip


@pytest.mark.parametrize("name", FLOAT_FIELDS)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_float_fields_refused(name, value):
    with pytest.raises(ValueError, match=rf"'{name}' must be a finite number, got {value}"):
        CalibrationConfig(**{name: value})
    # The command line goes through load_config (``calibrate --tmax inf``).
    with pytest.raises(ValueError, match=rf"'{name}' must be a finite number"):
        load_config(None, **{name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("baseline", (0.0, math.inf)),
        ("l1_fractions", (0.1, math.nan)),
        ("l2_values", (math.inf,)),
        ("bands", ((8.0, math.inf),)),
    ],
)
def test_non_finite_float_sequences_refused(name, value):
    with pytest.raises(ValueError, match=rf"'{name}' must be a finite number"):
        CalibrationConfig(**{name: value})


def test_wrong_types_refused_with_the_field_named():
    with pytest.raises(TypeError, match="'tmax' must be a number, got str"):
        CalibrationConfig(tmax="3.5")
    with pytest.raises(ValueError, match="'tol' must be a number"):
        load_config(None, tol=True)
    with pytest.raises(ValueError, match="'bands' must be a list of \\(low, high\\) pairs"):
        CalibrationConfig(bands=((8.0, 13.0, 20.0),))


def test_finite_values_are_kept_as_floats():
    config = CalibrationConfig(tmin=0, tmax=3, tol=1e-4, bands=[[8, 13]], baseline=[0, 1])
    assert (config.epochs.tmin, config.epochs.tmax, config.selection.tol) == (0.0, 3.0, 1e-4)
    assert isinstance(config.epochs.tmin, float)
    assert config.preprocessing.bands == ((8.0, 13.0),) and config.preprocessing.baseline == (
        0.0,
        1.0,
    )


def test_the_example_configuration_loads_and_names_every_field():
    import dataclasses
    import re
    from pathlib import Path

    from sblr_rt.calibration.config import CONCERNS, CalibrationConfig, load_config

    path = Path(__file__).resolve().parents[2] / "examples" / "calibration.toml"
    config = load_config(path)
    assert config.preprocessing.features == "auto" and config.class_map == {
        "T1": "fists",
        "T2": "feet",
    }
    text = path.read_text()
    named = set(re.findall(r"^#? ?([a-z_0-9]+) =", text, flags=re.M))
    fields = set(CalibrationConfig.field_names())
    assert fields <= named, sorted(fields - named)
    # each table of the example is a concern, and holds that concern's fields
    for concern, cls in CONCERNS.items():
        in_table = set(re.findall(r"^#? ?([a-z_0-9]+) =", _table(text, concern), flags=re.M))
        assert in_table == {f.name for f in dataclasses.fields(cls)}, concern
        part = getattr(config, concern)
        assert part == cls(**{f.name: getattr(part, f.name) for f in dataclasses.fields(cls)})
        with pytest.raises(AttributeError, match=f"read config.{concern}."):
            getattr(config, dataclasses.fields(cls)[0].name)  # no flat alias of a setting


def _table(text: str, name: str) -> str:
    """Return the lines of TOML table ``[name]`` in ``text``, up to the next table."""
    start = text.index(f"[{name}]")
    end = text.find("\n[", start + 1)
    return text[start : None if end < 0 else end]


@pytest.mark.parametrize("name", ["tol", "search_tol", "large_search_tol"])
@pytest.mark.parametrize("value", [0.0, -1e-3])
def test_stopping_rules_must_be_positive(name, value):
    with pytest.raises(ValueError, match=rf"'{name}' must be a positive number, got {value}"):
        CalibrationConfig(**{name: value})


def test_large_fold_is_a_count_and_decides_the_search_rule():
    with pytest.raises(TypeError, match=r"'large_fold' must be an integer, got 1\.5"):
        CalibrationConfig(large_fold=1.5)
    with pytest.raises(ValueError, match="'large_fold' must be >= 0, got -1"):
        CalibrationConfig(large_fold=-1)
    config = CalibrationConfig(large_fold=1000, large_search_tol=5e-3)
    assert config.is_large((10, 10, 10)) and not config.is_large((10, 10, 9))
    assert config.cv_tol_for((10, 10, 10)) == 5e-3
    assert config.cv_tol_for((10, 10, 9)) == config.selection.tol
    # never looser than asked: a large_search_tol below tol leaves tol
    assert CalibrationConfig(large_fold=0, large_search_tol=1e-4).cv_tol_for((1, 1, 1)) == 1e-3
    # an explicit search_tol rules every fold
    assert CalibrationConfig(search_tol=2e-3).cv_tol_for((168, 118, 100)) == 2e-3


def _toml(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("tmin = -1e5\ntmax = 1e5", r"'tmin' must be >= -60 seconds, got -100000\.0"),
        ("tmax = 1e5", r"'tmax' must be a finite number >= -60 and <= 60 seconds"),
    ],
)
def test_a_window_beyond_a_minute_is_refused_as_on_the_command_line(tmp_path, text, match):
    # The same range and words as ``--tmin``/``--tmax`` (validation.limits), no MemoryError.
    limit = r"must be a finite number >= -60 and <= 60 seconds \(an epoch spans at most a minute"
    with pytest.raises(ValueError, match=match):
        load_config(_toml(tmp_path, text))
    with pytest.raises(ValueError, match=rf"'tmax' {limit}.*, got 100000\.0"):
        CalibrationConfig(tmax=1e5)


@pytest.mark.parametrize("value", ['"12"', '"1,2"', "2"])
@pytest.mark.parametrize("name", ["ranks", "auto_ranks"])
def test_ranks_must_be_a_list_of_integers(tmp_path, name, value):
    # "12" once meant ranks 1 and 2, and "1,2" failed without naming the field.
    match = rf"'{name}' must be a list of integers \(TOML: {name} = \[1, 2\]\), got"
    with pytest.raises(ValueError, match=match):
        load_config(_toml(tmp_path, f"{name} = {value}"))
    with pytest.raises(TypeError, match=rf"'{name}' must be an integer, got 1\.5"):
        CalibrationConfig(**{name: (1, 1.5)})
    assert CalibrationConfig(**{name: [1, 2]}).selection.__getattribute__(name) == (1, 2)


def test_n_jobs_is_bounded_in_the_configuration_and_the_api(tmp_path):
    import os

    from sblr_rt.calibration import calibrate

    high = 4 * (os.cpu_count() or 1)
    match = rf"'n_jobs' must be an integer from 1 to {high} \(4 per CPU.*got 100000"
    with pytest.raises(ValueError, match=match):
        load_config(_toml(tmp_path, "n_jobs = 100000"))
    with pytest.raises(ValueError, match=match):
        calibrate("missing.edf", n_jobs=100000)  # refused before any file is read
    with pytest.raises(ValueError, match="'n_jobs' must be an integer, got '4'"):
        load_config(_toml(tmp_path, 'n_jobs = "4"'))
    assert CalibrationConfig(n_jobs=high).selection.n_jobs == high


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("tau", 1e9, r"'tau' must be a finite number > 0 and <= 1e\+07 seconds"),
        ("early_after", 1e9, r"'early_after' must be a finite number >= 0 and <= 1e\+07"),
        ("recentre_warmup", 1e9, r"'recentre_warmup' must be a finite number > 0 and <= 1e\+06"),
        ("max_iter", "500", r"'max_iter' must be an integer, got '500'"),
        ("cv_repeats", 2.5, r"'cv_repeats' must be an integer, got 2\.5"),
    ],
)
def test_other_numbers_share_the_command_lines_rules(tmp_path, name, value, match):
    with pytest.raises(ValueError, match=match):
        load_config(None, **{name: value})


#: A valid value other than the default for every setting, by TOML key.
SAMPLES = {
    "classes": {"a": "x", "b": "y"}, "tmin": 0.25, "tmax": 2.0, "features": "bandpower",
    "spatial": "car", "reference": "bands", "picks": ["C3", "C4"], "eog": ["Fp1"],
    "rename_channels": {"A1": "C3"},
    "l_freq": 1.0, "h_freq": 30.0, "bands": [[8.0, 12.0]], "n_times": 50,
    "baseline": [0.0, 0.1], "scaling": "channel_time", "filter_length": 0.5, "reject": 1e-4,
    "flat": 1e-7, "clip_run": 7, "cv": 3, "cv_repeats": 3, "auto_ranks": [1],
    "auto_l2": [0.1], "auto_l1": [0.1], "auto_max_iter": 30, "auto_keep": 3,
    "auto_ensemble": 2, "criterion": "accuracy", "search": "paper", "ranks": [2],
    "l1_fractions": [0.1],
    "l2_values": [0.1], "max_iter": 100, "tol": 1e-4, "search_tol": 1e-3, "large_fold": 5,
    "large_search_tol": 1e-2, "race_margin": 0.2, "race_min_test": 10,
    "multi_class": "multinomial", "class_weight": "balanced", "skip_unbounded": False,
    "search_dtype": "float64", "n_jobs": 1, "random_state": 3, "smoothing": "ema",
    "tau": 2.0, "early": 0.9, "early_after": 0.5, "recentre": False, "recentre_warmup": 2.0,
}  # fmt: skip


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


@pytest.mark.parametrize("table", [False, True])
def test_every_toml_key_sets_exactly_one_setting(tmp_path, table):
    """Each key, at top level or in its concern's table, changes its own setting only."""
    from sblr_rt.calibration.config import CONCERNS, CONSTRAINTS, TOML_KEYS

    fields = {(c, f.name) for c, cls in CONCERNS.items() for f in dataclasses.fields(cls)}
    assert sorted(TOML_KEYS.values()) == sorted(fields)  # one key per setting, no two
    assert set(SAMPLES) == set(TOML_KEYS) == set(CONSTRAINTS)  # every setting has a rule
    default = CalibrationConfig()
    for key, value in SAMPLES.items():
        concern, name = TOML_KEYS[key]
        if key == "early":  # an early decision needs smoothing
            text = 'smoothing = "ema"\n'
            changed = {(concern, name), ("online", "smoothing")}
        else:
            text, changed = "", {(concern, name)}
        text += f"{key} = {_toml_value(value)}\n"
        if table:
            text = f"[{concern}]\n{text}"
        config = load_config(_toml(tmp_path, text))
        differ = {
            (c, f)
            for c, f in fields
            if getattr(getattr(config, c), f) != getattr(getattr(default, c), f)
        }
        assert differ == changed, key


@pytest.mark.parametrize(
    ("name", "value", "error", "match"),
    [
        ("search", "slow", ValueError, r"'search' must be 'fast', 'paper' or 'none', got 'slow'"),
        ("scaling", "rows", ValueError, r"'scaling' must be None, 'channel' or 'channel_time'"),
        ("auto_l1", (0.5, 1.0), ValueError, r"'auto_l1' must be fractions in \[0, 1\), got"),
        ("auto_ensemble", 0, ValueError, r"'auto_ensemble' must be a positive integer, got 0"),
        ("picks", 3, TypeError, r"'picks' must be a list of channel names, got int"),
        ("cv", 1, ValueError, r"'cv' must be an integer >= 2 or 'loo', got 1"),
    ],
)
def test_the_table_refuses_with_the_setting_named(name, value, error, match):
    with pytest.raises(error, match=match):
        CalibrationConfig(**{name: value})


def test_toml_none_spellings_and_names_are_normalised():
    config = CalibrationConfig(spatial="none", scaling="none", class_weight="none", eog=[])
    assert config.preprocessing.spatial is None and config.preprocessing.scaling is None
    assert config.selection.class_weight is None and config.preprocessing.eog is None
    assert CalibrationConfig(cv="10").selection.cv == 10


def test_rename_channels_is_a_toml_table_of_old_to_new_labels(tmp_path):
    from sblr_rt.io.labels import ChannelRenaming

    toml = _toml(tmp_path, '[preprocessing]\nrename_channels = { "EEG C3-REF" = "C3", '
                 '"EEG C4-REF" = "C4" }\n')  # fmt: skip
    config = load_config(toml)
    renaming = config.preprocessing.rename_channels
    assert isinstance(renaming, ChannelRenaming)
    assert renaming.mapping == {"EEG C3-REF": "C3", "EEG C4-REF": "C4"}
    # stored flat with the model, and read back the same
    assert config.to_dict()["rename_channels"] == renaming.mapping
    assert load_config(None, **config.to_dict()).preprocessing.rename_channels == renaming
    # the option's string wins over the file; an empty table is no renaming
    assert load_config(toml, rename_channels="EEG C3-REF=C3").preprocessing.rename_channels \
        == ChannelRenaming((("EEG C3-REF", "C3"),))  # fmt: skip
    empty = load_config(_toml(tmp_path, "rename_channels = {}\n"))
    assert empty.preprocessing.rename_channels is None
    with pytest.raises(ValueError, match=r"'rename_channels' must name each new label once, "
                       r"got 'C3' twice"):  # fmt: skip
        load_config(_toml(tmp_path, 'rename_channels = { A = "C3", B = "C3" }\n'))
    with pytest.raises(ValueError, match=r"'rename_channels' must be OLD=NEW pairs .*got 'C3'"):
        load_config(_toml(tmp_path, 'rename_channels = "C3"\n'))

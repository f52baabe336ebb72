"""Model paths that are not regular files, and header fields of the wrong type or range."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sblr_rt.calibration import CalibrationConfig

from sblr_rt.io._archive import MAX_LOAD_BYTES
from sblr_rt.io._header_fields import MAX_MODEL_VERSION, check_header_fields
from sblr_rt.io.model_file import ModelFileError, load_model, read_header

from .test_model_file import _rewrite, _saved


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_link_to_a_device_is_refused_unread(tmp_path, target):
    link = tmp_path / "m.sblr.npz"
    link.symlink_to(target)
    for read in (load_model, read_header):
        with pytest.raises(ModelFileError, match="is a device, not a regular file"):
            read(link)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "m.sblr.npz"
    os.mkfifo(fifo)
    with pytest.raises(ModelFileError, match="is a FIFO"):
        load_model(fifo)
    (tmp_path / "link.npz").symlink_to(fifo)
    with pytest.raises(ModelFileError, match="is a FIFO"):
        read_header(tmp_path / "link.npz")


def test_a_directory_and_a_huge_file_are_refused(tmp_path):
    with pytest.raises(ModelFileError, match="is a directory"):
        load_model(tmp_path)
    huge = tmp_path / "huge.npz"
    with open(huge, "wb") as f:  # sparse: no disk used
        f.truncate(MAX_LOAD_BYTES + 1)
    with pytest.raises(ModelFileError, match=f"at most {MAX_LOAD_BYTES}"):
        load_model(huge)


def test_inspect_on_a_fifo_ends_with_one_line(tmp_path):
    fifo = tmp_path / "m.sblr.npz"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "sblr_rt.cli", "inspect", str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "is a FIFO" in done.stderr and "Traceback" not in done.stderr


def _set(path, *keys, value):
    def edit(header):
        node = header
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("keys", "value", "field"),
    [
        (("metadata", "config"), "abc", "metadata.config"),
        (("metadata", "config"), [1, 2], "metadata.config"),
        (("metadata", "config", "classes"), "T1", "metadata.config.classes"),
        (("metadata", "config", "flat"), -1.0, "metadata.config.flat"),
        (("metadata", "config", "clip_run"), "5", "metadata.config.clip_run"),
        (("metadata", "config", "early"), 2.0, "metadata.config.early"),
        (("metadata", "config", "tmin"), -1e5, "metadata.config.tmin"),  # validation.limits
        (("metadata", "config", "tmax"), 61.0, "metadata.config.tmax"),
        (("metadata", "config", "tau"), 1e9, "metadata.config.tau"),
        (("metadata", "config", "recentre_warmup"), 1e9, "metadata.config.recentre_warmup"),
        (("metadata", "excluded_channels"), ["Cz"], "metadata.excluded_channels"),
        (("metadata", "excluded_channels"), {"Cz": 3}, "metadata.excluded_channels.Cz"),
        (("metadata", "adaptation"), 7, "metadata.adaptation"),
        (("metadata", "adaptation", "version"), 1e40, "metadata.adaptation.version"),
        (("metadata", "adaptation", "version"), 10**40, "metadata.adaptation.version"),
        (("metadata", "adaptation", "version"), MAX_MODEL_VERSION + 1,
         "metadata.adaptation.version"),
        (("metadata", "adaptation", "version"), -1, "metadata.adaptation.version"),
        (("metadata", "adaptation", "version"), True, "metadata.adaptation.version"),
        (("metadata", "epochs", "per_class"), [3, 4], "metadata.epochs.per_class"),
        (("metadata", "selection", "ranks"), [{"rank": "x"}], "metadata.selection.ranks[0].rank"),
        (("metadata", "selection"), "fast", "metadata.selection"),
        (("metadata", "sources"), "a.edf", "metadata.sources"),
        (("metadata", "unit"), 1, "metadata.unit"),
        (("metadata", "train_accuracy"), 7, "metadata.train_accuracy"),
        (("metadata", "objective"), [1.0, [1.0]], "metadata.objective"),
        (("metadata", "objective"), [[1.0], ["x"]], "metadata.objective"),
        (("metadata", "objective"), [[[1.0]]], "metadata.objective"),
        (("metadata", "objective"), [[1.0], [2.0], [3.0]], "metadata.objective"),  # 2 classes
        (("metadata",), "x", "metadata"),
        # issue 44: a prior's description and the solver's bounds
        (("metadata", "prior"), "a prior", "metadata.prior"),
        (("metadata", "prior", "people"), [1, 2], "metadata.prior.people[0]"),
        (("metadata", "prior", "people"), ["", " "], "metadata.prior.people[0]"),
        (("metadata", "prior", "share"), "abc", "metadata.prior.share"),
        (("metadata", "prior", "share"), 2.0, "metadata.prior.share"),
        (("metadata", "prior", "weight"), -0.5, "metadata.prior.weight"),
        (("metadata", "prior", "n_trials"), -1, "metadata.prior.n_trials"),
        (("metadata", "prior", "settings"), [1], "metadata.prior.settings"),
        (("metadata", "prior", "settings"), {"rank": [8]}, "metadata.prior.settings.rank"),
        (("metadata", "prior", "runs"), [{"person": 3}], "metadata.prior.runs[0].person"),
        (("metadata", "prior", "lopo", "per_person"), {"S001": "x"},
         "metadata.prior.lopo.per_person.S001"),
        (("metadata", "prior", "weights"), {"a": -1.0}, "metadata.prior.weights.a"),
        (("metadata", "prior", "evidence"), {"a": {"n_trials": "2"}},
         "metadata.prior.evidence.a.n_trials"),
        (("metadata", "prior", "cv_log_loss"), {"0.5": "x"}, "metadata.prior.cv_log_loss.0.5"),
        (("estimator", "params", "max_iter"), 10**9, "estimator.params.max_iter"),
        (("estimator", "params", "max_iter"), 1e9, "estimator.params.max_iter"),
        (("estimator", "params", "tol"), -1.0, "estimator.params.tol"),
        (("software_version",), {"a": 1}, "software_version"),
    ],
)  # fmt: skip
def test_header_fields_of_the_wrong_type_or_range_name_the_field(tmp_path, keys, value, field):
    path, _, _ = _saved(tmp_path)
    bad = tmp_path / "bad.npz"
    _rewrite(path, bad, edit_header=_set(path, *keys, value=value))
    for read in (load_model, read_header):
        with pytest.raises(ModelFileError, match=re.escape(f"header field '{field}' must be")):
            read(bad)


def test_fields_sblr_rt_does_not_read_are_left_alone(tmp_path):
    path, _, _ = _saved(tmp_path)
    good = tmp_path / "good.npz"
    _rewrite(path, good, edit_header=_set(path, "metadata", "future_field", value=[{"x": 1}]))
    model = load_model(good)
    assert model.metadata["future_field"] == [{"x": 1}]


def test_one_objective_list_per_class_is_read(tmp_path):
    # One-versus-rest with three classes records one objective trace per class.
    path, _, _ = _saved(tmp_path)
    good = tmp_path / "good.npz"

    def three(header):
        header["classes"] = ["a", "b", "c"]
        header["metadata"]["objective"] = [[1.5, 0.4], [1.2, 0.3, 0.2], [0.9]]

    _rewrite(path, good, edit_header=three)
    assert read_header(good)["metadata"]["objective"][1] == [1.2, 0.3, 0.2]
    bad = tmp_path / "bad.npz"
    _rewrite(path, bad, edit_header=lambda h: three(h) or h["classes"].pop())
    with pytest.raises(ModelFileError, match=r"one per class .*, got 3 lists for 2 classes"):
        read_header(bad)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("sfreq", 1e9, r"'preprocessor.sfreq' must be a finite number > 0 and <= 100000 Hz"),
        ("tmin", -1e5, r"'preprocessor.tmin' must be >= -60 seconds, got -100000\.0"),
        ("tmax", 1e5, r"'preprocessor.tmax' must be a finite number >= -60 and <= 60 seconds"),
    ],
)
def test_the_preprocessors_numbers_have_the_command_lines_ranges(tmp_path, key, value, match):
    path, _, _ = _saved(tmp_path)
    bad = tmp_path / "bad.npz"
    _rewrite(path, bad, edit_header=_set(path, "preprocessor", key, value=value))
    with pytest.raises(ModelFileError, match=rf"header field {match}"):
        load_model(bad)


def test_a_model_file_and_a_configuration_refuse_a_value_with_one_rule():
    # The header's metadata.config.tmin and the calibration's tmin: the same range, the
    # same words, each naming its own field.
    with pytest.raises(ValueError) as config:
        CalibrationConfig(tmin=-1e5)
    with pytest.raises(ModelFileError) as header:
        check_header_fields({"metadata": {"config": {"tmin": -1e5}}})
    said = str(config.value).removeprefix("'tmin' ")
    assert str(header.value) == f"header field 'metadata.config.tmin' {said}"
    assert "-60 seconds" in said

"""Model file: round trip without pickle, atomic write, refusal of bad files."""

from __future__ import annotations

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

from sblr_rt.bci_model import SingleModel
from sblr_rt.io.model_file import (
    FORMAT_VERSION,
    ModelFileError,
    load_model,
    read_header,
    save_model,
)
from sblr_rt.model import SparseBilinearLogisticRegression
from sblr_rt.preprocessing import Preprocessor
from tests.models import fit_model

CH = ["Fz", "C3", "Cz", "C4", "Pz", "Oz"]


def _model(features="waveform", n_classes=2, rank=1):
    waveform = features == "waveform"
    model, raw, _ = fit_model(
        CH,
        picks=["C3", "Cz", "C4", "Pz"],
        features=features,
        l_freq=8.0 if waveform else None,
        h_freq=30.0 if waveform else None,
        n_times=20 if waveform else 4,
        n_classes=n_classes,
        classes=["left", "right", "feet"][:n_classes],
        informative=["C3", "Cz", "C4"],
        n_epochs=30 * n_classes,
        estimator={"rank": rank, "mu1": 1e-3, "mu2": 0.0, "nu2": 0.01, "max_iter": 500},
        metadata={"selection": {"best": {"mean": 0.9}}, "note": "é"},
    )
    return model, raw


def test_the_solver_route_is_saved(tmp_path):
    # calibration fits with solver="paper": a refit of the loaded model runs it too
    model, _ = _model("waveform", 2, 1)
    model.estimator.set_params(solver="paper")
    loaded = load_model(save_model(model, tmp_path / "m.sblr.npz"))
    assert loaded.estimator.solver == "paper"


@pytest.mark.parametrize(
    ("features", "n_classes", "rank"),
    [("waveform", 2, 1), ("bandpower", 2, 2), ("waveform", 3, 2)],
)
def test_round_trip(tmp_path, features, n_classes, rank):
    model, raw = _model(features, n_classes, rank)
    path = tmp_path / "m.sblr.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert loaded.classes == model.classes
    assert loaded.ch_names == CH and loaded.sfreq == 100.0
    assert loaded.metadata["note"] == "é"
    assert loaded.metadata["format_version"] == FORMAT_VERSION
    np.testing.assert_array_equal(loaded.decision_function(raw), model.decision_function(raw))
    np.testing.assert_array_equal(loaded.predict_proba(raw), model.predict_proba(raw))
    assert list(loaded.predict(raw)) == list(model.predict(raw))
    assert set(model.predict(raw)) <= set(model.classes)
    assert loaded.estimator.get_params()["rank"] == rank
    labels, proba = loaded.labels_from_scores(loaded.decision_function(raw))
    np.testing.assert_allclose(proba, model.predict_proba(raw), rtol=1e-12)
    assert list(labels) == list(model.predict(raw))
    # Only our file remains: the temporary file was renamed.
    assert [p.name for p in tmp_path.iterdir()] == ["m.sblr.npz"]
    with np.load(path, allow_pickle=False) as npz:
        assert "header" in npz.files


def test_native_factors_match(tmp_path):
    model, raw = _model()
    U, V, b = model.native_factors()
    scores = np.einsum("cr,ect,tr->e", U, raw, V) + b
    np.testing.assert_allclose(scores, model.decision_function(raw), rtol=1e-9, atol=1e-9)


def test_truncated_file_refused(tmp_path):
    model, _ = _model()
    path = tmp_path / "m.npz"
    save_model(model, path)
    blob = path.read_bytes()
    for cut in (len(blob) // 2, len(blob) - 30, 10):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(blob[:cut])
        with pytest.raises(ValueError, match=r"truncated|not an sblr-rt model|corrupt"):
            load_model(bad)


def _rewrite(path, out, edit_header=None, edit_arrays=None):
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays["header"].tobytes())
    if edit_header:
        edit_header(header)
    if edit_arrays:
        edit_arrays(arrays)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(out, **arrays)


def test_newer_version_refused(tmp_path):
    model, _ = _model()
    path = tmp_path / "m.npz"
    save_model(model, path)
    newer = tmp_path / "newer.npz"
    _rewrite(path, newer, edit_header=lambda h: h.update(format_version=FORMAT_VERSION + 1))
    with pytest.raises(ValueError, match=r"newer|version 2.*upgrade"):
        load_model(newer)


def test_mismatched_arrays_refused(tmp_path):
    model, _ = _model()
    path = tmp_path / "m.npz"
    save_model(model, path)
    bad = tmp_path / "bad.npz"
    _rewrite(path, bad, edit_arrays=lambda a: a.update({"est/spatial": np.zeros((3, 1))}))
    with pytest.raises(ValueError, match="mismatched array 'est/spatial'"):
        load_model(bad)

    def both(a):
        a["est/spatial"] = np.zeros((3, 1))

    def fix_header(h):
        h["arrays"]["est/spatial"]["shape"] = [3, 1]

    bad2 = tmp_path / "bad2.npz"
    _rewrite(path, bad2, edit_header=fix_header, edit_arrays=both)
    with pytest.raises(ValueError, match=r"mismatched model.*spatial"):
        load_model(bad2)
    extra = tmp_path / "extra.npz"
    _rewrite(path, extra, edit_arrays=lambda a: a.update({"est/other": np.ones(2)}))
    with pytest.raises(ValueError, match="mismatched arrays"):
        load_model(extra)


def test_not_a_model_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not an sblr-rt model file"):
        load_model(text)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.ones(3))
    with pytest.raises(ValueError, match="not an sblr-rt model file"):
        load_model(other)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, header=np.frombuffer(b'{"format": "something"}', dtype=np.uint8))
    with pytest.raises(ValueError, match="not an sblr-rt model file"):
        read_header(wrong)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("header.npy", b"garbage")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match="sblr-rt model file"):
        load_model(junk)
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.npz")


def test_failed_save_leaves_nothing(tmp_path):
    model, _ = _model()
    model.metadata["bad"] = object()  # not JSON-serialisable
    path = tmp_path / "m.npz"
    with pytest.raises(TypeError):
        save_model(model, path)
    assert list(tmp_path.iterdir()) == []
    # An existing file is left untouched by a failed save.
    good, _ = _model()
    save_model(good, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        save_model(model, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def test_bci_model_input_checks():
    model, raw = _model()
    with pytest.raises(ValueError, match=r"n_times_raw|warm-up"):
        model.predict(raw[:, :, model.n_pad :])
    with pytest.raises(ValueError, match="n_epochs"):
        model.predict(raw[0])
    with pytest.raises(ValueError, match="classes"):
        SingleModel(preprocessor=model.preprocessor, estimator=model.estimator, classes=["a"])
    assert "SingleModel" in repr(model)
    assert "classes" in model.summary()


# ----------------------------------------------------------------------------- faults


def _saved(tmp_path):
    model, raw = _model()
    path = tmp_path / "m.npz"
    save_model(model, path)
    return path, model, raw


@pytest.mark.parametrize(
    "name", ["est/spatial", "est/temporal", "est/intercept", "pre/row_scale", "pre/filter_0"]
)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_arrays_refused(tmp_path, name, value):
    path, _, _ = _saved(tmp_path)
    bad = tmp_path / "bad.npz"

    def poison(arrays):
        a = arrays[name].copy()
        a.flat[0] = value
        arrays[name] = a

    _rewrite(path, bad, edit_arrays=poison)
    with pytest.raises(ModelFileError, match=f"non-finite.*{name}"):
        load_model(bad)


def test_unlisted_member_refused_before_reading(tmp_path):
    path, _, _ = _saved(tmp_path)
    bad = tmp_path / "extra.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("evil.npy", b"\0" * 100)
    with pytest.raises(ModelFileError, match=r"does not list \['evil.npy'\]"):
        load_model(bad)


def _with_npy_header(path, out, name, shape):
    """Copy ``path`` replacing member ``name``'s .npy header by one declaring ``shape``."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == f"{name}.npy":
                buf = io.BytesIO()
                np.lib.format.write_array_header_1_0(
                    buf, {"descr": "<f8", "fortran_order": False, "shape": shape}
                )
                data = buf.getvalue() + data[len(buf.getvalue()) :]
            dst.writestr(info, data)


def test_huge_declared_shapes_refused_before_allocating(tmp_path):
    path, _, _ = _saved(tmp_path)
    huge = tmp_path / "huge.npz"
    # The header claims a 2**40-element array: refused from the header alone.
    _rewrite(
        path,
        huge,
        edit_header=lambda h: h["arrays"]["est/spatial"].update(shape=[2**20, 2**20]),
    )
    with pytest.raises(ModelFileError, match=r"more than 1073741824 bytes"):
        load_model(huge)
    # The .npy member's own header lies about its shape: refused before reading data.
    lying = tmp_path / "lying.npz"
    _with_npy_header(path, lying, "est/temporal", (2**30, 2**10))
    with pytest.raises(ModelFileError, match="mismatched array 'est/temporal'"):
        load_model(lying)


def test_malformed_header_fields_refused(tmp_path):
    path, _, _ = _saved(tmp_path)
    edits = [
        lambda h: h.update(preprocessor=[1, 2]),
        lambda h: h["preprocessor"].update(tmax=1e308),
        lambda h: h["preprocessor"].update(tmin="0"),
        lambda h: h["preprocessor"].update(bands=3),
        lambda h: h["preprocessor"].update(unknown=1),
        lambda h: h.update(classes="ab"),
        lambda h: h["estimator"].update(params={"rank": 1, "multi_class": 3}),
        lambda h: h["estimator"].update(params=None),
        lambda h: h.update(format_version=True),
        lambda h: h["arrays"]["est/spatial"].update(dtype="|O"),
        lambda h: h["arrays"]["est/spatial"].update(shape=[-1, 1]),
    ]
    for k, edit in enumerate(edits):
        bad = tmp_path / f"bad{k}.npz"
        _rewrite(path, bad, edit_header=edit)
        with pytest.raises(ModelFileError):
            load_model(bad)


def test_deep_or_non_finite_json_refused(tmp_path):
    path, _, _ = _saved(tmp_path)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    text = arrays["header"].tobytes().decode()
    for k, blob in enumerate(
        [
            text.replace(
                '"metadata": {', '"metadata": {"x": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1
            ),
            text.replace('"tmin": 0.0', '"tmin": NaN'),
            text.replace('"tmin": 0.0', '"tmin": 1e999'),
            text.replace('"tmin": 0.0', '"tmin": ' + "9" * 5000),
        ]
    ):
        assert blob != text
        arrays["header"] = np.frombuffer(blob.encode(), dtype=np.uint8)
        bad = tmp_path / f"json{k}.npz"
        np.savez(bad, **arrays)
        with pytest.raises(ModelFileError):
            load_model(bad)


@pytest.mark.parametrize(("features", "spatial"), [("spectral", "csd"), ("waveform", "car")])
def test_spatial_stage_and_spectral_path_round_trip(tmp_path, monkeypatch, features, spatial):
    import sblr_rt.preprocessing.preprocessor as preprocessor_module

    names = ["FC3", "FCz", "FC4", "C3", "Cz", "C4", "CP3", "CPz", "CP4"]
    pre = Preprocessor(
        ch_names=names, sfreq=100.0, tmin=0.0, tmax=2.0, features=features, spatial=spatial
    )
    rng = np.random.default_rng(3)
    raw = rng.standard_normal((30, len(names), pre.n_times_raw))
    y = np.repeat([0, 1], 15)
    raw[y == 1, 4] *= 1.5
    est = SparseBilinearLogisticRegression(rank=1, mu2=0.1, nu2=0.1).fit(
        pre.fit(raw).transform(raw), y
    )
    model = SingleModel(preprocessor=pre, estimator=est, classes=["a", "b"])
    path = tmp_path / "m.sblr.npz"
    save_model(model, path)

    def computed_again(*args):
        raise AssertionError("a loaded model must use the saved operator")

    monkeypatch.setattr(preprocessor_module, "spatial_operator", computed_again)
    loaded = load_model(path)
    assert (loaded.preprocessor.features, loaded.preprocessor.spatial) == (features, spatial)
    np.testing.assert_array_equal(loaded.preprocessor.spatial_operator, pre.spatial_operator)
    np.testing.assert_allclose(loaded.decision_function(raw), model.decision_function(raw))


def test_objective_traces_of_many_classes_load_in_class_order():
    # objective_10 sorts before objective_2 by name; the traces are per class, in order.
    from sblr_rt.io.model_file import _fit_info

    arrays = {f"objective_{k}": np.array([float(k)]) for k in range(12)}
    assert [float(o[0]) for o in _fit_info(arrays)["objective"]] == list(range(12))


@pytest.mark.parametrize("name", ["est/intercept.npy", "header.npy"])
def test_two_members_of_one_name_refused(tmp_path, name):
    # A zip may hold two members of one name; reading one of them silently (the last, as
    # zipfile does) would load arrays that a check of the other one passed.
    path, _, _ = _saved(tmp_path)
    bad = tmp_path / "twice.npz"
    with zipfile.ZipFile(path) as src:
        members = {info.filename: src.read(info) for info in src.infolist()}
    with zipfile.ZipFile(bad, "w") as dst:
        for member, data in members.items():
            dst.writestr(member, data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name"
            dst.writestr(name, members[name])
    for read in (load_model, read_header):
        with pytest.raises(ModelFileError, match=f"two members named {name!r}"):
            read(bad)


def test_a_header_naming_a_key_twice_is_refused(tmp_path):
    # JSON objects with a key twice mean the last value to json.loads: refused instead.
    path, _, _ = _saved(tmp_path)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    text = arrays["header"].tobytes().decode()
    blob = text.replace('"tmin": 0.0', '"tmin": 0.0, "tmin": 0.25', 1)
    assert blob != text
    arrays["header"] = np.frombuffer(blob.encode(), dtype=np.uint8)
    bad = tmp_path / "key.npz"
    np.savez(bad, **arrays)
    with pytest.raises(ModelFileError, match="names the key 'tmin' twice in one object"):
        load_model(bad)

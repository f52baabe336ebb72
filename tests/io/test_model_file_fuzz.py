"""Fuzzing the model loader: a damaged or hostile file is refused cleanly or loads whole.

Seeded and bounded (a few seconds): cut and flipped bytes of a real saved model, and
mutated JSON header fields (types, nesting, huge numbers, deep nesting, missing keys).
Every outcome must be a :class:`ModelFileError` or a model that classifies.
"""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest

from sblr_rt.io.model_file import ModelFileError, load_model, save_model

from .test_model_file import _model

_VALUES = [
    None,
    True,
    0,
    -1,
    1.5,
    -1e308,
    1e308,
    2**64,
    10**300,
    "",
    "waveform",
    "x" * 1000,
    [],
    [1, 2],
    [[1.0, 2.0]],
    {},
    {"a": 1},
    [[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]],
]


def _paths(obj, prefix=()):
    """Every path to a value inside a JSON document."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:4]):
            yield from _paths(v, (*prefix, i))


def _mutate(header, rng):
    header = copy.deepcopy(header)
    paths = [p for p in _paths(header) if p]
    path = paths[rng.integers(len(paths))]
    parent = header
    for key in path[:-1]:
        parent = parent[key]
    action = rng.integers(4)
    if action == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == 1:
        parent[path[-1]] = [parent[path[-1]]] * int(rng.integers(1, 4))
    else:
        parent[path[-1]] = copy.deepcopy(_VALUES[rng.integers(len(_VALUES))])
    return header


def _check_outcome(path, n_channels):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_model(path)
    except ModelFileError:
        return "refused"
    # A file that loads must classify: finite probabilities that sum to one.
    rng = np.random.default_rng(1)
    raw = rng.standard_normal((2, len(model.ch_names), model.n_times_raw))
    proba = model.predict_proba(raw)
    assert proba.shape == (2, len(model.classes))
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    return "loaded"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model, _ = _model()
    path = tmp_path_factory.mktemp("fuzz") / "m.npz"
    save_model(model, path)
    return path, model


def test_fuzz_bytes(saved, tmp_path):
    path, model = saved
    blob = path.read_bytes()
    rng = np.random.default_rng(2026)
    outcomes = []
    for k in range(150):
        data = bytearray(blob)
        if k % 3 == 0:
            data = data[: rng.integers(len(data))]
        else:
            for _ in range(rng.integers(1, 8)):
                data[rng.integers(len(data))] ^= 1 << int(rng.integers(8))
        bad = tmp_path / f"b{k}.npz"
        bad.write_bytes(bytes(data))
        outcomes.append(_check_outcome(bad, len(model.ch_names)))
    assert "refused" in outcomes


def test_fuzz_header(saved, tmp_path):
    path, model = saved
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays["header"].tobytes())
    rng = np.random.default_rng(7)
    outcomes = []
    for k in range(250):
        mutated = header
        for _ in range(rng.integers(1, 3)):
            mutated = _mutate(mutated, rng)
        text = json.dumps(mutated)
        if k % 25 == 0:  # nesting far beyond the JSON parser's recursion limit
            text = text[:-1] + ', "deep": ' + "[" * 50_000 + "]" * 50_000 + "}"
        arrays["header"] = np.frombuffer(text.encode(), dtype=np.uint8)
        bad = tmp_path / f"h{k}.npz"
        np.savez(bad, **arrays)
        outcomes.append(_check_outcome(bad, len(model.ch_names)))
    assert {"refused", "loaded"} <= set(outcomes)

"""A module that moved is still imported by its old path, and says where it went."""

from __future__ import annotations

import importlib
import sys

import pytest

from sblr_rt.utils._renamed import MOVED_MODULES


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_a_moved_module_imports_by_its_old_path_with_a_warning(old, new, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated: it is renamed '{new}'"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_from_an_old_path_import_a_name():
    sys.modules.pop("sblr_rt.verdict", None)
    with pytest.warns(DeprecationWarning, match="sblr_rt.bci_model.verdict"):
        from sblr_rt.verdict import model_verdict
    assert model_verdict.__module__ == "sblr_rt.bci_model.verdict"


def test_the_old_paths_are_no_files_any_more():
    for old in MOVED_MODULES:
        spec = importlib.machinery.PathFinder.find_spec(
            old.rpartition(".")[2], importlib.import_module(old.rpartition(".")[0]).__path__
        )
        assert spec is None, f"{old} is still a file: remove it from MOVED_MODULES"

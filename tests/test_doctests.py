"""Every docstring example of the package runs, as ``python -m doctest`` would run it.

The modules are every ``.py`` file of the four folders, imported by their installed names
(``calibration/core.py`` as ``sblr_rt.calibration.core``, the name its examples use); a
module without examples is not collected. Examples that need a stream or a display say
``# doctest: +SKIP`` on the line that does. Each module's examples run in a fresh folder
that holds a link to the shipped ``recordings/``, so that an example reads them by the path
a user of a clone would type and writes its files nowhere else.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from .conftest import RECORDINGS
from .test_layering import FOLDERS, ROOT, iter_modules

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    folders = {package: ROOT / folder for package, folder in FOLDERS.items()}
    names = [name for name, _, _ in iter_modules(folders) if not name.endswith("__main__")]
    finder = doctest.DocTestFinder()
    found = []
    for name in sorted(names):
        module = importlib.import_module(name)
        if any(test.examples for test in finder.find(module, name)):
            found.append(name)
    return found


@pytest.mark.parametrize("name", _modules_with_examples())
def test_doctests(name, monkeypatch, tmp_path):
    (tmp_path / "recordings").symlink_to(RECORDINGS, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    failures: list[str] = []
    for test in finder.find(module, name):
        runner.run(test, out=failures.append)
    assert not failures, "".join(failures)

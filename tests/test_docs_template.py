"""The shared docstring template: every ``%(name)s`` is filled, help texts read as such."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
import sblr_rt.cli

import sblr_rt.online
from sblr_rt.utils._docs import docdict, fill_doc, help_text


def _documented(package):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith("__main__"):  # importing it runs the command line
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(
            module, lambda o: inspect.isfunction(o) or inspect.isclass(o)
        ):
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            yield obj
            if inspect.isclass(obj):
                yield from (m for _, m in inspect.getmembers(obj, inspect.isfunction))


@pytest.mark.parametrize("package", [sblr_rt.online, sblr_rt.cli])
def test_no_docstring_keeps_a_placeholder(package):
    unfilled = [o.__qualname__ for o in _documented(package) if "%(" in (o.__doc__ or "")]
    assert not unfilled


def test_an_entry_is_indented_as_its_line_and_unknown_ones_are_refused():
    def f(timeout):
        """Do.

        Parameters
        ----------
        %(timeout)s
        """

    lines = fill_doc(f).__doc__.splitlines()
    assert lines[4] == "        timeout : float" and lines[5].startswith("            Seconds")

    def g():
        """%(nothing)s"""

    with pytest.raises(KeyError, match="nothing"):
        fill_doc(g)
    assert all(help_text(k) and not help_text(k).endswith(".") for k in docdict)
    assert "`" not in help_text("source_id")

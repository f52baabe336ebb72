"""Every Python snippet of the README and of the documentation's pages runs as written.

Each page's ```` ```python ```` blocks are joined into one script and run in a fresh
interpreter, in one folder shared by the pages, which links the shipped ``recordings/``:
the paths the snippets use are those a user of a clone types. Pages run in order, README
first, so a page may use a file an earlier one wrote (``s001.sblr.npz``). The gallery's
examples run when the documentation builds (``make docs``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from .conftest import RECORDINGS, ROOT

DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_INDENTED = re.compile(r"^[ \t]+```python", re.M)


def _pages():
    pages = [ROOT / "README.md"]
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).parts
        if rel[0] not in ("_build", "benchmarks", "generated", "auto_examples"):
            pages.append(path)
    return [p for p in pages if _FENCE.search(p.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("snippets")
    (folder / "recordings").symlink_to(RECORDINGS, target_is_directory=True)
    return folder


def test_pages_have_snippets():
    names = {p.name for p in _pages()}
    assert {"README.md", "calibration.md", "mne-moabb-dask.md"} <= names
    # README's (the guide's too), the guide's BIDS one, the prior's (README and its page)
    assert len(_calibrate_commands()) == 3


def test_no_snippet_hides_from_the_test():
    # An indented fence (inside a list item) would not be collected: keep them at column 0.
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    hidden = [
        str(p.relative_to(ROOT))
        for p in pages
        if "_build" not in p.parts and _INDENTED.search(p.read_text(encoding="utf-8"))
    ]
    assert not hidden


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_snippets_run(page, workdir):
    blocks = _FENCE.findall(page.read_text(encoding="utf-8"))
    script = workdir / f"{page.stem}_snippets.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    env = {
        **os.environ,
        "OPENBLAS_NUM_THREADS": "1",
        "MPLBACKEND": "agg",
        "QT_QPA_PLATFORM": "offscreen",
    }
    proc = subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert proc.returncode == 0, f"{page.name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def _commands(page, program="sblr-rt "):
    """Return the shell commands of ``page`` that start with ``program`` (continuations joined)."""
    text = page.read_text(encoding="utf-8").replace("\\\n", " ")
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(program)]


def _calibrate_commands():
    found = {}  # a command written on two pages runs once
    for page in (ROOT / "README.md", DOCS / "guide" / "calibration.md"):
        for command in _commands(page):
            if command.startswith("sblr-rt calibrate --") and "--stream" not in command:
                found.setdefault(command, page)
    return [(page, command) for command, page in found.items()]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "command"),
    _calibrate_commands(),
    ids=[f"{p.name}-{c.split()[2]}" for p, c in _calibrate_commands()],
)
def test_calibrate_commands_run(page, command, workdir, monkeypatch, capsys):
    # After the pages' Python ran (the BIDS recipe writes its tree): each calibrate command
    # as written, then inspect on its model, through the command line's main() in this
    # process (the console script only adds sys.exit: tests/cli/test_exit.py).
    from sblr_rt.cli import main

    monkeypatch.chdir(workdir)
    out = command.split("--out ")[1].split()[0]
    for line in (command, f"sblr-rt inspect {out}"):
        argv = shlex.split(line)[1:]
        if argv[0] == "calibrate":
            argv.append("--no-progress")
        code = main(argv)
        assert code == 0, f"{page.name}: {line}:\n{capsys.readouterr().err[-3000:]}"
    assert (workdir / out).is_file()

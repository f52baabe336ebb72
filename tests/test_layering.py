"""The house plan, proved on the syntax tree of every module (function-level imports too).

Layers, lowest first. A module may import its own unit and any unit of a *lower* rank:
nothing upward, nothing sideways (two units of the same rank never import each other).
Units map to the repository's folders: ``sblr_rt.calibration`` lives in ``calibration/``,
``sblr_rt.gui`` in ``gui/`` and ``sblr_rt.cli`` in ``cli/`` (see ``setup.py``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Folder of each top unit, as ``setup.py`` maps it.
FOLDERS = {"sblr_rt": "sblr_rt", "sblr_rt.calibration": "calibration", "sblr_rt.gui": "gui"}
FOLDERS["sblr_rt.cli"] = "cli"

#: Rank of every unit. The package root ``sblr_rt`` (version, logger, lazy facade) is 0.
LAYERS = {
    "sblr_rt.utils": -1,  # helpers below everything (docstring template, renames)
    "sblr_rt.validation": -1,  # the rules of settings and the bounds of numbers
    "sblr_rt": 0,
    "sblr_rt.model": 0,
    "sblr_rt.montage": 0,
    "sblr_rt.preprocessing": 1,
    "sblr_rt.bci_model": 2,
    "sblr_rt.io": 3,
    "sblr_rt.stream": 4,
    "sblr_rt.online": 5,
    "sblr_rt.recorder": 5,
    "sblr_rt.playback": 6,
    "sblr_rt.calibration": 7,
    "sblr_rt.gui": 8,
    "sblr_rt.cli": 9,
}

#: Third-party packages that only one unit may import.
OWNED = {"pylsl": {"sblr_rt.stream"}, "PyQt5": {"sblr_rt.gui"}, "pyqtgraph": {"sblr_rt.gui"}}


def iter_modules(folders: dict[str, Path]):
    """Yield ``(module name, path)`` for every ``.py`` file under the mapped folders."""
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if any(
                name.startswith(p + ".") for p in folders if p != package and p.startswith(package)
            ):
                continue  # belongs to a more specific mapping
            yield name, path, path.name == "__init__.py"


def imports_of(name: str, path: Path, is_package: bool, known: set[str]) -> list[tuple[str, int]]:
    """Every module ``path`` imports, at any depth of the syntax tree, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.append((sub if sub in known else module, node.lineno))
    return found


def unit_of(module: str) -> str | None:
    """The most specific unit in :data:`LAYERS` that ``module`` belongs to."""
    best = None
    for unit in LAYERS:
        if (module == unit or module.startswith(unit + ".")) and (
            best is None or len(unit) > len(best)
        ):
            best = unit
    return best


def check_tree(folders: dict[str, Path]) -> list[str]:
    """Return every violation of the house plan in the tree (empty when it holds)."""
    modules = {n: (p, pkg) for n, p, pkg in iter_modules(folders)}
    known = set(modules)
    problems = []
    graph: dict[str, set[str]] = {n: set() for n in modules}
    for name, (path, is_package) in modules.items():
        src = unit_of(name)
        if src is None:
            problems.append(f"{name} ({path}) belongs to no layer; add it to LAYERS")
            continue
        for target, line in imports_of(name, path, is_package, known):
            top = target.split(".")[0]
            if top in OWNED and src not in OWNED[top]:
                problems.append(f"{path}:{line}: {name} imports {top}, owned by {OWNED[top]}")
            if top in {"calibration", "gui", "cli"}:
                problems.append(f"{path}:{line}: {name} imports the generic name {target}")
            if top != "sblr_rt":
                continue
            dst = unit_of(target)
            if dst is None:
                continue
            if dst != src and LAYERS[dst] >= LAYERS[src] and dst != "sblr_rt":
                kind = "upward" if LAYERS[dst] > LAYERS[src] else "sideways"
                problems.append(f"{path}:{line}: {kind} import of {target} from {name}")
            resolved = target
            while resolved not in known and "." in resolved:
                resolved = resolved.rpartition(".")[0]
            if resolved in known and resolved != name:
                graph[name].add(resolved)
    problems += [f"import cycle: {' -> '.join(c)}" for c in find_cycles(graph)]
    return problems


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), as paths."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def _repo_folders() -> dict[str, Path]:
    return {package: ROOT / folder for package, folder in FOLDERS.items()}


def test_the_tree_keeps_the_house_plan():
    problems = check_tree(_repo_folders())
    assert not problems, "\n".join(problems)


def test_every_module_belongs_to_a_layer():
    names = [n for n, _, _ in iter_modules(_repo_folders())]
    assert len(names) > 50
    assert all(unit_of(n) is not None for n in names)


def _synthetic_tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {"sblr_rt": tmp_path / "sblr_rt", "sblr_rt.gui": tmp_path / "gui"}


def test_the_check_fails_on_a_function_level_upward_import(tmp_path):
    folders = _synthetic_tree(
        tmp_path,
        {
            "sblr_rt/__init__.py": "",
            "sblr_rt/model/__init__.py": "",
            "sblr_rt/model/bad.py": "def f():\n    from sblr_rt.gui import app\n",
            "gui/__init__.py": "",
            "gui/app.py": "",
        },
    )
    problems = check_tree(folders)
    assert any("upward import of sblr_rt.gui.app from sblr_rt.model.bad" in p for p in problems)


def test_the_check_fails_on_sideways_lsl_and_generic_imports(tmp_path):
    folders = _synthetic_tree(
        tmp_path,
        {
            "sblr_rt/__init__.py": "",
            "sblr_rt/online/__init__.py": "from ..recorder import recorder\nimport pylsl\n",
            "sblr_rt/recorder/__init__.py": "",
            "sblr_rt/recorder/recorder.py": "import calibration\n",
            "gui/__init__.py": "",
        },
    )
    problems = check_tree(folders)
    assert any("sideways import of sblr_rt.recorder.recorder" in p for p in problems)
    assert any("imports pylsl" in p for p in problems)
    assert any("generic name calibration" in p for p in problems)


def test_the_check_fails_on_a_cycle(tmp_path):
    folders = _synthetic_tree(
        tmp_path,
        {
            "sblr_rt/__init__.py": "",
            "gui/__init__.py": "",
            "gui/app.py": "from . import screenshot\n",
            "gui/screenshot.py": "def f():\n    from .app import TABS\n",
        },
    )
    problems = check_tree(folders)
    assert problems == ["import cycle: sblr_rt.gui.app -> sblr_rt.gui.screenshot"]


def _loaded_after_import(module: str) -> set[str]:
    code = f"import importlib, sys\nimportlib.import_module({module!r})\nprint(*sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return {m.split(".")[0] for m in out.split()}


@pytest.mark.parametrize(
    "module",
    ["sblr_rt", "sblr_rt.model", "sblr_rt.preprocessing", "sblr_rt.io", "sblr_rt.calibration"],
)
def test_estimator_and_calibration_load_neither_qt_nor_lsl(module):
    loaded = _loaded_after_import(module)
    assert not loaded & {"PyQt5", "pyqtgraph", "pylsl"}, loaded & {"PyQt5", "pyqtgraph", "pylsl"}


def test_no_generic_top_level_name_is_installed(tmp_path):
    code = "import importlib.util as u; print(u.find_spec('calibration'), u.find_spec('gui'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout
    assert out.split() == ["None", "None"]


def _library_files() -> list[Path]:
    return [p for folder in _repo_folders().values() for p in sorted(folder.rglob("*.py"))]


def test_no_two_library_modules_share_a_file_name():
    seen: dict[str, Path] = {}
    clashes = []
    for path in _library_files():
        if path.name != "__init__.py" and path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(path.name, path)
    assert not clashes, "modules named alike: " + "; ".join(clashes)


def test_at_most_six_loose_modules_at_the_root_of_the_core():
    loose = sorted(p.stem for p in (ROOT / "sblr_rt").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 6, f"loose modules at the root of sblr_rt/: {loose}"


def test_no_library_module_is_longer_than_750_lines():
    lines = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in _library_files()}
    long = {name: n for name, n in lines.items() if n > 750}
    assert not long, f"modules over 750 lines (split where a concept ends): {long}"

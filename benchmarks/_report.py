"""Benchmark reports for the documentation: each benchmark writes its own tables.

A benchmark builds :class:`Table` objects from what it measured and calls
:func:`write_report` once at the end. That writes ``docs/benchmarks/<name>.md``, a Markdown
fragment (MyST) holding the tables and, under them, how they were made: the command, the
date, the machine, the BLAS setting, the load and the software. The Benchmarks page of the
documentation includes the fragment (``{include} benchmarks/<name>.md``), so no figure
there is copied by hand: run the benchmark again and rebuild the docs.

Usage, in a benchmark::

    from benchmarks._report import Table, write_report

    table = Table(["path", "p50", "p99"], [["waveform", "11 µs", "19 µs"]], caption="...")
    write_report("online", table, blas="1 thread (threadpoolctl) in the timed code")

A benchmark puts the repository's root on ``sys.path`` (as they all do, to import
``sblr_rt`` from a clone) and imports ``from benchmarks._report import ...``. The
environment variable ``SBLR_RT_REPORTS`` sends the fragments elsewhere (the test suite
points it at a temporary folder, so that running a benchmark in a test leaves the docs
alone).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the fragments go; the Benchmarks page (docs/benchmarks.md) includes them.
DOCS_BENCHMARKS = ROOT / "docs" / "benchmarks"


@dataclasses.dataclass(frozen=True)
class Table:
    """One table of a report: a header row, rows of cells, an optional caption.

    Cells are written with ``str``: format numbers (units, digits) before.
    """

    header: Sequence[str]
    rows: Sequence[Sequence[object]]
    caption: str = ""

    def __post_init__(self):
        for i, row in enumerate(self.rows):
            if len(row) != len(self.header):
                raise ValueError(
                    f"row {i} of the table has {len(row)} cells, the header {len(self.header)}"
                )

    def to_markdown(self) -> str:
        """Return the table as Markdown (a pipe table, caption first)."""

        def line(cells):
            return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

        out = [f"{self.caption}\n"] if self.caption else []
        out += [line(self.header), "|" + "---|" * len(self.header)]
        out += [line(row) for row in self.rows]
        return "\n".join(out) + "\n"


def machine() -> str:
    """Describe the machine: CPU model, cores, memory, operating system."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    memory = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages * size / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs{memory}, {platform.system()} {platform.release()}"


def blas_setting() -> str:
    """Describe the BLAS libraries loaded in this process and their thread counts."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a dependency of sblr-rt
        return "unknown"
    pools = [
        f"{p.get('internal_api')} {p.get('version') or ''} "
        f"({p.get('num_threads')} thread{'' if p.get('num_threads') == 1 else 's'})"
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    ]
    env = ", ".join(
        f"{k}={os.environ[k]}"
        for k in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")
        if k in os.environ
    )
    text = "; ".join(pools) or "none loaded"
    return f"{text}; {env}" if env else text


def software() -> str:
    """Describe sblr-rt (with its git commit when run from a clone), Python and numpy."""
    import numpy as np

    import sblr_rt

    commit = ""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        commit = f" (git {out.stdout.strip()})"
    except (OSError, subprocess.SubprocessError):
        pass
    return (
        f"sblr-rt {sblr_rt.__version__}{commit}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )


def write_report(
    name: str,
    *tables: Table,
    notes: str = "",
    blas: str | None = None,
    command: str | None = None,
    folder: Path | None = None,
) -> Path:
    """Write the tables of benchmark ``name`` to ``docs/benchmarks/<name>.md``.

    Parameters
    ----------
    name : str
        The fragment's name, usually the benchmark's file name (``"solver"``); a
        previous fragment of that name is replaced.
    *tables : Table
        The tables, in order (at least one).
    notes : str
        Markdown written after the tables: what a reader needs to read them (the set-up,
        the sizes); keep the interpretation on the Benchmarks page.
    blas : str | None
        The BLAS setting of the timed code when it differs from the process's (e.g.
        ``"1 thread (threadpoolctl) in the solver"``); the libraries loaded and their
        thread counts are written in any case.
    command : str | None
        The command that produced the figures; default: this process's command line.
    folder : Path | None
        Where to write; default ``$SBLR_RT_REPORTS`` if set, else ``docs/benchmarks/`` of
        this repository.

    Returns
    -------
    path : Path
        The file written.
    """
    if not name.isidentifier():
        raise ValueError(f"'name' must be a plain name like 'solver', got {name!r}")
    if not tables or not all(isinstance(t, Table) for t in tables):
        raise TypeError("write_report() needs at least one Table after the name")
    if command is None:
        argv = [Path(sys.argv[0]).as_posix(), *sys.argv[1:]]
        if argv[0].startswith(ROOT.as_posix() + "/"):
            argv[0] = argv[0][len(ROOT.as_posix()) + 1 :]
        command = "python " + shlex.join(argv)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    blas_text = blas_setting()
    if blas:
        blas_text = f"{blas} (process: {blas_text})"
    parts = [f"<!-- written by benchmarks/{name}.py (benchmarks/_report.py): do not edit -->\n"]
    parts += [t.to_markdown() for t in tables]
    if notes:
        parts.append(notes.strip() + "\n")
    parts.append(
        "```{list-table}\n:class: benchmark-provenance\n\n"
        f"* - command\n  - `{command}`\n"
        f"* - date\n  - {now}\n"
        f"* - machine\n  - {machine()}, load average {load}\n"
        f"* - BLAS\n  - {blas_text}\n"
        f"* - software\n  - {software()}\n"
        "```\n"
    )
    if folder is None:
        folder = os.environ.get("SBLR_RT_REPORTS") or DOCS_BENCHMARKS
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("\n".join(parts), encoding="utf-8")
    tmp.replace(path)
    print(f"report written to {path}")
    return path

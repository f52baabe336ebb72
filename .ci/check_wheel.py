"""Build the sdist and the wheel from a clean checkout, install the wheel and use it.

What a user gets from ``pip install sblr-rt``, checked away from the source tree:

1. ``git clone`` of HEAD into a temporary folder (``--worktree``: the working tree as it
   is, for trying a change before committing it);
2. ``python -m build``: the sdist, then the wheel built from that sdist, so a module the
   sdist leaves out is missing from the wheel too;
3. the wheel holds every module of the source tree under the one ``sblr_rt`` namespace
   (``calibration/`` as ``sblr_rt.calibration``, ...) and nothing else;
4. a fresh virtual environment, the wheel installed into it with its dependencies, and,
   from a folder outside the source tree: ``sblr-rt --version``, every module imported,
   ``sblr-rt calibrate`` on two shipped recordings, ``sblr-rt inspect``,
   ``sblr_rt.load_model`` and ``predict``, and a few seconds of ``sblr-rt run`` against
   ``sblr-rt simulate`` over LSL (discovery kept on this machine).

Run it with an interpreter that has ``build`` (``make check-wheel`` uses ``.venv``).
Exits non-zero with the failing step's output on any failure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Installed package -> repository folder, as setup.py maps them.
FOLDERS = {
    "sblr_rt": "sblr_rt",
    "sblr_rt.calibration": "calibration",
    "sblr_rt.gui": "gui",
    "sblr_rt.cli": "cli",
}

IMPORT_ALL = """
import importlib, pkgutil, sys
import sblr_rt
assert "site-packages" in sblr_rt.__file__, sblr_rt.__file__
names = [m.name for m in pkgutil.walk_packages(sblr_rt.__path__, "sblr_rt.")]
for name in names:
    if name.endswith(".__main__"):  # runs the command line
        continue
    importlib.import_module(name)
print(f"imported {len(names) + 1} modules from {sblr_rt.__path__[0]}")
"""

LOAD_MODEL = """
import sys
import numpy as np
import sblr_rt
model = sblr_rt.load_model(sys.argv[1])
n_channels, n_times = len(model.ch_names), model.n_times_raw
epochs = np.random.default_rng(0).standard_normal((4, n_channels, n_times)) * 1e-5
proba = model.predict_proba(epochs)
assert proba.shape == (4, len(model.classes)), proba.shape
assert np.allclose(proba.sum(axis=1), 1.0)
print(f"load_model: {model!r}; predict_proba on 4 epochs -> {proba.shape}")
"""


def _step(title: str, cmd: list[str], *, cwd: Path, env: dict | None = None, timeout=600):
    start = time.monotonic()
    shown = ["-c ..." if "\n" in str(c) else str(c) for c in cmd]
    print(f"--- {title}: {' '.join(shown)}", flush=True)
    proc = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"check-wheel: {title} failed with exit code {proc.returncode}")
    print(f"    ok in {time.monotonic() - start:.1f} s", flush=True)
    return proc.stdout + proc.stderr


def source_modules(root: Path) -> set[str]:
    """Return the wheel paths every ``.py`` file of the source tree should have."""
    paths = set()
    for package, folder in FOLDERS.items():
        base = root / folder
        for path in base.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(base).as_posix()
            paths.add(f"{package.replace('.', '/')}/{rel}")
    return paths


def check_wheel_contents(wheel: Path, root: Path) -> int:
    """Compare the wheel's modules with the source tree; return the module count."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    in_wheel = {n for n in names if n.endswith(".py")}
    expected = source_modules(root)
    missing = sorted(expected - in_wheel)
    extra = sorted(in_wheel - expected)
    tops = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")})
    if missing or extra or tops != ["sblr_rt"]:
        raise SystemExit(
            f"check-wheel: {wheel.name} does not match the source tree: "
            f"missing {missing}, extra {extra}, top-level names {tops}"
        )
    print(f"    the wheel holds all {len(in_wheel)} modules of the source tree, under sblr_rt/")
    with zipfile.ZipFile(wheel) as zf:
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(info).decode("utf-8")
    licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    if not licence or "Project-URL: Documentation" not in metadata:
        raise SystemExit(f"check-wheel: {wheel.name} lacks the LICENSE file or project URLs")
    return len(in_wheel)


def main(argv: list[str] | None = None) -> int:
    """Run the check; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--worktree", action="store_true", help="build from the working tree, not a clone"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="sblr-rt-wheel-"))
    try:
        src = tmp / "src"
        if args.worktree:
            shutil.copytree(
                REPO,
                src,
                ignore=shutil.ignore_patterns(
                    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "docs"
                ),
            )
        else:
            _step("clone", ["git", "clone", "--quiet", "--no-local", REPO, src], cwd=tmp)
        dist = tmp / "dist"
        _step(
            "build sdist and wheel",
            [sys.executable, "-m", "build", "--outdir", dist, src],
            cwd=tmp,
        )
        (sdist,) = dist.glob("*.tar.gz")
        (wheel,) = dist.glob("*.whl")
        print(f"    {sdist.name}, {wheel.name}")
        n_modules = check_wheel_contents(wheel, src)

        venv = tmp / "venv"
        _step("fresh venv", [sys.executable, "-m", "venv", venv], cwd=tmp)
        bindir = venv / "bin"
        _step(
            "install the wheel", [bindir / "python", "-m", "pip", "install", "-q", wheel], cwd=tmp
        )

        # Everything below runs in a folder that holds no source: imports come from the venv.
        work = tmp / "work"
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(
            PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
            LSLAPICFG=str(src / "tests" / "lsl_api.cfg"),
            OPENBLAS_NUM_THREADS=env.get("OPENBLAS_NUM_THREADS", "1"),
            QT_QPA_PLATFORM="offscreen",
            MPLBACKEND="agg",
        )
        sblr_rt = bindir / "sblr-rt"
        version = _step("--version", [sblr_rt, "--version"], cwd=work, env=env).strip()
        match = re.fullmatch(r"sblr-rt (\S+)", version)
        if not match or match.group(1) not in wheel.name:
            raise SystemExit(f"check-wheel: --version says {version!r}, the wheel is {wheel.name}")
        print(f"    {version}")
        print(
            "    "
            + _step(
                "import every module", [bindir / "python", "-c", IMPORT_ALL], cwd=work, env=env
            ).strip()
        )

        recordings = src / "recordings"
        physionet = recordings / "physionet-eegmmidb-S001"
        _step(
            "calibrate on PhysioNet S001 runs 5 and 9 (EDF, cues from annotations)",
            [
                sblr_rt, "calibrate",
                "--recording", physionet / "S001R05.edf",
                "--recording", physionet / "S001R09.edf",
                "--classes", "T1=fists,T2=feet", "--tmin", "0.5", "--tmax", "3.5",
                "--features", "bandpower", "--search", "none", "--n-jobs", "1",
                "--no-progress", "--out", "s001.sblr.npz",
            ],
            cwd=work,
            env=env,
        )  # fmt: skip
        _step(
            "calibrate on BCI Competition 2003 IV (.mat, epoched)",
            [
                sblr_rt, "calibrate",
                "--recording", recordings / "bcicomp2003-IV" / "sp1s_aa_train_first216.mat",
                "--features", "waveform", "--search", "none", "--n-jobs", "1",
                "--no-progress", "--out", "bci.sblr.npz",
            ],
            cwd=work,
            env=env,
        )  # fmt: skip
        out = _step("inspect", [sblr_rt, "inspect", "s001.sblr.npz"], cwd=work, env=env)
        print("    " + out.splitlines()[0])
        for model in ("s001.sblr.npz", "bci.sblr.npz"):
            out = _step(
                f"load_model {model}",
                [bindir / "python", "-c", LOAD_MODEL, model],
                cwd=work,
                env=env,
            )
            print("    " + out.strip().splitlines()[-1])

        # The BCI competition's 28 channels are all on the simulator's 118-channel cap.
        tag = uuid.uuid4().hex[:8]
        name, source_id = f"WheelCheck-{tag}", f"wheel-check-{tag}"
        sim = subprocess.Popen(
            [
                sblr_rt, "simulate", "--name", name, "--source-id", source_id,
                "--sfreq", "100", "--duration", "30", "--hold", "5",
            ],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            out = _step(
                "run against the simulator for 4 s",
                [
                    sblr_rt, "run", "--model", "bci.sblr.npz", "--stream", name,
                    "--source-id", source_id, "--duration", "4", "--status-every", "2",
                    "--outlet-name", f"WheelCheck-Predictions-{tag}",
                ],
                cwd=work,
                env=env,
                timeout=120,
            )  # fmt: skip
        finally:
            sim.terminate()
            sim.wait(timeout=30)
        counts = [int(n) for n in re.findall(r"\] (\d+) decisions", out)]
        if not counts or counts[-1] < 10:
            raise SystemExit(f"check-wheel: run made too few decisions:\n{out[-2000:]}")
        print(f"    {counts[-1]} decisions in 4 s")
        print(
            f"check-wheel: OK ({wheel.name}, {n_modules} modules) in "
            f"{time.monotonic() - start:.0f} s"
        )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

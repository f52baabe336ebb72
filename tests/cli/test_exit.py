"""The command line's exit: the command's code, promptly, with joblib's workers alive."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time


def test_the_command_line_module_exits_with_the_command_code(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "sblr_rt.cli", "inspect", str(tmp_path / "missing.npz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 1
    assert "sblr-rt inspect: error:" in res.stderr and "missing.npz" in res.stderr


def test_the_script_exits_promptly_with_joblib_workers_alive(tmp_path):
    # joblib keeps its idle workers for 300 s; the exit must stop them, not wait for them,
    # whether the pool was started by the main thread or (as the dashboard does) another.
    script = """
        import threading
        from joblib import Parallel, delayed
        import sblr_rt.cli as cli
        def work(out):
            out.append(sum(Parallel(n_jobs=2)(delayed(abs)(-k) for k in range(4))))
        def main():
            out = []
            work(out)
            thread = threading.Thread(target=work, args=(out,), daemon=True)
            thread.start()
            thread.join()
            print(out)
            return 4
        cli.main = main
        cli.console()
        """
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert res.returncode == 4, res.stderr
    assert res.stdout.strip() == "[6, 6]"
    assert time.perf_counter() - t0 < 60

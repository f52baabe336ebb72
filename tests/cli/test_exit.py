"""The command line's exit: the code, the output and the exit handlers all survive the fast end."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(script: str, tmp_path):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_exit_now_keeps_the_code_the_buffered_output_and_the_exit_handlers(tmp_path):
    res = _run(
        """
        import atexit, logging, sys
        from sblr_rt.cli import exit_now
        logging.basicConfig(filename="log.txt", level=logging.INFO)
        logging.getLogger("x").info("logged before the end")
        atexit.register(lambda: open("handler.txt", "w").write("ran"))
        sys.stdout.write("x" * 100_000)  # buffered: a pipe, no newline
        exit_now(3)
        """,
        tmp_path,
    )
    assert res.returncode == 3, res.stderr
    assert res.stdout == "x" * 100_000
    assert (tmp_path / "handler.txt").read_text() == "ran"
    assert "logged before the end" in (tmp_path / "log.txt").read_text()


def test_exit_now_waits_for_a_thread_that_is_still_working(tmp_path):
    res = _run(
        """
        import threading, time
        from sblr_rt.cli import exit_now
        def write():
            time.sleep(0.5)
            open("written.txt", "w").write("done")
        threading.Thread(target=write).start()
        exit_now(0)
        """,
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "written.txt").read_text() == "done"


def test_the_command_line_module_exits_with_the_command_code(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "sblr_rt.cli", "inspect", str(tmp_path / "missing.npz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 1
    assert "sblr-rt inspect: error:" in res.stderr and "missing.npz" in res.stderr


def test_exit_now_with_worker_processes_alive_ends_them_and_exits(tmp_path):
    # joblib keeps its workers for minutes; the fast end must not wait for them. Started
    # from a daemon thread, as a calibration starts them, their manager thread is a daemon.
    res = _run(
        """
        import threading
        from joblib import Parallel, delayed
        from sblr_rt.cli import exit_now
        out = []
        def work():
            out.append(sum(Parallel(n_jobs=2)(delayed(abs)(-k) for k in range(4))))
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join()
        print(out[0])
        exit_now(4)
        """,
        tmp_path,
    )
    assert res.returncode == 4, res.stderr
    assert res.stdout.strip() == "6"

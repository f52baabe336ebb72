"""Run a command of the package in a child process, with its stacks if it hangs."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest


def run_diagnosed(cmd, *, timeout: float, env=None, cwd=None) -> subprocess.CompletedProcess:
    """Run ``cmd`` like :func:`subprocess.run`; on a timeout, fail with the child's stacks.

    The child runs with Python's fault handler on: past ``timeout`` it is sent SIGABRT,
    which makes it print every thread's stack before it ends, and the test fails with
    those stacks and the ends of its output, instead of a bare ``TimeoutExpired``.
    """
    env = dict(os.environ if env is None else env, PYTHONFAULTHANDLER="1")
    proc = subprocess.Popen(
        [str(c) for c in cmd], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(
            f"{cmd[2:]} did not end within {timeout:g} s; its stacks then and the end of its "
            f"stderr:\n{err[-8000:]}\nthe end of its stdout:\n{out[-3000:]}"
        )
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

"""liblsl's INFO lines do not reach the user; a user's own [log] section wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sblr_rt.stream._liblsl import LOG_LEVEL, liblsl_config


def test_config_adds_a_log_section_to_the_users_file():
    assert liblsl_config(None) == f"[log]\nlevel = {LOG_LEVEL}\n"
    user = "[multicast]\nResolveScope = machine\n"
    content = liblsl_config(user)
    assert content.startswith(user) and content.endswith(f"[log]\nlevel = {LOG_LEVEL}\n")
    assert liblsl_config("[ports]\nIPv6 = disable\n [LOG]\nlevel = 2\n") is None


@pytest.mark.lsl
def test_no_info_lines_on_stderr(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LSLAPICFG"}
    env["HOME"] = str(tmp_path)  # no ~/lsl_api/lsl_api.cfg
    # the user's file (kept local) sets no log level: the INFO lines must still go
    (tmp_path / "lsl_api.cfg").write_text("[multicast]\nResolveScope = machine\n")
    code = (
        "from sblr_rt.stream import EEGOutlet\n"
        "EEGOutlet(name='sblr-test-liblsl', ch_names=['C3', 'C4'], sfreq=100.0, "
        f"source_id='sblr-test-liblsl-{os.getpid()}')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "INFO|" not in result.stderr

"""The output lock leaves no file behind and still refuses a second run; an interrupted
command says so (issue 41)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simgap.errors import OutputExistsError
from simgap.outputs import folder_lock


def test_the_lock_file_is_gone_after_the_run_and_a_second_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lock = tmp_path / ".out.lock"
    with folder_lock(out):
        assert lock.exists()
        with pytest.raises(OutputExistsError), folder_lock(out):
            pass
    assert not lock.exists()
    with folder_lock(out):  # and the next run takes it again
        assert lock.exists()
    assert not lock.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_says_it_was_interrupted_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    env = dict(os.environ, SIMGAP_CACHE=str(tmp_path / "cache"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "simgap", "demo", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    time.sleep(4.0)  # inside the demo bench's recording
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err
    assert not out.exists()
    assert not list(tmp_path.glob(".demo-out*"))

"""How a command stops early: Ctrl-C and SIGTERM leave through the command's cleanup, and
what was kept is said."""

from __future__ import annotations

import signal
import threading
from typing import Any

from rich.console import Console

RESUMES = frozenset({"selftest", "fleet"})
"""Commands whose finished parts (trials, arms) stay in --out when stopped, to resume."""


def interrupted(console: Console, how: str, command: str) -> None:
    """Say on ``console`` that ``command`` was stopped (``how``: Ctrl-C or SIGTERM), and
    what is kept."""
    if command in RESUMES:
        what = (
            "what was finished is kept in the --out folder and what was not is not "
            "written; rerun the same command to resume"
        )
    else:
        what = "what was not finished is not written (a half-built output folder is removed)"
    console.print(
        f"interrupted ({how}): stopped before finishing; {what}", highlight=False, soft_wrap=True
    )


def _exit_on_signal(signum: int, frame: Any) -> None:
    del frame
    raise SystemExit(128 + signum)


def on_terminate() -> Any:
    """SIGTERM (a job scheduler's stop, ``kill``) exits like Ctrl-C does: through the
    command's cleanup (the half-written output folder is removed), status 143. Returns the
    previous handler (``NOT_SET`` off the main thread, where Python allows none)."""
    if threading.current_thread() is not threading.main_thread():
        return NOT_SET
    prev = signal.signal(signal.SIGTERM, _exit_on_signal)
    return signal.SIG_DFL if prev is None else prev


NOT_SET = object()
"""What :func:`on_terminate` returns where no handler was set (off the main thread)."""

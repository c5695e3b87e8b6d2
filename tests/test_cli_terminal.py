"""What reaches the terminal: the progress log ends once, the bar stays whole at 80 columns,
piped output is not wrapped at 80, and errors come without the run's preamble."""

from __future__ import annotations

import re
import time

import pytest
from rich.console import Console

from simgap.cli import _progress


def _plain(err: str) -> list[str]:
    return [re.sub(r"^\d\d:\d\d:\d\d ", "", ln) for ln in err.strip().splitlines()]


def test_the_progress_log_says_done_once_and_never_still_working_after(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_progress, "HEARTBEAT_S", 0.05)
    monkeypatch.setitem(_progress._state, "quiet", False)
    with _progress.steps("diagnose") as report:
        report("latency", 0.3)
        report("done", 1.0)  # what the ladder reports at its end
        time.sleep(0.3)  # the outputs being written: several heartbeats
    lines = _plain(capsys.readouterr().err)
    assert lines[0] == "diagnose: latency (30%, 0 s)"
    assert re.fullmatch(r"diagnose: done in \d+ s", lines[-1])
    assert sum("done" in ln for ln in lines) == 1, lines
    assert not any("100%" in ln for ln in lines)
    assert all("finishing" in ln for ln in lines[1:-1]), lines


def test_the_progress_fraction_never_goes_back(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_progress, "HEARTBEAT_S", 60.0)
    monkeypatch.setitem(_progress._state, "quiet", False)
    with _progress.steps("diagnose") as report:
        report("actuator", 0.6)
        report("actuator: fitting the ladder", 0.0)  # a branch's own step says 0
    lines = _plain(capsys.readouterr().err)
    assert lines[1] == "diagnose: actuator: fitting the ladder (60%, 0 s)"


@pytest.mark.parametrize("width", [80, 60])
def test_the_bar_keeps_its_percentage_on_a_narrow_terminal(width: int) -> None:
    console = Console(width=width, force_terminal=True, record=True, color_system=None)
    progress = _progress.progress_bar(console)
    long = progress.add_task("diagnose: actuator: identifying the joint dynamics against "
                             "the rig's model", total=1.0)
    progress.update(long, completed=0.43)
    short = progress.add_task("diagnose: latency", total=1.0)
    progress.update(short, completed=0.2)
    console.print(progress.get_renderable())
    rows = console.export_text().splitlines()
    assert len(rows) == 2
    assert rows[0].rstrip().endswith("43% 0:00:00") and "…" in rows[0]
    assert rows[1].rstrip().endswith("20% 0:00:00")
    assert all(len(r) <= width for r in rows)

"""What reaches the terminal: the progress log ends once, the bar stays whole at 80 columns,
piped output is not wrapped at 80, and errors come without the run's preamble."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from simgap.cli import _progress, app
from simgap.finding import Diagnosis
from tests.factories import write_so101_info

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def _plain(err: str) -> list[str]:
    return [re.sub(r"^\d\d:\d\d:\d\d ", "", ln) for ln in err.strip().splitlines()]


def test_the_progress_log_says_done_once_and_never_still_working_after(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
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
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
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
    long = progress.add_task(
        "diagnose: actuator: identifying the joint dynamics against the rig's model", total=1.0
    )
    progress.update(long, completed=0.43)
    short = progress.add_task("diagnose: latency", total=1.0)
    progress.update(short, completed=0.2)
    console.print(progress.get_renderable())
    rows = console.export_text().splitlines()
    assert len(rows) == 2
    assert rows[0].rstrip().endswith("43% 0:00:00") and "…" in rows[0]
    assert rows[1].rstrip().endswith("20% 0:00:00")
    assert all(len(r) <= width for r in rows)


def _summary_of_a_long_finding() -> Diagnosis:
    from simgap.finding import Finding, Verdict

    f = Finding(
        branch="actuator",
        verdict=Verdict.IMPLICATED,
        title="Joint dynamics of the shoulder and elbow against the rig's model",
        figures={"armature_ratio": 2.04, "delay_s": 0.0213},
        key_figure="delay_s",
        summary="x",
        next_step="Patch the model's armature.",
    )
    return Diagnosis(
        rig="arm",
        findings=(f,),
        stop={"verdict": "cause_found", "branch": "actuator", "reason": "r"},
    )


def test_piped_summary_keeps_a_row_on_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simgap.cli._summary import print_summary

    monkeypatch.delenv("COLUMNS", raising=False)
    print_summary(_summary_of_a_long_finding())  # captured: standard output is no terminal
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("implicated"))
    assert "Joint dynamics of the shoulder and elbow against the rig's model" in row
    assert "delay" in row and len(row) > 80
    assert out.count("implicated") == 1


def _init(tmp_path: Path, demo_model: Path, env: dict[str, str] | None = None) -> list[str]:
    ds = tmp_path / "ds"
    write_so101_info(ds)
    r = CliRunner().invoke(
        app,
        ["init", str(ds), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")],
        env=env,
    )
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


def test_piped_init_keeps_each_listed_item_on_one_line(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = _init(tmp_path, demo_model)
    units = [ln for ln in lines if "units:" in ln]
    assert len(units) == 1 and len(units[0]) > 80
    items = [i for i, ln in enumerate(lines) if ln.startswith("  - ")]
    # each item is one line: the next line is the next item or the next heading
    assert all(lines[i + 1].startswith(("  - ", "still", "next")) for i in items)


def test_columns_still_decides_when_set(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    lines = _init(tmp_path, demo_model)
    # wrapped at 60, but a word no line holds (a long path) stays whole for the terminal to
    # fold, and so do the file written and the command to run next, to copy
    assert all(
        len(ln) <= 60 or len(ln.split()) == 1
        for ln in lines
        if not ln.startswith(("wrote ", "next: "))
    ), lines
    assert sum(ln.startswith("    ") for ln in lines) >= 5  # the long items did wrap


PREAMBLE = "runs every branch the evidence allows"


@pytest.mark.parametrize(
    "case", ["no such file", "not TOML", "a missing evidence path", "a non-empty --out"]
)
def test_a_diagnose_input_error_comes_without_the_preamble(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    from tests.factories import write_rig

    monkeypatch.setitem(_progress._state, "quiet", False)
    out = tmp_path / "out"
    if case == "no such file":
        rig = tmp_path / "nope.toml"
    elif case == "not TOML":
        rig = tmp_path / "rig.toml"
        rig.write_text("name = [unclosed\n")
    elif case == "a missing evidence path":
        rig = write_rig(tmp_path, "m.xml", '[evidence]\ndataset = "nope"\n')
    else:
        rig = write_rig(tmp_path, "m.xml")
        out.mkdir()
        (out / "keep.txt").write_text("x")
    r = CliRunner().invoke(app, ["diagnose", str(rig), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "error:" in r.stderr
    assert PREAMBLE not in r.output and "a few minutes" not in r.output


def test_the_preamble_comes_once_the_inputs_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_model: Path
) -> None:
    from tests.factories import write_rig

    monkeypatch.setitem(_progress._state, "quiet", False)
    rig = write_rig(tmp_path, demo_model)  # no evidence: every branch is not measured
    r = CliRunner().invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    err = r.stderr.splitlines()
    assert sum(PREAMBLE in ln for ln in err) == 1
    first_step = next(i for i, ln in enumerate(err) if re.search(r"diagnose: \w+ \(0%", ln))
    assert PREAMBLE in err[first_step - 1]

"""How the CLI talks: help text with its units, progress on stderr, --quiet, printers that
agree with the JSON, and --help that imports nothing heavy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_help_keeps_units_in_brackets() -> None:
    r = CliRunner().invoke(app, ["diagnose", "--help"])
    assert r.exit_code == 0
    assert "control period [s]" in re.sub(r"\s+", " ", r.output)
    r = CliRunner().invoke(app, ["--help"])
    assert "--quiet" in r.output


def test_help_imports_no_numpy_or_scipy() -> None:
    code = (
        "import sys, simgap.cli; "
        "print(sorted(m for m in ('numpy', 'scipy', 'mujoco', 'torch') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"


def test_working_talks_in_plain_timestamped_lines_and_quiet_silences(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from simgap.cli import _progress

    monkeypatch.setattr(_progress, "HEARTBEAT_S", 0.05)
    monkeypatch.setitem(_progress._state, "quiet", False)
    with _progress.working("fit", "fitting six joints", 70.0):
        time.sleep(0.2)
    monkeypatch.setattr(_progress, "HEARTBEAT_S", 60.0)  # no heartbeat between the steps
    with _progress.steps("diagnose") as report:
        report("latency", 0.3)
        report("latency", 0.35)  # the same step is not repeated
        report("contact", 0.5)
    out = capsys.readouterr()
    assert out.out == ""  # progress never goes to standard output
    lines = out.err.strip().splitlines()
    assert lines[0] == "fit: fitting six joints (about 70 s)."
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d fit: still working, \d+ s", ln) for ln in lines)
    assert re.fullmatch(r"\d\d:\d\d:\d\d fit: done in \d+ s", lines[-4])
    assert [re.sub(r"^\d\d:\d\d:\d\d ", "", ln) for ln in lines[-3:]] == [
        "diagnose: latency (30%, 0 s)",
        "diagnose: contact (50%, 0 s)",
        "diagnose: done in 0 s",
    ]
    monkeypatch.setitem(_progress._state, "quiet", True)
    with _progress.working("fit", "fitting", 5.0), _progress.steps("d") as report:
        report("x", 0.1)
    assert capsys.readouterr().err == ""


def test_controller_printer_agrees_with_identified(capsys: pytest.CaptureFixture[str]) -> None:
    from simgap.cli.controller import print_report

    rep = {
        "verdict": "inconclusive",
        "loss_before": 0.0123456,
        "loss_after": 0.0098765,
        "best": "least_squares",
        "cond": 1.23e7,
        "params": {"j1": {"kp": 458.3012, "kv": 3.3333}, "j2": {"kp": 100.0, "kv": 1.0}},
        "intervals": {"j1": {"kp": 0.4146504668639266, "kv": None}, "j2": {"kp": 1.5, "kv": 0.1}},
        "identified": {"j1": {"kp": False, "kv": False}, "j2": {"kp": True, "kv": True}},
        "why": {"j1.kp": "flat: the loss moves 0.1% over the bounds"},
    }
    print_report(rep)
    out = capsys.readouterr().out
    j1 = next(ln for ln in out.splitlines() if ln.strip().startswith("j1:"))
    assert "not identified" in j1 and "458" not in j1 and "+-" not in j1
    j2 = next(ln for ln in out.splitlines() if ln.strip().startswith("j2:"))
    assert "kp 100 +- 1.5" in j2 and "kv 1.00 +- 0.10" in j2
    assert "0.0123 -> 0.00988" in out and "0.4146504668639266" not in out


def test_trials_for_n_prints_lines_not_a_dict() -> None:
    r = CliRunner().invoke(app, ["trials", "--p1", "0.5", "--p2", "0.8", "--n", "30"])
    assert r.exit_code == 0, r.output
    assert "{" not in r.output and "power: fleiss" in r.output


def test_contact_lint_groups_the_same_problem(demo_model: Path) -> None:
    r = CliRunner().invoke(app, ["contact", "lint", str(demo_model)])
    assert r.exit_code == 0, r.output
    m = re.search(r"(\d+) problem\(s\) of (\d+) kind\(s\)", r.output)
    assert m and int(m.group(1)) > int(m.group(2))
    assert r.output.count("Fix:") == int(m.group(2))


def test_diagnose_accepts_the_rig_folder(tmp_path: Path) -> None:
    from simgap.cli.diagnose import rig_file

    (tmp_path / "rig.toml").write_text("")
    assert rig_file(tmp_path) == tmp_path / "rig.toml"
    assert rig_file(tmp_path / "rig.toml") == tmp_path / "rig.toml"
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(app, ["diagnose", str(empty), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "folder without rig.toml" in r.output
    assert "simgap init" in r.output

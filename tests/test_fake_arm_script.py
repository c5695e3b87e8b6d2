"""``simgap fake-arm SCRIPT`` (issue 33): the script is an input (no trace or JSON over
it), it runs in-process with the user's privileges and says so, its own exception is the
script's error with its traceback (exit 1, not "a bug in simgap"), and a script that calls
sys.exit early says so, keeping the trace recorded until then."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.fakearm import script as fs

runner = CliRunner()

_STEP = """
def step(robot):
    obs = robot.get_observation()
    robot.send_action({k: v for k, v in obs.items() if k.endswith(".pos")})
"""


def _script(tmp_path: Path, body: str, name: str = "deploy.py") -> Path:
    p = tmp_path / name
    p.write_text(_STEP + body)
    return p


def _msg(r: object) -> str:
    return " ".join(r.stderr.split())  # type: ignore[attr-defined]


def test_trace_onto_the_script_is_refused_before_it_runs(tmp_path: Path) -> None:
    """The reproduction: --trace onto the script overwrote it (exit 0)."""
    s = _script(
        tmp_path,
        "def run(robot):\n    robot.connect()\n    step(robot)\n"
        "    open(__file__ + '.ran', 'w').close()\n",
    )
    text = s.read_text()
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(s)])
    assert r.exit_code == 2, r.output
    assert s.read_text() == text and not Path(str(s) + ".ran").exists()
    assert "--trace" in r.stderr or "trace" in r.stderr
    r = runner.invoke(
        app, ["fake-arm", str(s), "--trace", str(tmp_path / "t.jsonl"), "--json", str(s)]
    )
    assert r.exit_code == 2 and s.read_text() == text
    with pytest.raises(Exception, match="trace"):
        fs.run_script(s, s)
    assert s.read_text() == text


def test_an_exception_in_the_script_is_the_scripts_error(tmp_path: Path) -> None:
    """The reproduction: it was "a bug in simgap", exit 3."""
    s = _script(
        tmp_path,
        "def run(robot):\n    robot.connect()\n    step(robot)\n"
        "    helper()\n\ndef helper():\n    raise ValueError('my own mistake')\n",
    )
    trace = tmp_path / "t.jsonl"
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(trace)])
    assert r.exit_code == 1, r.output
    err = r.stderr
    assert "bug in simgap" not in err and "internal error" not in err
    assert "Traceback" in err and "ValueError: my own mistake" in err
    assert f"{s}" in " ".join(err.split()) or "deploy.py" in err
    assert "line 11" in err and "helper()" in err  # the script's own frames
    assert "script.py" not in err  # simgap's runner is not shown as the culprit
    assert trace.is_file() and "written" in _msg(r)  # what was recorded is kept


def test_an_exception_at_import_is_the_scripts_error(tmp_path: Path) -> None:
    s = _script(tmp_path, "import nonexistent_module_xyz\n")
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(tmp_path / "t.jsonl")])
    assert r.exit_code == 1 and "ModuleNotFoundError" in r.stderr
    assert "No trace was written" in _msg(r)
    with pytest.raises(fs.ScriptError):
        fs.run_script(s, tmp_path / "u.jsonl")


def test_sys_exit_early_says_so_and_keeps_the_trace(tmp_path: Path) -> None:
    """The reproduction: sys.exit(0) ended in exit 0 with no word."""
    s = _script(
        tmp_path,
        "import sys\n\ndef run(robot):\n    robot.connect()\n"
        "    step(robot)\n    sys.exit(0)\n    step(robot)\n",
    )
    trace = tmp_path / "t.jsonl"
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(trace)])
    msg = _msg(r)
    assert r.exit_code == 0, r.output
    assert "sys.exit(0)" in msg and "deploy.py:10" in msg and "before run(robot) returned" in msg
    assert trace.is_file() and "audited below" in msg and "trace:" in r.stdout
    s.write_text(s.read_text().replace("sys.exit(0)", "sys.exit(3)"))
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(tmp_path / "u.jsonl")])
    assert r.exit_code == 1 and "sys.exit(3)" in _msg(r)


def test_sys_exit_before_connecting_says_no_trace(tmp_path: Path) -> None:
    s = _script(tmp_path, "import sys\nsys.exit('no arm today')\n")
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(tmp_path / "t.jsonl")])
    assert r.exit_code == 1 and "No trace was written" in _msg(r)
    assert not (tmp_path / "t.jsonl").exists()
    with pytest.raises(fs.ScriptExit) as e:
        fs.run_script(s, tmp_path / "t.jsonl")
    assert e.value.code == "no arm today" and not e.value.trace_written


def test_help_says_the_script_runs_with_your_privileges() -> None:
    r = runner.invoke(app, ["fake-arm", "--help"])
    assert r.exit_code == 0 and "privileges" in " ".join(r.output.split())
    doc = (Path(__file__).parents[1] / "docs" / "plumbing.md").read_text()
    assert "privileges" in doc


_HOSTILE = {
    "raise_at_import": ("raise RuntimeError('x')\n", 1),
    "base_exception": (
        "class Mine(BaseException):\n    pass\n\ndef run(robot):\n"
        "    robot.connect()\n    raise Mine('odd')\n",
        1,
    ),
    "recursion": ("def run(robot):\n    run(robot)\n", 1),
    "bad_action": (
        "def run(robot):\n    robot.connect()\n    robot.send_action({'nope.pos': 1.0})\n",
        1,
    ),
    "no_run": ("x = 1\n", 2),
    "run_not_callable": ("run = 3\n", 2),
    "exit_none": (
        "import sys\ndef run(robot):\n    robot.connect()\n    step(robot)\n    sys.exit()\n",
        0,
    ),
    "exit_string": ("import sys\ndef run(robot):\n    robot.connect()\n    sys.exit('bye')\n", 1),
    "raise_systemexit_at_import": ("raise SystemExit(0)\n", 1),
    "syntax_error": ("def run(robot)\n    pass\n", 1),
    "connects_and_steps": ("def run(robot):\n    robot.connect()\n    step(robot)\n", 0),
    "never_connects": ("def run(robot):\n    pass\n", 2),
}


@pytest.mark.parametrize("case", sorted(_HOSTILE))
def test_hostile_scripts_never_end_in_an_internal_error(tmp_path: Path, case: str) -> None:
    body, code = _HOSTILE[case]
    s = _script(tmp_path, body)
    text = s.read_text()
    r = runner.invoke(app, ["fake-arm", str(s), "--trace", str(tmp_path / "t.jsonl")])
    assert r.exit_code == code, (case, r.output)
    assert "internal error" not in r.output and "bug in simgap" not in r.output
    assert s.read_text() == text

"""``simgap actuator --validate``: repeatable and as a list; a log named both as training
and as validation is an error."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from simgap.cli import app
from tests.test_actuator_cli import _csv

runner = CliRunner()


def _held(tmp_path: Path, args: list[str]) -> list[float]:
    out = tmp_path / "a.json"
    res = runner.invoke(app, ["actuator", *args, "--format", "csv", "--no-net",
                              "--json", str(out)])
    assert res.exit_code == 0, res.output
    rung = json.loads(out.read_text())["joints"]["j"]["rungs"][0]
    return rung["validation_per_log_rad"]


def test_validate_as_a_list_and_repeated(tmp_path: Path) -> None:
    a, b, c, d = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(4))
    as_list = _held(tmp_path, [a, b, "--validate", c, d])
    repeated = _held(tmp_path, [a, b, "--validate", c, "--validate", d])
    assert len(as_list) == 2 and as_list == repeated           # both held out, same fit
    one = _held(tmp_path, [a, b, d, "--validate", c])
    assert len(one) == 1
    doc = json.loads((tmp_path / "a.json").read_text())
    assert "selected on the --validate logs" in doc["selection_note"]


def test_log_named_as_training_and_validation_is_an_error(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    res = runner.invoke(app, ["actuator", a, b, "--format", "csv", "--validate", b,
                              "--json", str(tmp_path / "x.json")])
    assert res.exit_code != 0
    assert "both as training and as validation" in res.output and "1.csv" in res.output
    assert not (tmp_path / "x.json").exists()


def test_a_training_log_named_twice_or_copied_is_an_error(tmp_path: Path) -> None:
    """A log trained on twice would be held out against its own copy (a new user's run
    scored 0.006 rad that way, against 0.019 on logs really held out)."""
    import shutil

    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    res = runner.invoke(app, ["actuator", a, b, a, "--format", "csv",
                              "--json", str(tmp_path / "x.json")])
    assert res.exit_code == 2, res.output
    assert "named twice" in res.output and "Fix: name each log once" in res.output
    copy = tmp_path / "copy_of_0.csv"
    shutil.copy(a, copy)
    res = runner.invoke(app, ["actuator", a, b, "--format", "csv", "--validate", str(copy),
                              "--json", str(tmp_path / "x.json")])
    assert res.exit_code == 2, res.output
    assert "hold the same data" in res.output and "copy_of_0.csv" in res.output
    assert not (tmp_path / "x.json").exists()


def test_json_target_is_checked_before_the_fit(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    (tmp_path / "afile").write_text("x")
    for target, words in ((tmp_path, "is a folder"),
                          (tmp_path / "afile" / "x.json", "is a file")):
        res = runner.invoke(app, ["actuator", a, b, "--format", "csv", "--no-net",
                                  "--json", str(target)])
        assert res.exit_code == 2, res.output
        assert "--json" in res.output and words in res.output and "Fix:" in res.output
        assert "Traceback" not in res.output

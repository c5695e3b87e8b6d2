"""``simgap actuator --validate``: repeatable and as a list; a log named both as training
and as validation is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.outputs import resolve_paths
from tests.test_actuator_cli import _csv

runner = CliRunner()


def _held(tmp_path: Path, args: list[str]) -> list[float]:
    """The first rung's error on each --validate log (the test logs)."""
    out = tmp_path / "a.json"
    res = runner.invoke(app, ["actuator", *args, "--format", "csv", "--no-net", "--json", str(out)])
    assert res.exit_code == 0, res.output
    rung = json.loads(out.read_text())["joints"]["j"]["rungs"][0]
    return rung["test_per_log_rad"]


def test_validate_as_a_list_and_repeated(tmp_path: Path) -> None:
    a, b, c, d = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(4))
    as_list = _held(tmp_path, [a, b, "--validate", c, d])
    repeated = _held(tmp_path, [a, b, "--validate", c, "--validate", d])
    assert len(as_list) == 2 and as_list == repeated  # both held out, same fit
    one = _held(tmp_path, [a, b, d, "--validate", c])
    assert len(one) == 1
    doc = json.loads((tmp_path / "a.json").read_text())
    assert "independent test" in doc["selection_note"]
    assert "selected on the --validate logs" not in doc["selection_note"]


def _refused(args: list[str]) -> str:
    """Run ``simgap actuator ARGS``; assert it is refused as bad input (exit 2, no
    traceback); return its output."""
    res = runner.invoke(app, ["actuator", *args])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    return res.output


def _run(tmp_path: Path, name: str, args: list[str]) -> dict:
    out = tmp_path / f"{name}.json"
    res = runner.invoke(app, ["actuator", *args, "--format", "csv", "--no-net", "--json", str(out)])
    assert res.exit_code == 0, res.output
    return resolve_paths(json.loads(out.read_text()), tmp_path)  # relative to the JSON's folder


def test_validate_logs_are_left_out_of_the_selection(tmp_path: Path) -> None:
    """The --validate logs change nothing the training logs decide (rungs, their fits,
    their held-out scores, the selection); they only add each rung's test error, which is
    the fit on all training logs replayed on them."""
    a, b, c, d = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(4))
    alone = _run(tmp_path, "alone", [a, b, c])["joints"]["j"]
    tested = _run(tmp_path, "tested", [a, b, c, "--validate", d])["joints"]["j"]
    assert tested["selected"] == alone["selected"]
    assert tested["held_out"] == alone["held_out"] == "leave-one-trajectory-out"
    for r0, r1 in zip(alone["rungs"], tested["rungs"], strict=True):
        assert r1["model"] == r0["model"]
        assert r1["validation_mae_rad"] == r0["validation_mae_rad"]
        assert r1["params"] == r0["params"]
        assert len(r1["test_per_log_rad"]) == 1 and "test_mae_rad" not in r0
    assert tested["test_logs"] == [d]
    sel = next(r for r in tested["rungs"] if r["model"] == tested["selected"])
    assert tested["test_mae_rad"] == sel["test_mae_rad"]
    # the test error is the fit on a, b, c replayed on d: the same number as leave-one-out
    # over a, b, c, d gives d (its fold fits a, b, c alone; the delay_lag fit is the same
    # deterministic search in every row)
    with_d = _run(tmp_path, "with_d", [a, b, c, d])["joints"]["j"]
    lag_t = next(r for r in tested["rungs"] if r["model"] == "delay_lag")
    lag_d = next(r for r in with_d["rungs"] if r["model"] == "delay_lag")
    assert lag_t["test_per_log_rad"][0] == pytest.approx(
        lag_d["validation_per_log_rad"][3], rel=1e-9
    )
    assert lag_t["test_per_log_rad"][0] != lag_d["train_mae_rad"]


def test_one_training_log_selects_on_the_validate_logs_and_says_so(tmp_path: Path) -> None:
    a, c = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    doc = _run(tmp_path, "one", [a, "--validate", c])
    j = doc["joints"]["j"]
    assert j["held_out"] == "validate" and "test_logs" not in j
    assert j["held_out_logs"] == [c]
    assert "selected on the --validate logs" in doc["selection_note"]


def test_log_named_as_training_and_validation_is_an_error(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    res = runner.invoke(
        app,
        ["actuator", a, b, "--format", "csv", "--validate", b, "--json", str(tmp_path / "x.json")],
    )
    assert res.exit_code != 0
    assert "both as training and as validation" in res.output and "1.csv" in res.output
    assert not (tmp_path / "x.json").exists()


def test_a_training_log_named_twice_or_copied_is_an_error(tmp_path: Path) -> None:
    """A log trained on twice would be held out against its own copy (a new user's run
    scored 0.006 rad that way, against 0.019 on logs really held out)."""
    import shutil

    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    res = runner.invoke(
        app, ["actuator", a, b, a, "--format", "csv", "--json", str(tmp_path / "x.json")]
    )
    assert res.exit_code == 2, res.output
    assert "named twice" in res.output and "Fix: name each log once" in res.output
    copy = tmp_path / "copy_of_0.csv"
    shutil.copy(a, copy)
    res = runner.invoke(
        app,
        [
            "actuator",
            a,
            b,
            "--format",
            "csv",
            "--validate",
            str(copy),
            "--json",
            str(tmp_path / "x.json"),
        ],
    )
    assert res.exit_code == 2, res.output
    assert "hold the same data" in res.output and "copy_of_0.csv" in res.output
    assert not (tmp_path / "x.json").exists()


def test_json_target_is_checked_before_the_fit(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    (tmp_path / "afile").write_text("x")
    for target, words in ((tmp_path, "is a folder"), (tmp_path / "afile" / "x.json", "is a file")):
        out = _refused([a, b, "--format", "csv", "--no-net", "--json", str(target)])
        assert "--json" in out and words in out and "Fix:" in out


def test_validate_without_a_log_or_swallowing_the_training_logs_is_refused(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    x = str(tmp_path / "x.json")
    for args in ([a, b, "--validate", "--format", "csv"], [a, b, "--format", "csv", "--validate"]):
        assert "needs at least one log" in _refused([*args, "--json", x])
    out = _refused(["--format", "csv", "--validate", a, b, "--json", x])
    assert "no training logs" in out and "before --validate" in out
    assert not (tmp_path / "x.json").exists()


def test_json_onto_an_input_is_refused_before_the_fit(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    before = Path(b).read_bytes()
    out = _refused([a, "--format", "csv", "--validate", b, "--json", b])
    assert "apart from every input" in out
    assert "fitting" not in out  # refused before any work began
    assert Path(b).read_bytes() == before


def test_a_csv_given_to_format_bam_points_at_format_csv(tmp_path: Path) -> None:
    a, b = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(2))
    assert "--format csv" in _refused([a, b, "--format", "bam", "--json", str(tmp_path / "x.json")])


def test_a_timestamp_gap_is_refused_not_resampled(tmp_path: Path) -> None:
    """A last timestamp of 1e30 s once asked the resampler for 1e32 samples (an internal
    error found by fuzzing); a log that is mostly gap is now refused, naming the gap."""
    a, b = (_csv(tmp_path / f"{i}.csv", i) for i in range(2))
    lines = b.read_text().splitlines()
    last = lines[-1].split(",")
    lines[-1] = ",".join(["1e30", *last[1:]])
    b.write_text("\n".join(lines) + "\n")
    out = _refused(
        [str(a), str(b), "--format", "csv", "--no-net", "--json", str(tmp_path / "x.json")]
    )
    assert "continuous recording" in out and "split the log at the gap" in out

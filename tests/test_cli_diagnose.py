import json
from pathlib import Path

from typer.testing import CliRunner

from simgap.cli import app
from tests.factories import write_rig

runner = CliRunner()


def test_diagnose_names_all_missing_evidence(tmp_path: Path) -> None:
    rig = write_rig(
        tmp_path, "m.xml", '[evidence]\ntiming_logs = ["a.jsonl", "b.jsonl"]\ndataset = "nope"\n'
    )
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert "a.jsonl" in r.stderr and "b.jsonl" in r.stderr and "nope" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_diagnose_refuses_non_empty_out(tmp_path: Path) -> None:
    rig = write_rig(tmp_path, "m.xml")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(out)])
    assert r.exit_code == 2 and "--force" in r.stderr


def test_demo_writes_findings_and_report(demo_run: tuple[Path, Path, str]) -> None:
    out, _, output = demo_run
    for branch in ("latency", "contact", "actuator", "appearance", "plumbing"):
        assert branch in output  # the terminal summary table names every branch
    d = json.loads((out / "findings.json").read_text())
    assert {"findings", "stop"} <= set(d)
    assert {f["branch"] for f in d["findings"]} >= {"latency"}
    html = (out / "report.html").read_text()
    assert html.startswith("<!doctype html>") and "http://" not in html.replace(
        "http://www.w3.org/2000/svg", ""
    )

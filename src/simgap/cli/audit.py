"""``simgap audit TRACE`` and ``simgap fake-arm SCRIPT``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from simgap.cli._app import app, console, handles_errors, json_target, print_findings, write_json
from simgap.cli._progress import working


@app.command()
@handles_errors
def audit(
    trace: Path = typer.Argument(..., help="A deployment trace (JSON Lines, docs/plumbing.md)."),
    rig: Path | None = typer.Option(None, "--rig", help="The rig.toml: its control period "
                                    "and policy server are checked against the trace."),
    json_path: Path | None = typer.Option(None, "--json", callback=json_target,
                                          help="Write the audit as JSON."),
) -> None:
    """Check a deployment trace for plumbing bugs (torque jump, gripper unit, stale frames,
    limits, rate, checkpoint, temperature, policy server)."""
    from simgap.branches.plumbing import run_audit

    report = run_audit(trace, rig)
    print_findings(f"simgap audit: {trace.name}", list(report.findings))
    skipped = report.to_dict()["skipped"]
    if skipped:
        console.print(escape(f"not checked (no evidence in the trace): {', '.join(skipped)}"),
                      highlight=False)
    write_json(json_path, report.to_dict())


@app.command("fake-arm")
@handles_errors
def fake_arm(
    script: Path = typer.Argument(..., help="A Python deployment script defining "
                                  "run(robot) (see docs/plumbing.md)."),
    trace: Path = typer.Option(..., "--trace", help="Where to write the trace."),
    degrees: bool = typer.Option(True, "--degrees/--m100", help="Body joints in degrees "
                                 "(LeRobot's use_degrees) or -100..100."),
    camera: bool = typer.Option(False, "--camera", help="Render the wrist camera (64x64)."),
    realtime: bool = typer.Option(False, "--realtime", help="Follow the wall clock."),
    model: Path | None = typer.Option(None, "--model", help="MJCF of the arm (default: the "
                                      "bundled demo SO-101); six position actuators "
                                      "shoulder_pan .. gripper."),
    rig: Path | None = typer.Option(None, "--rig", help="Audit the trace against this rig."),
    json_path: Path | None = typer.Option(None, "--json", callback=json_target,
                                          help="Write the audit as JSON."),
) -> None:
    """Run a deployment script against the fake SO-101, write its trace and audit it."""
    from simgap.branches.plumbing import run_audit
    from simgap.fakearm.script import run_script

    with working("fake-arm", f"running {script.name} against the simulated SO-101"
                 + (" in real time" if realtime else "")):
        run_script(script, trace, use_degrees=degrees, camera=camera, realtime=realtime,
                   model_path=model)
    console.print(f"trace: {trace}", highlight=False)
    report = run_audit(trace, rig)
    for f in report.findings:
        console.print(escape(f"{f.verdict.value:12s} {f.title}: {f.summary}"), highlight=False)
    write_json(json_path, report.to_dict())

"""``simgap audit TRACE`` and ``simgap fake-arm SCRIPT``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from simgap.cli._app import (
    app,
    console,
    err_console,
    handles_errors,
    json_target,
    print_findings,
    write_json,
)
from simgap.cli._progress import working


@app.command()
@handles_errors
def audit(
    trace: Path = typer.Argument(..., help="A deployment trace (JSON Lines, docs/plumbing.md)."),
    rig: Path | None = typer.Option(
        None,
        "--rig",
        help="The rig.toml: its control period and policy server are checked against the trace.",
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the audit as JSON."
    ),
) -> None:
    """Check a deployment trace for plumbing bugs (torque jump, gripper unit, stale frames,
    limits, rate, checkpoint, temperature, policy server)."""
    from simgap.branches.plumbing import run_audit

    report = run_audit(trace, rig)
    print_findings(f"simgap audit: {trace.name}", list(report.findings))
    skipped = report.to_dict()["skipped"]
    if skipped:
        console.print(
            escape(f"not checked (no evidence in the trace): {', '.join(skipped)}"), highlight=False
        )
    write_json(json_path, report.to_dict())


@app.command("fake-arm")
@handles_errors
def fake_arm(
    script: Path = typer.Argument(
        ...,
        help="A Python deployment script defining "
        "run(robot) (see docs/plumbing.md). It runs inside simgap's "
        "process with your privileges, as 'python SCRIPT' would: "
        "run only scripts you trust.",
    ),
    trace: Path = typer.Option(
        ..., "--trace", help="Where to write the trace (a new file: never the script or the model)."
    ),
    degrees: bool = typer.Option(
        True,
        "--degrees/--m100",
        help="Body joints in degrees (LeRobot's use_degrees) or -100..100.",
    ),
    camera: bool = typer.Option(False, "--camera", help="Render the wrist camera (64x64)."),
    realtime: bool = typer.Option(False, "--realtime", help="Follow the wall clock."),
    model: Path | None = typer.Option(
        None,
        "--model",
        help="MJCF of the arm (default: the "
        "bundled demo SO-101); six position actuators "
        "shoulder_pan .. gripper.",
    ),
    rig: Path | None = typer.Option(None, "--rig", help="Audit the trace against this rig."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the audit as JSON."
    ),
) -> None:
    """Run a deployment script against the fake SO-101, write its trace and audit it.

    The script is ordinary Python, run in this process with your privileges. An exception
    in it is reported with its traceback (exit status 1); a script that calls sys.exit
    before run(robot) returns is said to have done so."""
    from simgap.branches.plumbing import run_audit
    from simgap.fakearm.script import ScriptError, ScriptExit, run_script
    from simgap.outputs import check_not_input, note_input

    for p in (script, model, rig):
        if p is not None:
            note_input(p)
    check_not_input(trace)  # before the script runs: never over an input
    if json_path is not None:
        check_not_input(json_path)
    status = 0
    try:
        with working(
            "fake-arm",
            f"running {script.name} against the simulated SO-101"
            + (" in real time" if realtime else ""),
        ):
            run_script(
                script,
                trace,
                use_degrees=degrees,
                camera=camera,
                realtime=realtime,
                model_path=model,
            )
    except ScriptError as e:
        err_console.print(
            f"[bold red]error in the deployment script[/bold red] "
            f"{escape(str(script))} (not in simgap):",
            highlight=False,
            soft_wrap=True,
        )
        err_console.print(escape(e.report.rstrip()), highlight=False, soft_wrap=True, markup=False)
        err_console.print(
            escape(_trace_note(trace, e.trace_written, audited=False)),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=1) from None
    except ScriptExit as e:
        err_console.print(
            escape(
                f"{e} (exit code {e.code!r}). " + _trace_note(trace, e.trace_written, audited=True)
            ),
            highlight=False,
            soft_wrap=True,
        )
        if not e.trace_written:
            raise typer.Exit(code=1) from None
        status = 0 if e.clean else 1
    console.print(f"trace: {trace}", highlight=False)
    report = run_audit(trace, rig)
    for f in report.findings:
        console.print(escape(f"{f.verdict.value:12s} {f.title}: {f.summary}"), highlight=False)
    write_json(json_path, report.to_dict())
    if status:
        raise typer.Exit(code=status)


def _trace_note(trace: Path, written: bool, *, audited: bool) -> str:
    if written:
        return f"The trace recorded until then was written to {trace}" + (
            " and is audited below." if audited else "."
        )
    return (
        f"No trace was written to {trace} (the script stopped before it connected the "
        "arm, or the arm recorded nothing)."
    )

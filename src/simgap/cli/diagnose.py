"""``simgap diagnose`` and ``simgap demo``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from simgap.cli._app import app, console, handles_errors
from simgap.diagnose import diagnose_rig
from simgap.finding import Diagnosis

_COLORS = {"implicated": "red", "eliminated": "green", "inconclusive": "yellow",
           "not_measured": "dim"}


def print_summary(diagnosis: Diagnosis) -> None:
    """The terminal summary table: branch, verdict, key figure, next step."""
    table = Table(title=f"simgap diagnosis: {diagnosis.rig}", show_lines=False)
    for col in ("branch", "finding", "verdict", "key figure", "next step"):
        table.add_column(col, overflow="fold")
    for f in diagnosis.findings:
        kv = f.key_value
        key = f"{f.key_figure} = {kv:.4g}" if isinstance(kv, float) else (
            f"{f.key_figure} = {kv}" if kv is not None else "")
        color = _COLORS[f.verdict.value]
        table.add_row(escape(f.branch), escape(f.title),
                      f"[{color}]{f.verdict.value}[/{color}]", escape(key), escape(f.next_step))
    console.print(table)
    stop = diagnosis.stop
    console.print(escape(f"stop: {stop.get('verdict')}"
                         + (f" at {stop.get('branch')}" if stop.get("branch") else "")
                         + f". {stop.get('reason', '')}"), highlight=False)


def _run(rig: Path, out: Path, force: bool, control_dt: float | None,
         ray: str | None = None) -> None:
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("diagnose", total=1.0)

        def report(msg: str, frac: float) -> None:
            progress.update(task, description=f"diagnose: {msg}", completed=frac)

        diagnosis = diagnose_rig(rig, out, force=force, progress=report, control_dt_s=control_dt,
                                 ray_address=ray)
    print_summary(diagnosis)
    console.print(f"findings: {out / 'findings.json'}\nreport:   {out / 'report.html'}",
                  highlight=False)


@app.command()
@handles_errors
def diagnose(
    rig: Path = typer.Argument(..., help="The rig.toml describing the setup and its evidence."),
    out: Path = typer.Option(..., "--out", help="Folder for findings.json, report.html and "
                                                "artifacts."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder."),
    control_dt: float | None = typer.Option(None, "--control-dt",
                                            help="Override the simulated control period [s]."),
    ray: str | None = typer.Option(None, "--ray", help="Run the fits' candidate batches on "
                                   "Ray: a cluster ADDRESS ('auto', 'ray://host:10001') or "
                                   "'local' to start one here."),
) -> None:
    """Run every branch the evidence allows, in cost order, and write the report."""
    _run(rig, out, force, control_dt, ray)


@app.command()
@handles_errors
def demo(
    out: Path = typer.Option(Path("simgap-demo"), "--out", help="Folder for the report."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder."),
    cache: Path | None = typer.Option(None, "--cache", help="Where the demo bench recording "
                                      "is generated (default: $SIMGAP_CACHE or "
                                      "~/.cache/simgap/demo)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the demo bench."),
) -> None:
    """Diagnose the bundled demo rig: a synthetic bench with known, planted faults."""
    from simgap.demo import prepare_demo

    rig = prepare_demo(cache, seed=seed)
    console.print(f"demo rig: {rig}", highlight=False)
    _run(rig, out, force, None)

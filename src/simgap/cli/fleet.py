"""``simgap fleet RIG... --out DIR``: diagnose every arm, then the fleet's spread."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from simgap.cli._app import app, console, handles_errors
from simgap.cli._ray import ALLOW_RIG_COMPUTE_HELP, RAY_HELP, ray_address

_COLORS = {
    "implicated": "red",
    "eliminated": "green",
    "inconclusive": "yellow",
    "not_measured": "dim",
    "not_run": "dim",
}


@app.command()
@handles_errors
def fleet(
    rigs: list[Path] = typer.Argument(
        ..., help="Each arm's rig.toml (one arm, or one arm on one day, per rig)."
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Fleet folder: one folder per arm, "
        "fleet.json and fleet.html. An earlier run's "
        "folder is resumed.",
    ),
    ray: str | None = typer.Option(
        None, "--ray", callback=ray_address, help=RAY_HELP + " Default: local processes."
    ),
    jobs: int | None = typer.Option(
        None, "--jobs", min=1, help="Rigs at once (default: the CPU count)."
    ),
    allow_rig_compute: bool = typer.Option(
        False, "--allow-rig-compute", help=ALLOW_RIG_COMPUTE_HELP
    ),
) -> None:
    """Diagnose every rig into its own folder, in parallel, then aggregate the fleet.

    No rig's files are ever written: an --out whose arm folders would hold or lie inside a
    rig's inputs is refused before any work. Stopping the fleet (Ctrl-C, SIGTERM) stops
    its workers; fleet.json, rewritten after each arm, says which arms are done."""
    from simgap.fleet.run import run_fleet

    results, summary = run_fleet(rigs, out, ray=ray, jobs=jobs, allow_rig_compute=allow_rig_compute)
    table = Table(title=f"simgap fleet: {len(summary.arms)} arms")
    table.add_column("arm")
    for b in summary.branches:
        table.add_column(b)
    for a in summary.arms:
        cells = [summary.verdicts[a][b] for b in summary.branches]
        table.add_row(escape(a), *(f"[{_COLORS.get(v, 'dim')}]{v}[/]" for v in cells))
    console.print(table)
    for o in summary.outliers:
        console.print(escape(o.sentence), highlight=False)
    if not summary.outliers:
        console.print("no arm lies off the fleet by more than its own interval", highlight=False)
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        console.print(f"[red]failed[/red] {escape(r.name)}: {escape(r.error)}", highlight=False)
    console.print(f"fleet:  {out / 'fleet.json'}\nreport: {out / 'fleet.html'}", highlight=False)
    if failed:
        raise typer.Exit(code=1)

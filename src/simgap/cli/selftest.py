"""``simgap selftest RIG --out DIR``: known-truth recovery on the user's own rig."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from simgap.cli._app import app, console, handles_errors, shown_path
from simgap.cli._progress import say
from simgap.cli._ray import RAY_HELP, ray_address
from simgap.cli.diagnose import rig_file
from simgap.selftest.sizes import DEFAULT_TRIALS, THOROUGH_TRIALS


@app.command()
@handles_errors
def selftest(
    rig: Path = typer.Argument(
        ...,
        help="The rig.toml (or its folder): its model and its "
        "LeRobot dataset, whose commands drive every trial.",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Selftest folder: trials/, diagnoses/, "
        "selftest.json, selftest.md, report.html. An earlier run's "
        "folder is resumed.",
    ),
    trials: int | None = typer.Option(
        None,
        "--trials",
        min=0,
        help=f"Trials with planted "
        f"faults, besides the null trial (default "
        f"{DEFAULT_TRIALS}: about 10 minutes on 2 cores; "
        f"--thorough: "
        f"{THOROUGH_TRIALS}).",
    ),
    thorough: bool = typer.Option(
        False,
        "--thorough",
        help=f"{THOROUGH_TRIALS} trials: a night on 2 cores (--trials wins over it).",
    ),
    seed: int = typer.Option(
        0,
        "--seed",
        min=0,
        help="Seed of the drawn faults and the recordings (the same seed resumes the same trials).",
    ),
    jobs: int | None = typer.Option(
        None, "--jobs", min=1, help="Trials diagnosed at once (default: the CPU count)."
    ),
    ray: str | None = typer.Option(
        None, "--ray", callback=ray_address, help=RAY_HELP + " Default: local processes."
    ),
    diagnosis: Path | None = typer.Option(
        None,
        "--diagnosis",
        help="The real diagnosis "
        "(the --out folder of 'simgap diagnose RIG', or "
        "its findings.json): the report shows the table "
        "beside what it states.",
    ),
) -> None:
    """Plant known faults in your rig's own model, drive it with your own recorded commands,
    record like your rig, diagnose each recording and score what simgap recovers.

    Per family (delay, kp, damping, frictionloss, armature, force limit) and per joint: the
    truth inside the stated interval, declared not identifiable, or missed; false
    implications on a null run (the nominal model's own recording); the share of the replay
    gap the offered patch closes on a held-out episode. Your files are never written."""
    from simgap.selftest.run import run_selftest

    n = trials if trials is not None else (THOROUGH_TRIALS if thorough else DEFAULT_TRIALS)
    res = run_selftest(
        rig_file(rig),
        out,
        trials=n,
        seed=seed,
        jobs=jobs,
        ray=ray,
        diagnosis=diagnosis,
        progress=say,
    )
    table = Table(
        title=escape(f"simgap selftest: {len(res.trials) - 1} trials + null"),
        box=None,
        pad_edge=False,
    )
    for col in ("family", "planted", "inside", "declared", "missed", "false", "null false"):
        table.add_column(col, no_wrap=True)
    for r in res.rows:
        c = r.counts
        color = "green" if r.seen else "red"
        table.add_row(
            f"[{color}]{escape(r.family)}[/{color}]",
            str(c.planted),
            str(c.inside),
            str(c.declared),
            str(c.missed),
            str(c.false),
            str(r.null_false),
        )
    console.print(table)
    console.print(escape(res.sentence), highlight=False)
    failed = [t for t in res.trials if t.status not in ("done", "cached")]
    for t in failed:
        console.print(f"[red]failed[/red] {escape(t.name)}: {escape(t.error)}", highlight=False)
    console.print(
        f"selftest: {escape(shown_path(res.out / 'selftest.json'))}\n"
        f"report:   {escape(shown_path(res.out / 'report.html'))}",
        highlight=False,
    )
    if failed:
        raise typer.Exit(code=1)

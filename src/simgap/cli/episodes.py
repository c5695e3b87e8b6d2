"""``simgap phases``, ``simgap training`` and ``simgap envelope``: failure phases, the training
config against the rig and the training envelope."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from simgap.cli._app import app, console, findings_json, handles_errors, json_target, write_json

if TYPE_CHECKING:
    from simgap.finding import Finding


def _print(findings: list[Finding]) -> None:
    for f in findings:
        console.print(escape(f"[{f.verdict.value}] {f.title}: {f.summary}"), highlight=False)
        if f.next_step:
            console.print(escape(f"    next: {f.next_step}"), highlight=False)


@app.command()
@handles_errors
def phases(
    rig: Path = typer.Argument(..., help="The rig.toml naming the recorded rollouts."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Where real (and simulated) episodes break, and which branches that points at."""
    from simgap.diagnose import assess_branch

    r, findings = assess_branch(rig, "phases")
    _print(findings)
    write_json(json_path, findings_json(r, findings))


@app.command()
@handles_errors
def training(
    rig: Path = typer.Argument(
        ..., help="The rig.toml with a [training] section (from 'simgap init --maniskill-config')."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """The training config against the rig: rate, top speed, PD drive, grip, origin, camera."""
    from simgap.diagnose import assess_branch

    r, findings = assess_branch(rig, "training")
    _print(findings)
    write_json(json_path, findings_json(r, findings))


@app.command()
@handles_errors
def envelope(
    rig: Path = typer.Argument(..., help="The rig.toml with a [training] section."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Whether the real deployment runs inside what training showed the policy."""
    from simgap.diagnose import assess_branch

    r, findings = assess_branch(rig, "envelope")
    _print(findings)
    write_json(json_path, findings_json(r, findings))

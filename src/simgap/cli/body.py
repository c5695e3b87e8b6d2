"""``simgap body``."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import (
    app,
    findings_json,
    handles_errors,
    json_target,
    print_findings,
    write_json,
)


@app.command()
@handles_errors
def body(
    rig: Path = typer.Argument(
        ..., help="The rig.toml (evidence.static_object_poses and/or frame.origin_reference_m)."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the findings as JSON."
    ),
) -> None:
    """Joint zero offsets from static-object poses, and the model's frame origin."""
    from simgap.diagnose import assess_branch

    r, found = assess_branch(rig, "body")
    print_findings(f"body: {r.name}", found)
    write_json(json_path, findings_json(r, found))

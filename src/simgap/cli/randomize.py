"""``simgap randomize``: the randomisation spec of a diagnosis, in one of three formats."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, json_target, write_json


@app.command()
@handles_errors
def randomize(
    findings: Path = typer.Argument(
        ..., help="findings.json from 'simgap diagnose', or a fleet folder from 'simgap fleet'."
    ),
    fmt: str = typer.Option("json", "--format", help="json | isaaclab | mujoco"),
    out: Path = typer.Option(..., "--out", help="Output file (a folder for mujoco)."),
    rig: Path | None = typer.Option(
        None,
        "--rig",
        help="The rig the findings must be of (its model is the base of MuJoCo variants).",
    ),
    n: int = typer.Option(8, "--n", help="Number of MuJoCo variants."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Also write the spec as JSON."
    ),
) -> None:
    """Pin what was identified, randomise what cannot be instrumented."""
    from simgap.branches.ladder_list import entry_builders
    from simgap.export.randomization import export
    from simgap.randomize import load_spec_from_findings
    from simgap.sim.rig_names import load_checked_rig

    rig_obj = load_checked_rig(rig) if rig is not None else None
    model = rig_obj.model_path if rig_obj else None
    if fmt == "mujoco" and rig_obj is not None and not rig_obj.model_path.is_file():
        from simgap.errors import InputError

        raise InputError(
            file=rig,
            field="model.path",
            expected="the rig's MJCF model (the base of the MuJoCo variants)",
            got=f"{rig_obj.model_path}: no such file",
            fix="correct model.path in rig.toml (relative to the rig file)",
        )
    if findings.is_dir():  # a fleet: ranges from the measured unit-to-unit spread
        from simgap.fleet.randomize import load_fleet_spec

        spec, fleet_model = load_fleet_spec(findings)
        model = model or fleet_model
    else:
        spec = load_spec_from_findings(
            findings, entry_builders(), rig_obj.name if rig_obj else None
        )
    paths = export(spec, fmt, out, model_path=model, n_variants=n)
    write_json(json_path, spec.to_dict())
    for p in paths:
        console.print(f"wrote {p}", highlight=False)

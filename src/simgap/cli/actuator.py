"""``simgap actuator`` (fit the actuator ladder) and ``simgap excite`` (write chirps)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from simgap.cli._app import app, console, handles_errors, write_json


@app.command()
@handles_errors
def actuator(
    logs: list[Path] = typer.Argument(..., help="Actuator logs (BAM JSON, CSV, or LeRobot "
                                      "dataset folders)."),
    fmt: str = typer.Option(..., "--format", help="bam | lerobot | csv"),
    rig: Path | None = typer.Option(None, "--rig", help="rig.toml: joint map, units, model "
                                    "(the load) and noise floor."),
    validate: list[Path] = typer.Option([], "--validate", help="Held-out logs (default: "
                                        "leave-one-trajectory-out)."),
    json_path: Path = typer.Option(..., "--json", help="Where to write the result JSON."),
    out: Path | None = typer.Option(None, "--out", help="Folder for the MJCF patch, Isaac "
                                    "Lab and BAM exports."),
    no_net: bool = typer.Option(False, "--no-net", help="Skip rung 4 (the network)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the fits."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out folder."),
) -> None:
    """Fit the actuator ladder (ideal, delay+lag, servo, net) and say where it stops."""
    from contextlib import nullcontext

    from simgap.branches.actuator import analyse
    from simgap.evidence.actuator_logs import load_actuator_logs
    from simgap.outputs import output_folder, relocate_paths
    from simgap.rig import load_rig

    r = load_rig(rig) if rig is not None else None
    train = load_actuator_logs(list(logs), fmt, r)
    held = load_actuator_logs(list(validate), fmt, r) if validate else []
    with output_folder(out, force=force) if out is not None else nullcontext() as out_dir:
        result, _ = analyse(train, rig=r, validate=held, use_net=not no_net, seed=seed,
                            out_dir=out_dir)
    if out is not None and out_dir is not None:  # name the artifacts where they now lie
        result = relocate_paths(result, out_dir, out.absolute())
    write_json(json_path, result)
    for name, j in result["joints"].items():
        rungs = ", ".join(f"{x['model']} {x['validation_mae_rad']:.4g}" for x in j["rungs"])
        console.print(escape(f"{name}: selected {j['selected']} (held-out MAE [rad]: {rungs}); "
                             f"delay {j['delay_s'] * 1000:.1f} ms"), highlight=False)
    console.print(f"verdict: {result['verdict']}", highlight=False)


@app.command()
@handles_errors
def excite(
    rig: Path = typer.Argument(..., help="rig.toml (joint limits come from its model)."),
    out: Path = typer.Option(..., "--out", help="CSV of joint targets (or a folder for a "
                             "LeRobot-style action table with --lerobot)."),
    duration: float = typer.Option(10.0, "--duration", help="Seconds per joint."),
    f0: float = typer.Option(1.0, "--f0", help="Start frequency [Hz]."),
    f1: float = typer.Option(25.0, "--f1", help="End frequency [Hz]."),
    rate: float = typer.Option(200.0, "--rate", help="Command rate [Hz]."),
    lerobot: bool = typer.Option(False, "--lerobot", help="Write recorded units and "
                                 "LeRobot feature names instead of radians."),
    seed: int = typer.Option(0, "--seed", help="Seed of the chirp phases."),
) -> None:
    """Write chirp excitation (f0 to f1 Hz per joint) inside joint and velocity limits."""
    from simgap.actuator.excite import write_excitation
    from simgap.rig import load_rig

    path = write_excitation(load_rig(rig), out, duration_s=duration, f0_hz=f0, f1_hz=f1,
                            rate_hz=rate, lerobot=lerobot, seed=seed)
    console.print(f"wrote {path}", highlight=False)

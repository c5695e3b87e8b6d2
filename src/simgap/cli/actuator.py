"""``simgap actuator`` (fit the actuator ladder) and ``simgap excite`` (write chirps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperCommand

from simgap.cli._app import app, console, handles_errors, write_json
from simgap.cli._progress import working


class _ValidateList(TyperCommand):
    """``--validate`` takes a list: ``--validate a.json b.json`` is read as ``--validate
    a.json --validate b.json`` (every value up to the next option), and stays repeatable."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(args):
            if args[i] == "--validate":
                i += 1
                while i < len(args) and not args[i].startswith("-"):
                    out += ["--validate", args[i]]
                    i += 1
                continue
            out.append(args[i])
            i += 1
        return super().parse_args(ctx, out)


def _check_disjoint(train: list[Path], held: list[Path]) -> None:
    from simgap.errors import InputError

    both = sorted({str(p) for p in train if p.resolve() in {h.resolve() for h in held}})
    if both:
        raise InputError(file=both[0], field="--validate",
                         expected="held-out logs that are not also training logs",
                         got=f"{len(both)} log(s) named both as training and as validation: "
                             f"{', '.join(both)}",
                         fix="name each log once: as a training log or after --validate")


@app.command(cls=_ValidateList)
@handles_errors
def actuator(
    logs: list[Path] = typer.Argument(..., help="Actuator logs (BAM JSON, CSV, or LeRobot "
                                      "dataset folders)."),
    fmt: str = typer.Option(..., "--format", help="bam | lerobot | csv"),
    rig: Path | None = typer.Option(None, "--rig", help="rig.toml: joint map, units, model "
                                    "(the load) and noise floor."),
    validate: list[Path] = typer.Option([], "--validate", help="Held-out logs, repeatable "
                                        "or as a list up to the next option (default: "
                                        "leave one trajectory type out)."),
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

    _check_disjoint(list(logs), list(validate))
    r = load_rig(rig) if rig is not None else None
    train = load_actuator_logs(list(logs), fmt, r)
    held = load_actuator_logs(list(validate), fmt, r) if validate else []
    rungs = "ideal, delay+lag, servo" + ("" if no_net else ", network")
    with working("actuator", f"fitting the actuator ladder ({rungs}) to {len(train)} log(s), "
                 "held out " + ("on --validate" if held else "one trajectory type at a time")
                 + ("" if no_net else "; --no-net skips the slowest rung"),
                 70.0 if not no_net else 20.0), \
            output_folder(out, force=force) if out is not None else nullcontext() as out_dir:
        result, _ = analyse(train, rig=r, validate=held, use_net=not no_net, seed=seed,
                            out_dir=out_dir)
    if out is not None and out_dir is not None:  # name the artifacts where they now lie
        result = relocate_paths(result, out_dir, out.absolute())
    write_json(json_path, result)
    from simgap.report.headline import sig

    for name, j in result["joints"].items():
        rungs = ", ".join(f"{x['model']} {sig(float(x['validation_mae_rad']))}"
                          for x in j["rungs"])
        d = j.get("delay_s")
        iv = (j.get("delay_interval_s") or (result.get("delay_interval_s") or {}).get(name))
        delay = "delay not identified" if not isinstance(d, (int, float)) else (
            f"delay {sig(d * 1e3)} ms" + (f" [{sig(iv[0] * 1e3)}, {sig(iv[1] * 1e3)}]"
                                          if isinstance(iv, (list, tuple)) and len(iv) == 2
                                          else ""))
        console.print(escape(f"{name}: selected {j['selected']} (held-out MAE [rad]: {rungs}); "
                             f"{delay}"), highlight=False)
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

"""``simgap actuator`` (fit the actuator ladder) and ``simgap excite`` (write chirps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simgap.cli._actuator_lines import print_identification, print_ladder
from simgap.cli._app import app, handles_errors, json_target, write_json
from simgap.cli._progress import working
from simgap.cli._typer import Command


class _ValidateList(Command):
    """``--validate`` takes a list: ``--validate a.json b.json`` is read as ``--validate
    a.json --validate b.json`` (every value up to the next option), and stays repeatable."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        n_val = 0
        i = 0
        while i < len(args):
            if args[i] == "--validate":
                i += 1
                start = i
                while i < len(args) and not args[i].startswith("-"):
                    out += ["--validate", args[i]]
                    i += 1
                if i == start:
                    raise typer.BadParameter(
                        "it needs at least one log. Fix: name the test logs after it "
                        "(--validate a.json b.json), or drop it to hold out one trajectory "
                        "type at a time",
                        ctx=ctx,
                        param_hint="--validate",
                    )
                n_val += i - start
                continue
            out.append(args[i])
            i += 1
        try:
            return super().parse_args(ctx, out)
        except typer.BadParameter as e:  # click's MissingParameter: no training log left
            if not (n_val and getattr(getattr(e, "param", None), "name", None) == "logs"):
                raise
            raise typer.BadParameter(
                f"no training logs: --validate takes every value up to the next option, so "
                f"all {n_val} log(s) after it were read as test logs. Fix: name the training "
                "logs before --validate, or end its list with another option "
                "(--validate v.json --format bam a.json b.json)",
                ctx=ctx,
                param_hint="--validate",
            ) from None


@app.command(cls=_ValidateList)
@handles_errors
def actuator(
    logs: list[Path] = typer.Argument(
        ...,
        help="Servo bench logs (BAM JSON, CSV: the "
        "ladder), or one LeRobot dataset folder (diagnose's "
        "identification against the rig's MJCF; needs --rig).",
    ),
    fmt: str = typer.Option(..., "--format", help="bam | lerobot | csv"),
    rig: Path | None = typer.Option(
        None, "--rig", help="rig.toml: joint map, units, model (the load) and noise floor."
    ),
    validate: list[Path] = typer.Option(
        [],
        "--validate",
        help="Test bench logs, left out "
        "of every fit and of the selection (which holds out "
        "one trajectory type of the training logs at a "
        "time) and scored on the final fit; repeatable or "
        "as a list up to the next option (a LeRobot dataset "
        "holds out its own episodes).",
    ),
    json_path: Path = typer.Option(
        ..., "--json", callback=json_target, help="Where to write the result JSON."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for the MJCF patch, Isaac Lab and BAM exports."
    ),
    no_net: bool = typer.Option(False, "--no-net", help="Skip rung 4 (the network)."),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed of the fits (default: the rig's seed, as diagnose uses; 0 without a rig).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace a non-empty --out folder "
        "(everything in it is removed once the new one is written).",
    ),
) -> None:
    """Identify the actuators. A LeRobot dataset (--format lerobot, with --rig) runs
    diagnose's identification: the rig's own MJCF is the null, the delay is profiled and
    every parameter gets a 95 % interval or a reason, with the same seed, episodes and
    numbers as the actuator finding of 'simgap diagnose'. Bench logs (bam, csv) climb the
    actuator ladder (ideal, delay+lag, servo, net), whose null is the ideal actuator."""
    from contextlib import nullcontext

    from simgap.branches.actuator import analyse
    from simgap.evidence.actuator_logs import check_distinct_logs, load_actuator_logs
    from simgap.outputs import check_not_input, note_input, output_folder, relocate_paths
    from simgap.sim.rig_names import load_checked_rig

    for p in [*logs, *validate]:  # an output onto an input is refused before any work
        note_input(p)
    check_not_input(json_path)
    if out is not None:
        check_not_input(out, folder=True)
    if fmt != "lerobot":  # a dataset holds out its own episodes (checked below)
        check_distinct_logs(list(logs), list(validate))
    r = load_checked_rig(rig) if rig is not None else None
    if fmt == "lerobot":
        _check_lerobot(list(logs), r, list(validate))
        assert r is not None
        with (
            working(
                "actuator",
                "identifying the joint dynamics against the rig's model (as diagnose does)",
                60.0,
            ),
            output_folder(out, force=force) if out is not None else nullcontext() as od,
        ):
            from simgap.diagnose import actuator_from_dataset

            found = actuator_from_dataset(r, logs[0], out_dir=od, seed=seed).to_dict()
        if out is not None and od is not None:
            found = relocate_paths(found, od, out.absolute())
        write_json(
            json_path,
            {
                "method": "joint_dynamics",
                "rig": r.name,
                "dataset": str(logs[0].absolute()),
                **found,
            },
        )
        print_identification(found)
        return
    seed = seed if seed is not None else (r.seed if r is not None else 0)
    train = load_actuator_logs(list(logs), fmt, r)
    held = load_actuator_logs(list(validate), fmt, r) if validate else []
    rungs = "ideal, delay+lag, servo" + ("" if no_net else ", network")
    with (
        working(
            "actuator",
            f"fitting the actuator ladder ({rungs}) to {len(train)} log(s), "
            "selected holding out one trajectory type (or log) at a time"
            + (f", then tested on the {len(held)} --validate log(s)" if held else "")
            + ("" if no_net else "; --no-net skips the slowest rung"),
            240.0 if not no_net else 120.0,
        ),
        output_folder(out, force=force) if out is not None else nullcontext() as out_dir,
    ):
        result, fits = analyse(
            train, rig=r, validate=held, use_net=not no_net, seed=seed, out_dir=out_dir
        )
    if out is not None and out_dir is not None:  # name the artifacts where they now lie
        result = relocate_paths(result, out_dir, out.absolute())
    write_json(json_path, result)
    print_ladder(result, bool(held), fits)


def _check_lerobot(logs: list[Path], rig: Any, validate: list[Path]) -> None:
    from simgap.errors import InputError

    if rig is None:
        raise InputError(
            file=logs[0],
            field="--rig",
            expected="a rig.toml to identify a "
            "LeRobot dataset (its joint map, units, and the MJCF that is the "
            "null hypothesis)",
            got="no --rig",
            fix="pass --rig rig.toml ('simgap init' writes one for a dataset)",
        )
    if len(logs) != 1:
        raise InputError(
            file=logs[1],
            field="logs",
            expected="one LeRobot dataset folder (diagnose reads one: evidence.dataset)",
            got=f"{len(logs)} folders",
            fix="run 'simgap actuator' once per dataset",
        )
    if validate:
        raise InputError(
            file=validate[0],
            field="--validate",
            expected="no --validate with "
            "a LeRobot dataset: the episodes after the fitted ones are held "
            "out, as in diagnose",
            got=f"{len(validate)} validation log(s)",
            fix="drop --validate (or record the validation episodes into the dataset)",
        )

"""``simgap contact lint|pair|sweep``: contact settings, patches and 1-D sweeps."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, json_target, write_json
from simgap.cli._typer import App

contact_app = App(
    help="Contact: lint a model, write a pair patch, sweep a coefficient, "
    "convert bench measurements.",
    no_args_is_help=True,
)
app.add_typer(contact_app, name="contact")


def _floats(text: str, n: tuple[int, ...], what: str) -> list[float]:
    from simgap.errors import InputError

    try:
        vals = [float(v) for v in text.replace(",", " ").split()]
    except ValueError as e:
        raise InputError(field=what, expected="numbers", got=text) from e
    if len(vals) not in n:
        raise InputError(field=what, expected=f"{' or '.join(map(str, n))} numbers", got=text)
    return vals


def _names(values: list[str]) -> list[str]:
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


@contact_app.command("measure")
@handles_errors
def measure(
    tilt_deg: float | None = typer.Option(
        None, "--tilt-deg", help="Slip angle of a tilted plate [deg]."
    ),
    patch_diameter_mm: float | None = typer.Option(
        None, "--patch-diameter-mm", help="Contact patch diameter [mm] (caliper)."
    ),
    sliding: float | None = typer.Option(
        None, "--sliding", help="Sliding coefficient for the torsional rule."
    ),
    depth_mm: float | None = typer.Option(None, "--depth-mm", help="Pad deformation depth [mm]."),
    json_path: Path | None = typer.Option(
        None,
        "--json",
        callback=json_target,
        help="Also write the coefficients as JSON to this file.",
    ),
) -> None:
    """Bench numbers -> MuJoCo pair coefficients (sliding, torsional [m], rolling [m])."""
    from simgap.contact.converters import measure as convert

    out = convert(tilt_deg, patch_diameter_mm, sliding, depth_mm)
    for k, v in out.items():
        console.print(f"{k}: {v:.6g}", highlight=False)
    write_json(json_path, out)


@contact_app.command("lint")
@handles_errors
def lint(
    model: Path = typer.Argument(..., help="The MJCF model."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Also write the problems as JSON."
    ),
) -> None:
    """Contact settings that do nothing, defaults left in, overrides, implausible values."""
    from simgap.contact.lint import lint_model
    from simgap.sim.model import load_model

    load_model(model)  # a model that does not compile is an error, with MuJoCo's message
    problems = lint_model(model)
    groups: dict[tuple[str, str, str], list[str]] = {}
    for p in problems:  # the same problem on many elements is printed once, with them listed
        groups.setdefault((p.problem, p.fix, str(p.file)), []).append(f"{p.element}:{p.line}")
    for (problem, fix, file), where in groups.items():
        console.print(
            f"{problem}.\n  {len(where)} element(s) in {file} (element:line): "
            + ", ".join(where)
            + f"\n  Fix: {fix}",
            highlight=False,
            markup=False,
        )
    console.print(f"{len(problems)} problem(s) of {len(groups)} kind(s)", highlight=False)
    write_json(json_path, {"problems": [p.to_dict() for p in problems]})


@contact_app.command("pair")
@handles_errors
def pair(
    model: Path = typer.Argument(..., help="The MJCF model (never edited)."),
    geom1: list[str] = typer.Option(
        ..., "--geom1", help="Geom(s): repeat or comma-separate (e.g. both finger pads)."
    ),
    geom2: list[str] = typer.Option(..., "--geom2", help="Geom(s), as --geom1."),
    out: Path = typer.Option(..., "--out", help="The new MJCF file to write."),
    friction: str = typer.Option(
        ..., "--friction", help="Five numbers: sliding sliding torsional rolling rolling."
    ),
    condim: int = typer.Option(
        4, "--condim", help="Contact dimensionality: 3 (sliding), 4 (+ torsional) or 6 (+ rolling)."
    ),
    solref: str = typer.Option(
        "0.02 1",
        "--solref",
        help="Two numbers: time constant [s] and damping ratio of the contact.",
    ),
    solimp: str = typer.Option(
        "0.9 0.95 0.001 0.5 2",
        "--solimp",
        help="Three or five numbers: impedance dmin dmax width [m] (midpoint power).",
    ),
    json_path: Path | None = typer.Option(
        None,
        "--json",
        callback=json_target,
        help="Also write the patch's path as JSON to this file.",
    ),
) -> None:
    """Write a new MJCF that includes MODEL and adds a <contact><pair> for every
    (geom1, geom2) combination."""
    from simgap.contact.pair import write_pair

    path = write_pair(
        model,
        out,
        _names(geom1),
        _names(geom2),
        friction=_floats(friction, (5,), "friction"),
        condim=condim,
        solref=_floats(solref, (2,), "solref"),
        solimp=_floats(solimp, (3, 5), "solimp"),
    )
    console.print(f"wrote {path} (compiles)", highlight=False)
    write_json(json_path, {"patch": str(path), "model": str(model)})


@contact_app.command("sweep")
@handles_errors
def sweep_cmd(
    rig: Path = typer.Argument(..., help="rig.toml with evidence.push_logs and model.object_body."),
    kind: list[str] = typer.Option(
        ..., "--kind", help="geom_friction, pair_friction or mass (repeat for two)."
    ),
    target: list[str] = typer.Option(
        ..., "--target", help="geom(s) a+b, pair or body, one per --kind."
    ),
    lo: float = typer.Option(0.25, "--lo", help="Lowest multiple of nominal."),
    hi: float = typer.Option(4.0, "--hi", help="Highest multiple of nominal."),
    n: int = typer.Option(25, "--n", help="Values per coefficient."),
    noise_m: float | None = typer.Option(
        None,
        "--noise-m",
        help="Tracker noise [m] (default: the rig's [contact] tracker_noise_m, else 2 mm).",
    ),
    force: bool = typer.Option(False, "--force", help="Allow a 2-D sweep."),
    json_path: Path | None = typer.Option(
        None,
        "--json",
        callback=json_target,
        help="Also write the sweep (values, losses, interval) as JSON to this file.",
    ),
) -> None:
    """Replay every logged push once per value of ONE coefficient; print the curve."""
    import numpy as np

    from simgap.contact.sweep import Coefficient, nominal_of, sweep
    from simgap.errors import InputError
    from simgap.evidence.push_log import push_logs
    from simgap.sim.rig_names import load_checked_rig

    r = load_checked_rig(rig)
    if r.object_body is None or not r.evidence.push_logs:
        raise InputError(
            file=rig,
            field="model.object_body / evidence.push_logs",
            expected="both set",
            got="missing",
        )
    if len(kind) != len(target):
        raise InputError(field="--target", expected=f"{len(kind)} targets", got=target)
    coeffs = [
        Coefficient(k, t, tuple(nominal_of(str(r.model_path), k, t) * np.geomspace(lo, hi, n)))
        for k, t in zip(kind, target, strict=True)
    ]
    from simgap.cli._progress import working

    pushes = push_logs(r)
    with working(
        "contact sweep", f"replaying {len(pushes)} logged push(es) {n ** len(coeffs)} times each"
    ):
        out = sweep(
            str(r.model_path),
            r.joint_names,
            pushes,
            r.object_body,
            coeffs,
            force=force,
            interp=r.command_interp,
            physics_dt=r.physics_dt_s,
            noise_m=noise_m or r.tracker_noise_m or 0.002,
        )
    if "interval" in out:
        iv = out["interval"]
        found = (
            f"best {out['refined_value'] or out['best_value']:.4g} (RMS "
            f"{out['best_loss']:.3g} m), 95 % {iv[0]:.4g}..{iv[1]:.4g}"
            if out["identifiable"]
            else out["reason"]
        )
        console.print(
            f"{out['name']}: nominal {out['nominal']:.4g} (RMS "
            f"{out['nominal_loss']:.3g} m) over {out['pushes']} push(es); " + found,
            highlight=False,
        )
    from simgap.report.headline import sig

    values, loss = out.get("values") or [], out.get("loss") or []
    if values and not isinstance(values[0], list):  # the 1-D curve, one row per value
        console.print(f"{'value':>12}  RMS object error [m]", highlight=False)
        for v, e in zip(values, loss, strict=False):
            console.print(f"{sig(float(v)):>12}  {sig(float(e))}", highlight=False)
    write_json(json_path, out)

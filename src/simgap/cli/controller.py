"""``simgap controller RIG``: SIMPLER's controller fit on the rig's logged episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simgap.cli._app import app, console, handles_errors, json_target, write_json
from simgap.cli._progress import working
from simgap.cli._ray import ALLOW_RIG_COMPUTE_HELP, RAY_HELP, ray_address

_SECONDS_PER_EPISODE = 33.0  # measured: 12 demo episodes, maxfun 300, one core: 396 s


def _gain(value: object, half: object, ok: bool) -> str:
    """One gain as printed: the value with its 95% half-width, or why there is none."""
    from simgap.report.headline import sig

    if not ok:
        return "not identified"
    v = sig(float(value), 3) if isinstance(value, (int, float)) else "-"
    if isinstance(half, (int, float)):
        return f"{v} +- {sig(float(half), 2)}"
    return f"{v} (interval unbounded)"


def print_report(rep: dict[str, Any]) -> None:
    """The fit in a few lines: loss before/after, then each joint's gains, identified or not
    (the same judgement as the JSON's ``identified``)."""
    from simgap.report.headline import sig

    console.print(
        f"controller: {rep['verdict']}  loss {sig(float(rep['loss_before']))} -> "
        f"{sig(float(rep['loss_after']))} (best method: {rep['best']}, condition "
        f"number {sig(float(rep['cond']), 2)})",
        highlight=False,
        markup=False,
    )
    params, iv = rep["params"], rep["intervals"]
    ident = rep.get("identified") or {}
    for j, kk in params.items():
        ok = ident.get(j, {})
        console.print(
            f"  {j}: kp {_gain(kk['kp'], iv[j]['kp'], ok.get('kp', True))}, "
            f"kv {_gain(kk['kv'], iv[j]['kv'], ok.get('kv', True))}",
            highlight=False,
            markup=False,
        )
    why = rep.get("why") or {}
    for name, reason in why.items():
        console.print(f"  {name}: {reason}", highlight=False, markup=False)


@app.command()
@handles_errors
def controller(
    rig: Path = typer.Argument(
        ..., help="The rig.toml (needs evidence.dataset and model.ee_site)."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Annealing seed (default: rig's)."),
    maxfun: int = typer.Option(300, "--maxfun", help="Annealing evaluation budget."),
    max_iter: int = typer.Option(20, "--max-iter", help="Least-squares iterations."),
    ray: str | None = typer.Option(
        None, "--ray", callback=ray_address, help="Evaluate candidates on Ray. " + RAY_HELP
    ),
    allow_rig_compute: bool = typer.Option(
        False, "--allow-rig-compute", help=ALLOW_RIG_COMPUTE_HELP
    ),
) -> None:
    """Fit per-joint kp/kv by annealing and by least squares; print both."""
    from simgap.branches.controller import load_episodes
    from simgap.controller.pose_fit import controller_report
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.sim.rig_names import load_checked_rig

    r = load_checked_rig(rig)
    if r.evidence.dataset is None:
        from simgap.errors import InputError

        raise InputError(
            file=rig,
            field="evidence.dataset",
            expected="a LeRobot dataset path",
            got="nothing",
            fix="add evidence.dataset to rig.toml",
        )
    from simgap.diagnose import compute_backend

    compute = compute_backend(r, ray, allow_rig_compute=allow_rig_compute)
    ds = read_lerobot_dataset(r.evidence.dataset)
    episodes = load_episodes(r, ds)
    n = len(episodes)
    with working(
        "controller",
        f"fitting kp/kv per joint to all {n} logged episode(s) by "
        f"annealing ({maxfun} evaluations) and least squares; 'simgap diagnose' fits "
        "fewer",
        _SECONDS_PER_EPISODE * n * max(0.2, maxfun / 300),
    ):
        rep = controller_report(
            r,
            episodes,
            seed=r.seed if seed is None else seed,
            maxfun=maxfun,
            max_iter=max_iter,
            compute=compute,
        )
    print_report(rep)
    rep.pop("traces", None)
    write_json(json_path, _clean(rep))


def _clean(obj: object) -> object:
    from simgap.finding import jsonable

    return jsonable(obj)

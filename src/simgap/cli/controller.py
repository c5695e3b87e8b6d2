"""``simgap controller RIG``: SIMPLER's controller fit on the rig's logged episodes."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, write_json


@app.command()
@handles_errors
def controller(
    rig: Path = typer.Argument(..., help="The rig.toml (needs evidence.dataset and "
                                         "model.ee_site)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the result as JSON."),
    seed: int | None = typer.Option(None, "--seed", help="Annealing seed (default: rig's)."),
    maxfun: int = typer.Option(300, "--maxfun", help="Annealing evaluation budget."),
    max_iter: int = typer.Option(20, "--max-iter", help="Least-squares iterations."),
    ray: str | None = typer.Option(None, "--ray", help="Evaluate candidates on Ray: a "
                                   "cluster ADDRESS or 'local'."),
) -> None:
    """Fit per-joint kp/kv by annealing and by least squares; print both."""
    from simgap.branches.controller import controller_report, load_episodes
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    r = load_rig(rig)
    if r.evidence.dataset is None:
        from simgap.errors import InputError

        raise InputError(file=rig, field="evidence.dataset", expected="a LeRobot dataset path",
                         got="nothing", fix="add evidence.dataset to rig.toml")
    from simgap.diagnose import compute_backend

    ds = read_lerobot_dataset(r.evidence.dataset)
    with compute_backend(r, ray):
        rep = controller_report(r, load_episodes(r, ds), seed=r.seed if seed is None else seed,
                                maxfun=maxfun, max_iter=max_iter)
    console.print(f"controller: {rep['verdict']}  loss {rep['loss_before']:.4g} -> "
                  f"{rep['loss_after']:.4g} (best: {rep['best']}, cond {rep['cond']:.3g})",
                  highlight=False)
    for j, kk in rep["params"].items():
        iv = rep["intervals"][j]
        console.print(f"  {j}: kp {kk['kp']:.4g} +- {iv['kp']}  kv {kk['kv']:.4g} +- "
                      f"{iv['kv']}", highlight=False)
    rep.pop("traces", None)
    write_json(json_path, _clean(rep))


def _clean(obj: object) -> object:
    from simgap.finding import _jsonable

    return _jsonable(obj)

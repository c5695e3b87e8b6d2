"""``simgap maniskill replay RIG``: the rig's recorded episodes replayed in ManiSkill 3, the
controller's gains fitted and exported as ManiSkill controller config (the maniskill extra)."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, json_target, write_json
from simgap.cli._typer import App

maniskill_app = App(help="ManiSkill 3 as a second simulator: replay the rig's episodes with "
                         "the agent training used, fit its PD gains, export them (needs "
                         "pip install 'simgap[maniskill]').", no_args_is_help=True)
app.add_typer(maniskill_app, name="maniskill")


@maniskill_app.command("replay")
@handles_errors
def replay(
    rig: Path = typer.Argument(..., help="The rig.toml (needs evidence.dataset, 2+ episodes)."),
    out: Path = typer.Option(..., "--out", help="Folder for maniskill_controller.json."),
    agent: str = typer.Option("so100", "--agent", help="The ManiSkill agent uid training used."),
    physics_dt: float = typer.Option(0.01, "--physics-dt",
                                     help="Physics step of the replay [s] (ManiSkill's "
                                          "SO100GraspCube-v1: 0.01)."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out."),
    json_path: Path | None = typer.Option(None, "--json", callback=json_target,
                                          help="Write the result as JSON."),
) -> None:
    """Replay the episodes in ManiSkill (physx_cpu), fit stiffness and damping (and the force
    limit where it moves the replay) with 95% intervals, and write the controller config
    when it replays the held-out last episode better than the agent's own."""
    from simgap.branches.joint_dynamics import (
        ELIMINATE_FACTOR,
        IMPLICATE_FACTOR,
        IMPLICATE_GAIN,
    )
    from simgap.errors import InputError
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.maniskill.check import check_in_maniskill
    from simgap.maniskill.replay import require_maniskill
    from simgap.outputs import prepare_out_dir
    from simgap.rig import load_rig

    require_maniskill("simgap maniskill replay")  # before any reading: say what to install
    r = load_rig(rig)
    if r.evidence.dataset is None:
        raise InputError(file=rig, field="evidence.dataset", expected="a LeRobot dataset path",
                         got="nothing", fix="add evidence.dataset to rig.toml")
    trajs = dataset_trajectories(read_lerobot_dataset(r.evidence.dataset), r)
    folder = prepare_out_dir(out, force=force)
    res = check_in_maniskill(trajs, agent=agent, encoder_rad=r.encoder_rad,
                             physics_dt_s=physics_dt, out=folder,
                             factors={"eliminate_factor": ELIMINATE_FACTOR,
                                      "implicate_factor": IMPLICATE_FACTOR,
                                      "implicate_gain": IMPLICATE_GAIN})
    console.print(f"maniskill replay: {res['verdict']} (floor {res['floor_rad']:.3g} rad)",
                  highlight=False, markup=False)
    for j, v in res["nominal_rms_rad"].items():
        console.print(f"  {j}: nominal {v:.3g} rad RMS -> fitted "
                      f"{res['fitted_rms_rad'][j]:.3g}", highlight=False, markup=False)
    for n, row in res["identified"].items():
        lo, hi = row["interval_95"]
        console.print(f"  {n}: {row['value']:.4g} [{lo:.4g}, {hi:.4g}] (agent's "
                      f"{row['nominal']:.4g})", highlight=False, markup=False)
    console.print(res["export_note"], highlight=False, markup=False)
    write_json(json_path, res)

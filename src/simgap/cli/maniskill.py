"""``simgap maniskill replay RIG``: the rig's recorded episodes replayed in ManiSkill 3, the
controller's gains fitted and exported as ManiSkill controller config (the maniskill extra)."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import (
    app,
    console,
    findings_json,
    handles_errors,
    json_target,
    print_findings,
    write_json,
)
from simgap.cli._typer import App

maniskill_app = App(
    help="ManiSkill 3 as a second simulator: replay the rig's episodes with "
    "the agent training used, fit its PD gains, export them (needs "
    "pip install 'simgap[maniskill]').",
    no_args_is_help=True,
)
app.add_typer(maniskill_app, name="maniskill")


@maniskill_app.command("replay")
@handles_errors
def replay(
    rig: Path = typer.Argument(..., help="The rig.toml (needs evidence.dataset, 2+ episodes)."),
    out: Path = typer.Option(..., "--out", help="Folder for maniskill_controller.json."),
    agent: str | None = typer.Option(
        None,
        "--agent",
        help="The ManiSkill agent uid training "
        "used (default: training.agent, else so100, said as "
        "assumed).",
    ),
    physics_dt: float | None = typer.Option(
        None,
        "--physics-dt",
        help="Physics step of the replay [s] (default: "
        "training.physics_dt_s, else 0.01, "
        "SO100GraspCube-v1's, said as assumed).",
    ),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Replay the episodes in ManiSkill (physx_cpu), fit stiffness and damping (and the force
    limit where it moves the replay) with 95% intervals, and write the controller config
    when it replays the held-out last episode better than the agent's own."""
    from simgap.errors import InputError
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.maniskill.check import check_in_maniskill
    from simgap.maniskill.replay import require_maniskill
    from simgap.maniskill.settings import replay_settings
    from simgap.outputs import prepare_out_dir
    from simgap.rig import load_rig

    require_maniskill("simgap maniskill replay")  # before any reading: say what to install
    r = load_rig(rig)
    if r.evidence.dataset is None:
        raise InputError(
            file=rig,
            field="evidence.dataset",
            expected="a LeRobot dataset path",
            got="nothing",
            fix="add evidence.dataset to rig.toml",
        )
    trajs = dataset_trajectories(read_lerobot_dataset(r.evidence.dataset), r)
    settings = replay_settings(r, agent, physics_dt)
    folder = prepare_out_dir(out, force=force)
    console.print(settings.describe(), highlight=False, markup=False)
    res = check_in_maniskill(
        trajs,
        agent=settings.agent,
        encoder_rad=r.encoder_rad,
        physics_dt_s=settings.physics_dt_s,
        out=folder,
    )
    console.print(
        f"maniskill replay: {res['verdict']} (floor {res['floor_rad']:.3g} rad)",
        highlight=False,
        markup=False,
    )
    lo, hi = res["delay_interval_95_s"]
    console.print(
        f"  command delay {1e3 * res['delay_best_s']:.0f} ms [{1e3 * lo:.0f}, "
        f"{1e3 * hi:.0f}] (95 %); gains fitted at {1e3 * res['command_delay_s']:.0f}"
        f" ms after {res['delay_refits']} refit(s)"
        + ("" if res["delay_settled"] else ", NOT settled: the delay and the gains still disagree"),
        highlight=False,
        markup=False,
    )
    for j, v in res["nominal_rms_rad"].items():
        console.print(
            f"  {j}: nominal {v:.3g} rad RMS -> fitted {res['fitted_rms_rad'][j]:.3g}",
            highlight=False,
            markup=False,
        )
    for n, row in res["identified"].items():
        lo, hi = row["interval_95"]
        console.print(
            f"  {n}: {row['value']:.4g} [{lo:.4g}, {hi:.4g}] (agent's {row['nominal']:.4g})",
            highlight=False,
            markup=False,
        )
    console.print(res["export_note"], highlight=False, markup=False)
    write_json(json_path, {**res, "settings_from": settings.sources})


@maniskill_app.command("appearance")
@handles_errors
def appearance(
    rig: Path = typer.Argument(
        ...,
        help="The rig.toml: [camera] with its training_* keys and "
        "training.robot_description (simgap init "
        "--maniskill-config), and recorded frames.",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for real/sim/difference PNGs at the policy resolution."
    ),
    frames: int = typer.Option(12, "--frames", help="Compare at most this many frames."),
    camera_frames: int = typer.Option(
        2, "--camera-frames", help="Frames used to search the camera's offset."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the findings as JSON."
    ),
) -> None:
    """Render the training camera with SAPIEN at the recorded joint angles, at the policy's
    resolution, and compare with the rig's frames region by region; fit the camera's offset
    and hold it against training's camera wobble (the appearance branch's rule)."""
    from simgap.appearance.compare import analyse
    from simgap.branches.appearance import findings
    from simgap.cli.appearance import check_camera_feature, png_bytes
    from simgap.evidence.frames import load_frames
    from simgap.figures.appearance import ExposureDetails
    from simgap.maniskill.render import SapienRenderer, require_sapien
    from simgap.maniskill.training_view import regions, training_view
    from simgap.outputs import atomic_write_bytes
    from simgap.rig import load_rig

    require_sapien("simgap maniskill appearance")  # before any reading: say what to install
    r = load_rig(rig)
    view = training_view(r)  # every key it needs, before any frame is decoded
    check_camera_feature(rig)
    fs = load_frames(r)
    sapien = SapienRenderer(view.robot, view.camera, joint_order=r.joint_names)
    # what the MuJoCo path holds against: the values the rig states (none '# guessed')
    stated = {
        k: getattr(r.camera, f"training_{k}", None) if r.stated(f"camera.training_{k}") else None
        for k in ("jitter_px", "jitter_m", "jitter_deg", "background_max")
    }
    res = analyse(
        sapien,  # type: ignore[arg-type]
        fs,
        regions(sapien.links, view.robot),
        training_background_max=stated["background_max"],
        jitter={k: stated[f"jitter_{k}"] for k in ("px", "m", "deg")},
        max_frames=frames,
        camera_frames=camera_frames,
    )
    found = findings(r, res, None, None)[:2]  # exposure and camera; no object, no reach
    print_findings(
        f"maniskill appearance (SAPIEN, {view.camera.height} x {view.camera.width} px): {r.name}",
        found,
    )
    for k, v in view.provenance.items():
        console.print(f"  {k}: {v}", highlight=False, markup=False)
    write_json(
        json_path,
        {
            **findings_json(r, found),
            "provenance": view.provenance,
            "renderer": "SAPIEN",
            "robot_description": str(view.robot),
        },
    )
    if out is not None:
        images = found[0].typed_details(ExposureDetails).images
        if images is not None:
            out.mkdir(parents=True, exist_ok=True)
            for key in ("real", "sim", "diff"):
                atomic_write_bytes(out / f"{key}.png", png_bytes(getattr(images, key), 8))
            console.print(f"wrote {out}/real.png, sim.png, diff.png", highlight=False)

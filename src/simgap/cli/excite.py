"""``simgap excite``: chirp excitation for a rig, or with ``--for DIR`` the one episode a
diagnosis needs for what it declared not identifiable."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from simgap.cli._app import app, console, handles_errors
from simgap.cli._progress import working

TAKES = (
    "on 2 idle cores the demo's SO-101 diagnosis (6 joints open) took 44-47 s to design and "
    "6-8 min with the check (18 min wall, 4 min CPU, measured on a loaded machine); it "
    "grows with the joints left open"
)
"""What ``excite --for`` takes, measured (a range, not a computed estimate: the design's cost
is the candidates replayed per open joint, the check's a whole identification)."""


@app.command()
@handles_errors
def excite(
    rig: Path | None = typer.Argument(
        None,
        help="rig.toml (joint limits come from its "
        "model; with --for, the rig the diagnosis ran on).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="The CSV file of joint targets (with "
        "--lerobot a LeRobot-style action table, still one CSV "
        "file; an existing folder gets excitation.csv or "
        "excitation_actions.csv inside); with --for, the folder "
        "of the designed LeRobot v3 dataset (default: "
        "DIR_next_episode beside the diagnosis).",
    ),
    for_dir: Path | None = typer.Option(
        None,
        "--for",
        metavar="DIR",
        help="A diagnosis "
        "folder ('simgap diagnose RIG --out DIR'): design "
        "the episode that identifies what it declared not "
        "identifiable, with the predicted intervals.",
    ),
    rig_opt: Path | None = typer.Option(None, "--rig", help="The rig, as RIG (with --for)."),
    duration: float | None = typer.Option(
        None,
        "--duration",
        show_default=False,
        help="Seconds per joint: of each chirp (default "
        "10), with --for of each joint's designed motion "
        "(default 6).",
    ),
    f0: float = typer.Option(1.0, "--f0", help="Start frequency [Hz]."),
    f1: float = typer.Option(25.0, "--f1", help="End frequency [Hz]."),
    rate: float = typer.Option(200.0, "--rate", help="Command rate [Hz]."),
    lerobot: bool = typer.Option(
        False,
        "--lerobot",
        help="Write recorded units and LeRobot feature names instead of radians.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the chirp phases."),
    vmax: float = typer.Option(
        2 * 3.141592653589793,
        "--vmax",
        help="Joint speed the designed motion may reach [rad/s] (with --for).",
    ),
    check: bool = typer.Option(
        True,
        "--check/--no-check",
        help="With --for: simulate the "
        "episode on the current estimate, add it to the recording "
        "and fit (a minute or more), to hold the prediction against "
        "a fit.",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace a non-empty --out folder (with --for)."
    ),
    param: list[str] = typer.Option(
        [],
        "--param",
        help="With --for: design only for this "
        "parameter (kp, kv, damping, frictionloss, armature, "
        "force_limit, delay); repeatable.",
    ),
    joint: list[str] = typer.Option(
        [], "--joint", help="With --for: design only for this joint; repeatable."
    ),
) -> None:
    """Write chirp excitation (f0 to f1 Hz per joint) inside joint and velocity limits; or,
    with --for DIR, the episode to record next: for every parameter the diagnosis declared
    not identifiable, the motion that identifies it, as a LeRobot v3 dataset of one episode
    with the predicted intervals in its README."""
    from simgap.sim.rig_names import load_checked_rig

    if for_dir is not None:
        _excite_for(for_dir, rig_opt or rig, out, duration, seed, vmax, check, force, param, joint)
        return
    if rig is None or out is None:
        from simgap.errors import InputError

        raise InputError(
            field="RIG, --out",
            expected="a rig.toml and --out (chirps), or "
            "--for DIR (the episode a diagnosis asks for)",
            got=f"RIG {rig}, --out {out}",
            fix="simgap excite RIG --out FILE, or simgap excite --for DIR --rig RIG",
        )
    from simgap.actuator.excite import write_excitation

    path = write_excitation(
        load_checked_rig(rig),
        out,
        duration_s=10.0 if duration is None else duration,
        f0_hz=f0,
        f1_hz=f1,
        rate_hz=rate,
        lerobot=lerobot,
        seed=seed,
    )
    console.print(f"wrote {path}", highlight=False)


def _excite_for(
    for_dir: Path,
    rig: Path | None,
    out: Path | None,
    seconds: float | None,
    seed: int,
    vmax: float,
    check: bool,
    force: bool,
    params: list[str],
    joints: list[str],
) -> None:
    from simgap.actuator.excite_design import SEGMENT_S
    from simgap.actuator.excite_episode import (
        TASK,
        design_json,
        episode_frames,
        readme,
        result_lines,
    )
    from simgap.actuator.excite_estimate import estimate_from_diagnosis
    from simgap.actuator.excite_for import next_motion
    from simgap.branches.joint_dynamics import dataset_logs
    from simgap.demo.writers import write_lerobot_v3
    from simgap.errors import InputError
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.outputs import (
        atomic_write_json,
        atomic_write_text,
        check_not_input,
        note_input,
        output_folder,
    )
    from simgap.sim.rig_names import load_checked_rig

    note_input(for_dir)
    est = estimate_from_diagnosis(for_dir).only(params, joints)
    if rig is None:
        raise InputError(
            file=for_dir,
            field="--rig",
            expected=f"the rig the diagnosis ran on ('{est.rig}')",
            got="no rig",
            fix="pass it: simgap excite --for DIR --rig rig.toml",
        )
    r = load_checked_rig(rig)
    if r.name != est.rig:
        raise InputError(
            file=rig,
            field="name",
            expected=f"the rig of the diagnosis ('{est.rig}')",
            got=f"'{r.name}'",
            fix="pass the rig.toml that 'simgap diagnose' was run on",
        )
    if r.evidence.dataset is None:
        raise InputError(
            file=rig,
            field="evidence.dataset",
            expected="the LeRobot dataset the diagnosis fitted",
            got="none",
            fix="name it in rig.toml ([evidence] dataset = ...)",
        )
    target = out if out is not None else for_dir.parent / f"{for_dir.name}_next_episode"
    note_input(r.evidence.dataset)
    check_not_input(target, folder=True)
    ds = read_lerobot_dataset(r.evidence.dataset)
    logs, targets, _ = dataset_logs(r, ds, est.fit_seconds)
    n = max(1, min(est.fitted_episodes, len(logs)))
    with working(
        "excite",
        "designing the next motion from the diagnosis's sensitivities"
        + (", then simulating and fitting it (--no-check skips that)" if check else "")
        + f" for {len({t[0] for t in est.targets})} joint(s) left "
        f"open; {TAKES}",
    ):
        nm = next_motion(
            r,
            est,
            logs[:n],
            targets[:n],
            float(ds.fps),
            vmax_rad_s=vmax,
            seconds=seconds or SEGMENT_S,
            seed=seed,
            check=check,
        )
    from simgap.sim.floor import has_floor

    floor = has_floor(r.model_path)
    frames, names = episode_frames(r, nm)
    with output_folder(target, force=force) as od:
        write_lerobot_v3(
            od,
            [frames],
            fps=int(round(ds.fps)),
            names=names,
            task=TASK,
            robot_type=str(ds.info.get("robot_type", "unknown")),
        )
        atomic_write_text(od / "README.md", readme(nm, r, str(for_dir), floor))
        atomic_write_json(od / "excite_design.json", design_json(nm, str(for_dir), floor))
    for line in result_lines(nm, floor):
        console.print(escape(line), highlight=False)
    console.print(
        f"wrote {escape(str(target))} (one episode, README.md with the predicted "
        "intervals, excite_design.json)",
        highlight=False,
    )

"""``simgap calibration check|compare``: LeRobot's calibration files against the model and
against each other."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, handles_errors, json_target, print_findings, write_json
from simgap.cli._typer import App

calibration_app = App(
    help="LeRobot calibration files: against the rig's model (range, sign, "
    "zero, millimetres at the gripper), and two files compared.",
    no_args_is_help=True,
)
app.add_typer(calibration_app, name="calibration")


def _axes(items: list[str]) -> dict[str, int]:
    from simgap.errors import InputError

    out = {}
    for it in items:
        joint, sep, val = it.partition("=")
        if not sep or val.strip() not in ("1", "+1", "-1"):
            raise InputError(field="--axis", expected="JOINT=1 or JOINT=-1", got=it)
        out[joint.strip()] = int(val.strip())
    return out


@calibration_app.command("check")
@handles_errors
def check(
    calibration: Path = typer.Argument(
        ..., help="LeRobot's calibration JSON of the follower (or the leader)."
    ),
    rig_path: Path = typer.Option(
        ..., "--rig", help="The rig.toml whose model and joints the calibration is held against."
    ),
    degrees: bool | None = typer.Option(
        None,
        "--degrees/--m100",
        help="How the body "
        "joints were recorded (LeRobot's use_degrees); "
        "default: from the rig's units.",
    ),
    axis: list[str] = typer.Option(
        [],
        "--axis",
        help="JOINT=-1 where the servo's "
        "counts run against the model joint's axis (repeat; "
        "default +1).",
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Also write the finding as JSON."
    ),
) -> None:
    """Each joint's calibrated range, sign and zero against the MJCF, in mm at the gripper."""
    from simgap.calibration.against_model import check_against_model
    from simgap.calibration.finding import check_finding
    from simgap.cli._app import findings_json
    from simgap.evidence.calibration import read_calibration
    from simgap.sim.rig_names import load_checked_rig

    rig = load_checked_rig(rig_path)
    result = check_against_model(
        read_calibration(calibration), rig, use_degrees=degrees, axes=_axes(axis)
    )
    finding = check_finding(result)
    print_findings(f"calibration {calibration.name} against {rig.model_path.name}", [finding])
    write_json(json_path, findings_json(rig, [finding]))


@calibration_app.command("compare")
@handles_errors
def compare(
    a: Path = typer.Argument(..., help="The first calibration JSON (the older)."),
    b: Path = typer.Argument(
        ..., help="The second calibration JSON (the newer, or another arm's)."
    ),
    rig_path: Path | None = typer.Option(
        None, "--rig", help="A rig.toml: gives each shift in mm at the gripper."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Also write the finding as JSON."
    ),
) -> None:
    """What moved between two calibrations, motor by motor."""
    from simgap.calibration.against_model import at_gripper, motor_of
    from simgap.calibration.compare import compare_calibrations
    from simgap.calibration.finding import compare_finding
    from simgap.evidence.calibration import read_calibration

    ca, cb = read_calibration(a), read_calibration(b)
    changes = compare_calibrations(ca, cb)
    grip: dict[str, float] = {}
    if rig_path is not None:
        from simgap.sim.rig_names import load_checked_rig

        rig = load_checked_rig(rig_path)
        joint_of = {motor_of(j.recorded, j.name, cb): j.name for j in rig.joints}
        shifts = {
            joint_of[c.motor]: c.zero_shift_rad
            for c in changes
            if c.motor in joint_of and c.zero_shift_rad is not None
        }
        by_joint = at_gripper(rig, shifts)
        grip = {m: by_joint[j] for m, j in joint_of.items() if m is not None and j in by_joint}
    finding = compare_finding(changes, a.name, b.name, grip)
    print_findings(f"calibration {a.name} -> {b.name}", [finding])
    write_json(json_path, {"findings": [finding.to_dict()]})


@calibration_app.command("drift")
@handles_errors
def drift(
    rig_path: Path = typer.Argument(
        ..., help="The rig.toml; its [evidence] dataset is the teleoperation recording."
    ),
    dataset: Path | None = typer.Option(
        None, "--dataset", help="A LeRobot dataset instead of the rig's."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Also write the finding as JSON."
    ),
) -> None:
    """Leader/follower drift on still segments: offset per joint with its interval, apart
    from the gravity deflection, in mm at the gripper."""
    from simgap.calibration.drift import leader_follower_drift
    from simgap.calibration.finding import drift_finding
    from simgap.cli._app import findings_json
    from simgap.errors import InputError
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.sim.rig_names import load_checked_rig

    rig = load_checked_rig(rig_path)
    root = dataset or rig.evidence.dataset
    if root is None:
        raise InputError(
            file=rig_path,
            field="evidence.dataset",
            expected="a teleoperation dataset",
            got="nothing",
            fix='add dataset = "<folder>" under [evidence], or pass --dataset',
        )
    trajs = dataset_trajectories(read_lerobot_dataset(root), rig)
    finding = drift_finding(leader_follower_drift(trajs, rig))
    print_findings(f"leader/follower drift in {Path(root).name}", [finding])
    write_json(json_path, findings_json(rig, [finding]))

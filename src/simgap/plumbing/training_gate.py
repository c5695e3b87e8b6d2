"""The training audit's name-gate check: ManiSkill's ``LeRobotRealAgent`` corrects the
gripper and elbow only for one robot name."""

from __future__ import annotations

from simgap.finding import Finding
from simgap.plumbing.training_findings import (
    missing_keys,
    not_measured,
    provenance_of,
    training_finding,
)
from simgap.rig import Rig

GATED_NAME = "so100_follower"
"""``LeRobotRealAgent`` (ManiSkill 3.0.1) switches the gripper to degrees and adds its
elbow correction only for a robot of this name."""


ELBOW_CORRECTION_DEG = 6.8


GATE_BRIDGE = "LeRobotRealAgent"


def check_name_gate(rig: Rig) -> Finding:
    """``LeRobotRealAgent``'s corrections run only for a robot named ``so100_follower``."""
    dep, title = rig.deploy, "LeRobot name gate (training config)"
    miss = missing_keys(rig, [("deploy.bridge", dep.bridge)])
    if not miss and dep.bridge == GATE_BRIDGE:
        miss = missing_keys(rig, [("deploy.robot_name", dep.robot_name)])
    if miss:
        return not_measured(title, "name_gate", miss, "the name gate")
    prov = provenance_of(rig, "deploy.bridge", "deploy.robot_name")
    if dep.bridge != GATE_BRIDGE:
        return training_finding(
            title,
            "name_gate",
            False,
            f"The arm is driven by {dep.bridge!r}, not "
            f"ManiSkill's {GATE_BRIDGE}: its name gate does not apply.",
            "",
            {"bridge": dep.bridge},
            None,
            prov,
        )
    skipped = dep.robot_name != GATED_NAME
    return training_finding(
        title,
        "name_gate",
        skipped,
        (
            f"{GATE_BRIDGE} switches the gripper to degrees and adds its "
            f"{ELBOW_CORRECTION_DEG} deg elbow correction only when robot.name == "
            f"{GATED_NAME!r}; this robot is {dep.robot_name!r}, so both silently never run (the "
            "post-mortem's gripper read 11 deg off closed, about 22 open)."
            if skipped
            else f"robot.name is {GATED_NAME!r}: {GATE_BRIDGE}'s gripper-degrees and elbow "
            "corrections run."
        ),
        f"In your {GATE_BRIDGE} (or a subclass), apply the gripper-degrees switch and the "
        f"{ELBOW_CORRECTION_DEG} deg elbow correction for {dep.robot_name!r} too, or check "
        "both against the simulator at one pose.",
        {
            "robot_name": dep.robot_name,
            "gated_name": GATED_NAME,
            "elbow_correction_deg": ELBOW_CORRECTION_DEG if skipped else 0.0,
        },
        None,
        prov,
    )

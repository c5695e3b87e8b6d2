"""The training audit: what training showed the policy (``[training]``, read from ManiSkill
by ``simgap init --maniskill-config``) held against the rig, one Finding per check with the
numbers and the change to make.

Checks: the control rate (training against the deployed rate and the dataset's real one),
the top speed (per-step limit x action scale x rate), the PD drive against the servo's own
loop (LeRobot's P coefficient), the finger friction and the object mass against measured
ones, the world origin against the point placements are measured from, the camera's field
of view and mount, and LeRobotRealAgent's name gate. A check decides only on values the
user stated or ManiSkill gave (``Rig.provenance`` ``given`` / ``from ManiSkill``): one whose
deciding value is a default or ``# guessed`` is not measured and names the key to fill.
Each check lives in a ``training_*`` module (rate and speed, drive, ratios, frames, gate)
over what they share (``training_findings``); this module runs them in order.
"""

from __future__ import annotations

from simgap.finding import Finding
from simgap.plumbing.training_drive import check_drive
from simgap.plumbing.training_findings import RigSide
from simgap.plumbing.training_frames import check_camera, check_origin
from simgap.plumbing.training_gate import check_name_gate
from simgap.plumbing.training_rate import check_rate, check_top_speed
from simgap.plumbing.training_ratios import FRICTION_BAND, MASS_BAND, ratio_check
from simgap.rig import Rig


def audit_training(rig: Rig, side: RigSide) -> list[Finding]:
    """Every check, in the order of the post-mortem's list."""
    tr, dep = rig.training, rig.deploy
    return [
        check_rate(rig, side),
        check_top_speed(rig, side),
        check_drive(rig),
        ratio_check(
            rig,
            "Finger friction (training config)",
            "finger_friction",
            "training.finger_friction",
            tr.finger_friction,
            "deploy.finger_friction",
            dep.finger_friction,
            FRICTION_BAND,
            "",
            "Retrain with the measured friction (the jaws' urdf_config "
            "material), or make the real fingers grippier.",
        ),
        ratio_check(
            rig,
            "Object mass (training config)",
            "object_mass",
            "training.object_mass_kg",
            tr.object_mass_kg,
            "deploy.object_mass_kg",
            dep.object_mass_kg,
            MASS_BAND,
            " kg",
            "Retrain with the weighed mass (the object's density or mass in the env).",
        ),
        check_origin(rig, side),
        *check_camera(rig, side),
        check_name_gate(rig),
    ]

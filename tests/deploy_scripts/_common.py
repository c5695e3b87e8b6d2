"""Shared pieces of the deployment scripts: a scripted policy in simulator units, the
conversions a deployment needs, and a control loop.

The "policy" moves the arm from HOME to REACH, opening the gripper and then closing it; body
joints come out in degrees (the robot's units with use_degrees) and the gripper in the
simulator's radians, as a policy trained in MuJoCo would give them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

DT = 1.0 / 15.0  # the period the policy was trained at [s]
GRIPPER_RANGE_RAD = (-0.174533, 1.7453292)  # the simulator's gripper joint range
HOME = {
    "shoulder_pan.pos": 0.0,
    "shoulder_lift.pos": -30.0,
    "elbow_flex.pos": 50.0,
    "wrist_flex.pos": 50.0,
    "wrist_roll.pos": 0.0,
}
REACH = {
    "shoulder_pan.pos": 15.0,
    "shoulder_lift.pos": 10.0,
    "elbow_flex.pos": 20.0,
    "wrist_flex.pos": 60.0,
    "wrist_roll.pos": 20.0,
}
BASE = {"write_goal_before_torque": True, "control_dt_s": DT}


def policy(step: int, n: int) -> dict[str, float]:
    """Body joints [deg] and the gripper [rad, simulator units] at ``step`` of ``n``."""
    f = min(1.0, step / max(1, n // 2))
    out = {k: HOME[k] + f * (REACH[k] - HOME[k]) for k in HOME}
    out["gripper"] = 0.7 if step < n // 2 else GRIPPER_RANGE_RAD[0]
    return out


def gripper_pct(rad: float) -> float:
    """Simulator gripper angle [rad] to LeRobot's 0..100 (0 closed, 100 open)."""
    lo, hi = GRIPPER_RANGE_RAD
    return (rad - lo) / (hi - lo) * 100.0


def to_robot(a: dict[str, float]) -> dict[str, float]:
    """The correct conversion: body degrees as they are, the gripper to 0..100."""
    out = {k: v for k, v in a.items() if k != "gripper"}
    out["gripper.pos"] = gripper_pct(a["gripper"])
    return out


def run_episode(
    robot,
    n: int,
    convert: Callable[[dict[str, float]], dict[str, float]] = to_robot,
    inference_s: float = 0.0,
    keep_period: bool = True,
) -> None:
    """``n`` control ticks: observe, think for ``inference_s``, act, wait for the period."""
    for step in range(n):
        t0 = robot.clock.now()
        robot.get_observation()
        robot.clock.sleep(inference_s)  # the policy's compute time
        robot.send_action(convert(policy(step, n)))
        elapsed = robot.clock.now() - t0
        robot.clock.sleep(DT - elapsed if keep_period else DT)


def go_home(robot, n: int = 10) -> None:
    """Drive to HOME with the gripper half open."""
    for _ in range(n):
        robot.get_observation()
        robot.send_action({**HOME, "gripper.pos": 50.0})
        robot.clock.sleep(DT)


def checkpoint_file(robot) -> Path:
    """Where the checkpoint goes: beside the trace, named after it."""
    return Path(robot.config.trace_path).with_suffix(".pt")


def save_checkpoint(path: Path, from_gpu: bool) -> Path:
    """A tiny policy checkpoint; ``from_gpu`` tags its tensors 'cuda:0', as torch.save does
    for tensors in GPU memory (this machine needs no GPU to write it)."""
    from unittest import mock

    import torch

    state = {"w": torch.linspace(0.0, 1.0, 12).reshape(3, 4), "b": torch.zeros(4)}
    if from_gpu:
        with mock.patch("torch.serialization.location_tag", lambda storage: "cuda:0"):
            torch.save(state, path)
    else:
        torch.save(state, path)
    return path


def load_policy_weights(path: Path) -> dict:
    """What the deployment does with the checkpoint (mapped to the CPU so it runs here)."""
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)

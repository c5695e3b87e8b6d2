"""The training config as evidence: the JSON ``simgap.maniskill.export_config`` writes where
the user trains, read into what ``[training]`` (and ``[camera]``) need.

From the export (format ``simgap.maniskill_config/1``) it takes the control and physics
periods, the active controller's PD stiffness, damping and force limit, its per-step bound
on the arm (a delta controller's ``upper`` at action 1), the jaws' material friction, the
object's mass and size, the policy camera's mount, position, field of view and resolution,
the robot description and where the world origin sits against the pan axis. Every field is
checked; a bad one is an InputError naming the file and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError

FORMAT = "simgap.maniskill_config/1"
GRIPPER_HINTS = ("jaw", "gripper", "finger")
"""A joint or link whose name holds one of these is the gripper's."""
EXPORT_HOW = (
    "write it with 'python -m simgap.maniskill.export_config ENV_ID --out FILE' "
    "where you train (docs/maniskill.md)"
)


@dataclass(frozen=True)
class TrainingCamera:
    """The camera training rendered for the policy.

    Attributes:
        uid: ManiSkill's camera uid.
        mount: the link or actor it is mounted on (None: fixed in the world).
        pose_p_m: its position in the mount's frame [m], shape (3,).
        pose_q_wxyz: its orientation in the mount's frame (unit quaternion w, x, y, z;
            SAPIEN's camera frame: x forward, y left, z up), shape (4,).
        fov_deg: vertical field of view [deg].
        resolution: (height, width) rendered [px].
    """

    uid: str
    mount: str | None
    pose_p_m: tuple[float, float, float] | None
    pose_q_wxyz: tuple[float, float, float, float] | None
    fov_deg: float | None
    resolution: tuple[int, int]


@dataclass(frozen=True)
class ManiSkillConfig:
    """What a ManiSkill environment showed the policy. SI units.

    Attributes:
        source: the JSON file.
        env_id, version: the env id and ManiSkill's version.
        agent: the agent uid; robot_description: its URDF or MJCF path.
        control_dt_s, physics_dt_s: 1 / control_freq and 1 / sim_freq [s].
        control_mode: the active controller's name.
        stiffness_nm_rad, damping_nms_rad, force_limit_nm: the arm joints' PD drive (the
            largest over the arm joints).
        delta_limit_rad: the arm's per-step bound at action 1 [rad] (None: an absolute
            position controller).
        finger_friction: the jaws' static friction (None: no material set on them).
        object_mass_kg, object_size_m: the object's mass and side [m].
        camera: the policy camera (None: none exported).
        origin_from_pan_axis_m: the world origin from the pan axis, in the robot base's
            frame [m], shape (3,).
    """

    source: Path
    env_id: str
    version: str | None
    agent: str
    robot_description: str | None
    control_dt_s: float
    physics_dt_s: float
    control_mode: str
    stiffness_nm_rad: float | None
    damping_nms_rad: float | None
    force_limit_nm: float | None
    delta_limit_rad: float | None
    finger_friction: float | None
    object_mass_kg: float | None
    object_size_m: float | None
    camera: TrainingCamera | None
    origin_from_pan_axis_m: tuple[float, float, float] | None


def _num(v: Any, path: Path, field: str, *, positive: bool = True) -> float:
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not math.isfinite(v)
        or (positive and v <= 0)
    ):
        raise InputError(
            file=path,
            field=field,
            expected="a positive number" if positive else "a finite number",
            got=v,
            fix=f"re-export it: {EXPORT_HOW}",
        )
    return float(v)


def _vec(v: Any, n: int, path: Path, field: str) -> tuple[float, ...]:
    if not isinstance(v, list) or len(v) != n:
        raise InputError(
            file=path,
            field=field,
            expected=f"a list of {n} numbers",
            got=v,
            fix=f"re-export it: {EXPORT_HOW}",
        )
    return tuple(_num(x, path, f"{field}[{i}]", positive=False) for i, x in enumerate(v))


def _arm(controllers: Sequence[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any], int]]:
    """(joint, controller, index in it) of every arm joint: the joints whose name holds no
    gripper hint; with no hint anywhere, the last joint is taken for the gripper."""
    rows = [(str(j), c, i) for c in controllers for i, j in enumerate(c.get("joint_names") or [])]
    arm = [r for r in rows if not any(h in r[0].lower() for h in GRIPPER_HINTS)]
    return arm if len(arm) < len(rows) else rows[:-1]


def _largest(
    rows: list[tuple[str, Mapping[str, Any], int]],
    key: str,
    path: Path,
) -> float | None:
    vals = []
    for j, c, i in rows:
        seq = c.get(key)
        if seq is None:
            continue
        if not isinstance(seq, list) or i >= len(seq):
            raise InputError(
                file=path,
                field=f"controllers.{c.get('name')}.{key}",
                expected="one number per joint",
                got=seq,
                fix=f"re-export it: {EXPORT_HOW}",
            )
        vals.append(_num(seq[i], path, f"controllers.{c.get('name')}.{key} ({j})", positive=False))
    return max(abs(v) for v in vals) if vals else None


def _rotate_inverse(q: tuple[float, ...], v: tuple[float, ...]) -> tuple[float, float, float]:
    """``v`` expressed in the frame of the unit quaternion ``q`` (w, x, y, z)."""
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    w, x, y, z = w / n, -x / n, -y / n, -z / n  # the conjugate
    vx, vy, vz = v
    # t = 2 q_vec x v; v' = v + w t + q_vec x t
    tx, ty, tz = 2 * (y * vz - z * vy), 2 * (z * vx - x * vz), 2 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )


def _camera(cams: Any, path: Path, uid: str | None) -> TrainingCamera | None:
    if not isinstance(cams, list) or not cams:
        return None
    by = {str(c.get("uid")): c for c in cams if isinstance(c, dict)}
    if uid is not None and uid not in by:
        from simgap.errors import NameNotFoundError

        raise NameNotFoundError("camera", uid, by, file=path, field="cameras")
    c = by[uid] if uid is not None else next(iter(by.values()))
    where = f"cameras.{c.get('uid')}"
    p = c.get("pose_p_m")
    pose = _vec(p, 3, path, f"{where}.pose_p_m") if p is not None else None
    qw = c.get("pose_q_wxyz")
    quat = _vec(qw, 4, path, f"{where}.pose_q_wxyz") if qw is not None else None
    fov = c.get("fov_rad")
    return TrainingCamera(
        uid=str(c.get("uid")),
        mount=None if c.get("mount") is None else str(c["mount"]),
        pose_p_m=(pose[0], pose[1], pose[2]) if pose else None,
        pose_q_wxyz=(quat[0], quat[1], quat[2], quat[3]) if quat else None,
        fov_deg=math.degrees(_num(fov, path, f"{where}.fov_rad")) if fov is not None else None,
        resolution=(
            int(_num(c.get("height"), path, f"{where}.height")),
            int(_num(c.get("width"), path, f"{where}.width")),
        ),
    )


def read_maniskill_config(path: str | Path, camera: str | None = None) -> ManiSkillConfig:
    """Read the export at ``path``; ``camera``: the policy camera's uid (default: the first).

    Raises:
        InputError: not such a JSON, or a field missing or out of range (named).
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            file=path,
            expected="the JSON simgap.maniskill.export_config wrote",
            got="no such file",
            fix=EXPORT_HOW,
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(file=path, expected="JSON", got=str(e), fix=EXPORT_HOW) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(
            file=path,
            field="format",
            expected=f"{FORMAT!r}",
            got=raw.get("format") if isinstance(raw, dict) else type(raw).__name__,
            fix=EXPORT_HOW,
        )
    ctrls = raw.get("controllers")
    if not isinstance(ctrls, list) or not ctrls or not all(isinstance(c, dict) for c in ctrls):
        raise InputError(
            file=path,
            field="controllers",
            expected="the active controller's configs",
            got=ctrls,
            fix=EXPORT_HOW,
        )
    arm = _arm(ctrls)
    delta = any(c.get("use_delta") for _, c, _ in arm)
    upper = _largest(arm, "upper", path) if delta else None
    mats = raw.get("link_materials") or {}
    jaw = [
        m.get("static_friction")
        for link, m in mats.items()
        if isinstance(m, dict) and any(h in str(link).lower() for h in GRIPPER_HINTS)
    ]
    obj = raw.get("object") or {}
    half = obj.get("half_size_m")
    o = raw.get("origin") or {}
    origin = None
    if o.get("first_joint_p_m") and o.get("robot_root_p_m"):
        pan = _vec(o["first_joint_p_m"], 3, path, "origin.first_joint_p_m")
        q = _vec(
            o.get("robot_root_q_wxyz") or [1.0, 0.0, 0.0, 0.0], 4, path, "origin.robot_root_q_wxyz"
        )
        origin = _rotate_inverse(q, tuple(-x for x in pan))
    agent = raw.get("agent") or {}
    return ManiSkillConfig(
        source=path,
        env_id=str(raw.get("env_id")),
        version=raw.get("mani_skill_version"),
        agent=str(agent.get("uid")),
        # ManiSkill's BaseAgent loads urdf_path when it is set, else mjcf_path
        robot_description=agent.get("urdf_path") or agent.get("mjcf_path"),
        control_dt_s=1.0 / _num(raw.get("control_freq_hz"), path, "control_freq_hz"),
        physics_dt_s=1.0 / _num(raw.get("sim_freq_hz"), path, "sim_freq_hz"),
        control_mode=str(raw.get("control_mode")),
        stiffness_nm_rad=_largest(arm, "stiffness", path),
        damping_nms_rad=_largest(arm, "damping", path),
        force_limit_nm=_largest(arm, "force_limit", path),
        delta_limit_rad=upper,
        finger_friction=max(
            _num(f, path, "link_materials.static_friction", positive=False) for f in jaw
        )
        if jaw
        else None,
        object_mass_kg=_num(obj["mass_kg"], path, "object.mass_kg")
        if obj.get("mass_kg") is not None
        else None,
        object_size_m=2.0 * _num(half, path, "object.half_size_m") if half is not None else None,
        camera=_camera(raw.get("cameras"), path, camera),
        origin_from_pan_axis_m=origin,
    )


def export_here(
    env_id: str, out: Path, agent: str | None = None, env_kwargs: str | None = None
) -> Path:
    """Export ManiSkill's ``env_id`` from this Python into ``out`` (``--maniskill``), with the
    ``robot_uids`` (``agent``) and other ``gym.make`` keyword arguments (``env_kwargs``, a JSON
    object) training passed.

    Raises:
        InputError: ``env_kwargs`` is not a JSON object, ``mani_skill`` is not importable here
            (the message names the package and the export to run where it is), or the export
            failed.
    """
    import importlib.util

    if env_kwargs is not None:
        try:
            parsed = json.loads(env_kwargs)
        except json.JSONDecodeError as e:
            raise InputError(
                field="--env-kwargs",
                expected="a JSON object of gym.make keyword arguments",
                got=f"{env_kwargs!r} ({e.msg})",
                fix="write it as JSON, e.g. '{\"domain_randomization\": false}'",
            ) from None
        if not isinstance(parsed, dict):
            raise InputError(
                field="--env-kwargs",
                expected="a JSON object of gym.make keyword arguments",
                got=type(parsed).__name__,
                fix="write it as an object, e.g. '{\"domain_randomization\": false}'",
            )

    if importlib.util.find_spec("mani_skill") is None:
        raise InputError(
            field="--maniskill",
            expected="the mani_skill package (ManiSkill 3) importable in this Python",
            got="it is not installed",
            fix="pip install mani-skill==3.0.1 here, or "
            f"{EXPORT_HOW.replace('ENV_ID', env_id)} and pass "
            "--maniskill-config FILE",
        )
    from simgap.maniskill.export_config import main

    argv = [env_id, "--out", str(out)]
    argv += ["--agent", agent] if agent else []
    argv += ["--env-kwargs", env_kwargs] if env_kwargs is not None else []
    if main(argv) != 0:
        raise InputError(
            field="--maniskill",
            expected=f"ManiSkill's {env_id} built here",
            got="the export failed",
            fix=EXPORT_HOW,
        )
    return out

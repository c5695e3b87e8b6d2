"""Write what a ManiSkill 3 environment shows the policy as JSON, for ``simgap init
--maniskill-config FILE``. Run it where you train, with your own ManiSkill install::

    python -m simgap.maniskill.export_config SO100GraspCube-v1 --out training.json \\
        [--agent so100] [--control-mode pd_joint_target_delta_pos] \\
        [--env-kwargs '{"domain_randomization": false}'] [--object cube] [--camera base_camera]

Give it the env id, agent and keyword arguments your training script passes to
``gym.make``. It builds one environment on the CPU (``sim_backend="physx_cpu"``), resets
it once and reads only ManiSkill 3's public objects (names checked against ManiSkill
3.0.1):

- ``env.unwrapped.control_freq`` and ``sim_freq`` [Hz];
- ``env.unwrapped.agent``: ``uid``, ``urdf_path`` / ``mjcf_path``, ``control_mode``, the
  active controller's config(s) (``controller.configs`` of a combined controller, else
  ``controller.config``: joint names, ``lower``/``upper``, ``stiffness``, ``damping``,
  ``force_limit``, ``use_delta``, ``use_target``, ``normalize_action``, ``drive_mode``), the
  ``urdf_config`` materials and the links they are set on (the SO-100's jaws: friction 2.0);
- ``agent.robot.pose`` and ``agent.robot.active_joints[0].get_global_pose()``: the world
  origin against the first (pan) joint's axis;
- the object actor ``env.unwrapped.<object>`` (its ``mass``; ``<object>_half_sizes`` where
  the env keeps them, as SO100GraspCube-v1 does);
- the cameras ``env.unwrapped.scene.sensors``: each one's ``config`` (``uid``, ``mount``,
  ``pose``, ``fov``, ``width``, ``height``).

It imports nothing of simgap beyond this file and writes nothing but ``--out``; it needs
``mani_skill`` (and its ``gymnasium``) and no network.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

FORMAT = "simgap.maniskill_config/1"
"""The ``format`` of the JSON written (``simgap.maniskill.config`` reads it)."""


NO_DEVICE_FIX = (
    "ManiSkill 3.0.1 builds its envs' render materials even with "
    "--render-backend none, so it needs one: on a CPU machine Vulkan's lavapipe "
    "from Mesa 25 (Debian 12: apt-get install -t bookworm-backports "
    "mesa-vulkan-drivers; Debian 12's own Mesa 22.3 is refused), with "
    "VK_ICD_FILENAMES pointing at its lvp_icd JSON in /usr/share/vulkan/icd.d/."
)
"""What to do when ManiSkill finds no rendering device (SAPIEN's Vulkan)."""


def _no_render_device(e: BaseException) -> bool:
    """Whether ``e`` is SAPIEN saying it has no Vulkan device to render with."""
    text = str(e).lower()
    return "rendering device" in text or "vk::" in text or "vulkan" in text


def _floats(x: Any) -> list[float] | None:
    """A tensor, array, sequence or number as a flat list of floats (None for None)."""
    if x is None:
        return None
    if hasattr(x, "detach"):
        x = x.detach().cpu()
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (int, float)):
        return [float(x)]
    out: list[float] = []
    for v in x:
        out.extend(_floats(v) or [])
    return out


def _per_joint(x: Any, n: int) -> list[float] | None:
    """A controller bound or gain broadcast to one value per joint (None stays None)."""
    v = _floats(x)
    if v is None:
        return None
    return v * n if len(v) == 1 else v


def _controller(name: str, cfg: Any) -> dict[str, Any]:
    joints = [str(j) for j in (getattr(cfg, "joint_names", None) or [])]
    n = len(joints)
    drive = getattr(cfg, "drive_mode", None)
    return {
        "name": name,
        "class": type(cfg).__name__,
        "joint_names": joints,
        "lower": _per_joint(getattr(cfg, "lower", None), n),
        "upper": _per_joint(getattr(cfg, "upper", None), n),
        "stiffness": _per_joint(getattr(cfg, "stiffness", None), n),
        "damping": _per_joint(getattr(cfg, "damping", None), n),
        "force_limit": _per_joint(getattr(cfg, "force_limit", None), n),
        "use_delta": bool(getattr(cfg, "use_delta", False)),
        "use_target": bool(getattr(cfg, "use_target", False)),
        "normalize_action": bool(getattr(cfg, "normalize_action", False)),
        "drive_mode": drive if isinstance(drive, str) or drive is None else list(drive),
    }


def _materials(agent: Any) -> dict[str, dict[str, float]]:
    """Per link, the friction of the material ``urdf_config`` sets on it."""
    cfg = getattr(agent, "urdf_config", None)
    if not isinstance(cfg, dict):
        return {}
    mats = cfg.get("_materials", {}) or {}
    out: dict[str, dict[str, float]] = {}
    for link, spec in (cfg.get("link", {}) or {}).items():
        mat = mats.get(spec.get("material")) if isinstance(spec, dict) else None
        if isinstance(mat, dict):
            out[str(link)] = {
                k: float(mat[k])
                for k in ("static_friction", "dynamic_friction", "restitution")
                if k in mat
            }
    return out


def _asset(path: Any) -> str | None:
    """An agent's robot description as the file ManiSkill loads: its ``{PACKAGE_ASSET_DIR}``
    style placeholders filled by ``mani_skill.format_path`` (what ``BaseAgent`` does)."""
    if path is None:
        return None
    try:
        from mani_skill import format_path

        return str(format_path(str(path)))
    except (ImportError, KeyError, IndexError, ValueError):
        return str(path)


def _camera(sensor: Any) -> dict[str, Any] | None:
    cfg = getattr(sensor, "config", None)
    if cfg is None or not hasattr(cfg, "width"):
        return None
    mount = getattr(cfg, "mount", None)
    pose = getattr(cfg, "pose", None)
    fov = getattr(cfg, "fov", None)
    fov_v = _floats(fov)
    return {
        "uid": str(cfg.uid),
        "mount": getattr(mount, "name", None)
        if mount is not None
        else getattr(cfg, "entity_uid", None),
        "pose_p_m": (_floats(getattr(pose, "p", None)) or [])[:3] or None,
        "pose_q_wxyz": (_floats(getattr(pose, "q", None)) or [])[:4] or None,
        "fov_rad": fov_v[0] if fov_v else None,
        "width": int(cfg.width),
        "height": int(cfg.height),
    }


def _object(env: Any, name: str | None) -> dict[str, Any] | None:
    names = [name] if name else ["cube", "obj", "object"]
    for n in names:
        actor = getattr(env, n, None)
        if actor is None:
            continue
        mass = _floats(getattr(actor, "mass", None))
        half = _floats(
            getattr(env, f"{n}_half_sizes", None) or getattr(env, f"{n}_half_size", None)
        )
        return {
            "attr": n,
            "mass_kg": mass[0] if mass else None,
            "half_size_m": half[0] if half else None,
        }
    if name:
        raise SystemExit(
            f"export_config: the env has no attribute {name!r} (pass --object "
            "with the attribute your env keeps the object actor in)"
        )
    return None


def export(
    env: Any, *, env_id: str, env_kwargs: dict[str, Any], object_attr: str | None = None
) -> dict[str, Any]:
    """What the (reset) ManiSkill env ``env`` shows the policy, as a JSON-able dict."""
    import mani_skill

    u = env.unwrapped
    agent = u.agent
    ctrl = agent.controller
    configs = getattr(ctrl, "configs", None)
    controllers = (
        [_controller(str(k), c) for k, c in configs.items()]
        if configs
        else [_controller("all", ctrl.config)]
    )
    robot = agent.robot
    first = robot.active_joints[0]
    root = robot.pose
    pan = first.get_global_pose()
    sensors = getattr(u.scene, "sensors", {}) or {}
    cams = [c for c in (_camera(s) for s in sensors.values()) if c is not None]
    return {
        "format": FORMAT,
        "mani_skill_version": getattr(mani_skill, "__version__", None),
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "control_freq_hz": float(u.control_freq),
        "sim_freq_hz": float(u.sim_freq),
        "agent": {
            "uid": str(agent.uid),
            "urdf_path": _asset(getattr(agent, "urdf_path", None)),
            "mjcf_path": _asset(getattr(agent, "mjcf_path", None)),
        },
        "control_mode": str(agent.control_mode),
        "controllers": controllers,
        "link_materials": _materials(agent),
        "object": _object(u, object_attr),
        "cameras": cams,
        "origin": {
            "robot_root_p_m": (_floats(root.p) or [])[:3],
            "robot_root_q_wxyz": (_floats(root.q) or [])[:4],
            "first_joint": str(first.name),
            "first_joint_p_m": (_floats(pan.p) or [])[:3],
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Build the env as training does, export it to ``--out``."""
    ap = argparse.ArgumentParser(
        prog="python -m simgap.maniskill.export_config", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("env_id", help="the env id training made (SO100GraspCube-v1)")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--agent", help="robot_uids, as training passed it (default: the env's)")
    ap.add_argument("--control-mode", help="control_mode, as training passed it")
    ap.add_argument(
        "--env-kwargs", default="{}", help="other gym.make keyword arguments, as a JSON object"
    )
    ap.add_argument(
        "--object", help="the env attribute holding the object actor (default: cube, obj or object)"
    )
    ap.add_argument(
        "--render-backend",
        help="render_backend for gym.make (the cameras' configs "
        "are read either way; ManiSkill 3.0.1 still needs a Vulkan device with "
        "'none')",
    )
    args = ap.parse_args(argv)
    try:
        kwargs = json.loads(args.env_kwargs)
    except json.JSONDecodeError as e:
        ap.error(f"--env-kwargs is not JSON: {e}")
    if not isinstance(kwargs, dict):
        ap.error("--env-kwargs must be a JSON object")
    try:
        import gymnasium as gym
        import mani_skill.envs  # noqa: F401  (registers the envs)
    except ImportError as e:
        print(
            f"export_config: needs ManiSkill 3 (pip install mani-skill==3.0.1): {e}",
            file=sys.stderr,
        )
        return 2
    make = dict(kwargs, num_envs=1, sim_backend="physx_cpu")
    if args.agent:
        make["robot_uids"] = args.agent
    if args.control_mode:
        make["control_mode"] = args.control_mode
    if args.render_backend:
        make["render_backend"] = args.render_backend
    try:
        env = gym.make(args.env_id, **make)
        try:
            env.reset(seed=0)
            out = export(env, env_id=args.env_id, env_kwargs=kwargs, object_attr=args.object)
        finally:
            env.close()
    except RuntimeError as e:
        if not _no_render_device(e):
            raise
        print(
            f"export_config: ManiSkill found no Vulkan device to build {args.env_id} ({e}). "
            f"{NO_DEVICE_FIX}",
            file=sys.stderr,
        )
        return 2
    text = json.dumps(out, indent=2, default=str)  # a path object as its text
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(
        f"wrote {args.out}: {args.env_id}, control {out['control_freq_hz']:g} Hz, "
        f"physics {out['sim_freq_hz']:g} Hz, {out['control_mode']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

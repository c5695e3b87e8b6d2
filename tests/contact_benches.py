"""Contact benches built outside the project's models, as a new user would write them.

Two benches, each a small MJCF with every geom at MuJoCo's default contact values, a rig
file, and logged pushes made on the TRUE bench: the same model plus explicit pairs carrying
the true coefficients (drawn at random by the caller), recorded by a tracker with Gaussian
noise (0.5 mm, 0.01 rad per axis by default):

- ``push``: a gantry pusher plate (two slide joints) pushes a 5 cm box across a table at
  an angle to the plate's normal, so the box slides along the plate when the pad-box
  friction is below the tangent of that angle. Three pushes at different angles.
- ``grasp``: two spherical fingertips pinch a bar 3 cm off its centre and lift it; gravity
  twists the bar about the grasp axis, against torsional friction only (condim 4).

``priority=True`` gives the pad (or fingertips) ``priority="1"``, as the demo model and the
Menagerie SO-101 do; otherwise MuJoCo mixes by the maximum.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simgap.evidence.push_log import write_push_log
from simgap.rig import Rig, load_rig

PUSH_XML = """<mujoco model="pusher bench">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="table" type="plane" size="1 1 0.05"/>
    <body name="carriage" pos="0 0 0.03">
      <joint name="gx" type="slide" axis="1 0 0" range="-0.3 0.3" damping="5"/>
      <joint name="gy" type="slide" axis="0 1 0" range="-0.3 0.3" damping="5"/>
      <geom name="pad" type="box" size="0.005 0.05 0.02" mass="0.5"{prio}{padattr}/>
    </body>
    <body name="box" pos="0.0315 0 0.025">
      <freejoint/>
      <geom name="box" type="box" size="0.025 0.025 0.025" mass="0.1"/>
    </body>
  </worldbody>
  <actuator>
    <position joint="gx" kp="2000" kv="60"/>
    <position joint="gy" kp="2000" kv="60"/>
  </actuator>
</mujoco>
"""
GRASP_XML = """<mujoco model="grasp bench">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="table" type="plane" size="1 1 0.05"/>
    <body name="hand" pos="0.045 0 0.012">
      <inertial pos="0 0 0" mass="0.2" diaginertia="1e-4 1e-4 1e-4"/>
      <joint name="lift" type="slide" axis="0 0 1" range="-0.1 0.2" damping="20"/>
      <body name="f1" pos="0 0.016 0">
        <joint name="j1" type="slide" axis="0 1 0" range="-0.02 0.02" damping="2"/>
        <geom name="tip1" type="sphere" size="0.005" mass="0.05"{prio}/>
      </body>
      <body name="f2" pos="0 -0.016 0">
        <joint name="j2" type="slide" axis="0 1 0" range="-0.02 0.02" damping="2"/>
        <geom name="tip2" type="sphere" size="0.005" mass="0.05"{prio}/>
      </body>
    </body>
    <body name="bar" pos="0 0 0.01">
      <freejoint/>
      <geom name="bar" type="box" size="0.06 0.005 0.01" mass="0.08"/>
    </body>
  </worldbody>
  <actuator>
    <position joint="lift" kp="3000" kv="100"/>
    <position joint="j1" kp="1000" kv="5"/>
    <position joint="j2" kp="1000" kv="5"/>
  </actuator>
</mujoco>
"""
RIG = """name = "{name}"
[model]
path = "model.xml"
object_body = "{body}"
object_geom = "{body}"
gripper_geoms = {grippers}
[control]
dt_s = 0.02
{joints}
[contact]
tracker_noise_m = {noise_m}
tracker_noise_rad = {noise_rad}
[evidence]
push_logs = {logs}
"""
PUSH_ANGLES = (0.6, -0.8, 0.45)
"""tan of each push's direction against the plate's normal."""


@dataclass(frozen=True)
class Bench:
    """A written bench: its folder, rig file, loaded rig and the truth it was logged with.

    Attributes:
        truth: ``{(group, field): value}`` of the true pairs (``grip``: gripper-object,
            ``support``: object-table); empty for a healthy bench.
        pairs: the pairs each truth group sets.
    """

    folder: Path
    rig_path: Path
    rig: Rig
    truth: dict[tuple[str, str], float]
    pairs: dict[str, tuple[tuple[str, str], ...]]


def _push_commands(tan: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(0.0, 1.3, 0.02)
    s = np.clip((t - 0.1) / 0.8, 0.0, 1.0)
    s = 0.5 - 0.5 * np.cos(np.pi * s)
    d = 0.05 * s / np.hypot(1.0, tan)
    return t, np.stack([d, d * tan], axis=1)


def _grasp_commands(height: float, over_s: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(0.0, 1.4, 0.02)
    close = np.clip((t - 0.1) / 0.2, 0.0, 1.0) * 0.0155  # 4.5 mm past the bar's faces
    lift = np.clip((t - 0.4) / over_s, 0.0, 1.0) * height
    return t, np.stack([lift, -close, close], axis=1)


def _pairs_xml(
    truth: dict[tuple[str, str], float], pairs: dict[str, tuple[tuple[str, str], ...]]
) -> str:
    """The true bench's pairs: MuJoCo defaults, except the truth's coefficients."""
    out = []
    for group, gp in pairs.items():
        f = [1.0, 1.0, 0.005, 0.0001, 0.0001]
        condim = 3
        if (group, "sliding") in truth:
            f[0] = f[1] = truth[(group, "sliding")]
        if (group, "torsional") in truth:
            f[2] = truth[(group, "torsional")]
            condim = 4
        if not any(k[0] == group for k in truth):
            continue
        for g1, g2 in gp:
            out.append(
                f'<pair geom1="{g1}" geom2="{g2}" condim="{condim}" '
                f'friction="{" ".join(f"{v:.9g}" for v in f)}"/>'
            )
    return "<contact>" + "".join(out) + "</contact>" if out else ""


def _log(
    folder: Path,
    rig: Rig,
    xml_true: str,
    body: str,
    runs: list[tuple[np.ndarray, np.ndarray]],
    start: np.ndarray,
    rng: np.random.Generator,
    noise_m: float,
    noise_rad: float,
) -> None:
    from simgap.sim.model import spec_from_xml
    from simgap.sim.replay import Replayer, ReplayLog

    rep = Replayer.build(spec_from_xml(xml_true), rig.joint_names, object_body=body)
    try:
        for k, (t, cmd) in enumerate(runs):
            res = rep.replay(
                None,
                ReplayLog(t=t, commands=cmd, joints=rig.joint_names, q0=cmd[0], obj_pose0=start),
            )
            assert res.obj_pos is not None and res.obj_quat is not None
            pos = res.obj_pos[0] + rng.normal(0.0, noise_m, res.obj_pos[0].shape)
            quat = np.array([_perturb(q, rng.normal(0.0, noise_rad, 3)) for q in res.obj_quat[0]])
            write_push_log(folder / f"push_{k + 1}.csv", rig, t, cmd, pos, obj_quat=quat)
    finally:
        rep.close()


def _perturb(q: np.ndarray, rotvec: np.ndarray) -> np.ndarray:
    """``q`` turned by a small rotation vector (w, x, y, z)."""
    ang = float(np.linalg.norm(rotvec))
    axis = rotvec / ang if ang > 0 else np.array([1.0, 0.0, 0.0])
    dq = np.concatenate([[np.cos(ang / 2)], np.sin(ang / 2) * axis])
    w1, v1, w2, v2 = dq[0], dq[1:], q[0], q[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def make_bench(
    folder: Path,
    kind: str,
    truth: dict[tuple[str, str], float],
    *,
    priority: bool = False,
    seed: int = 0,
    noise_m: float = 0.0005,
    noise_rad: float = 0.01,
    pad_friction: float | None = None,
    angles: tuple[float, ...] = PUSH_ANGLES,
) -> Bench:
    """Write a bench (``push`` or ``grasp``) whose true pairs carry ``truth``; the model
    the rig points at has every geom at MuJoCo's defaults (``pad_friction`` sets the pad's
    geom friction, to show it inert; ``angles``: tan of each push's direction against the
    plate's normal, 0 for a straight push that cannot show the pad's friction)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    prio = ' priority="1"' if priority else ""
    if kind == "push":
        pad = f' friction="{pad_friction} 0.005 0.0001"' if pad_friction is not None else ""
        xml = PUSH_XML.format(prio=prio, padattr=pad)
        body, grippers, joints = "box", ["pad"], ("gx", "gy")
        pairs = {"grip": (("pad", "box"),), "support": (("box", "table"),)}
        runs = [_push_commands(tan) for tan in angles]
        start = np.array([0.0315, 0.0, 0.025, 1.0, 0.0, 0.0, 0.0])
    elif kind == "grasp":
        xml = GRASP_XML.format(prio=prio)
        body, grippers, joints = "bar", ["tip1", "tip2"], ("lift", "j1", "j2")
        pairs = {"grip": (("tip1", "bar"), ("tip2", "bar")), "support": (("bar", "table"),)}
        runs = [_grasp_commands(0.11, 0.4), _grasp_commands(0.10, 0.6)]
        start = np.array([0.0, 0.0, 0.01, 1.0, 0.0, 0.0, 0.0])
    else:
        raise ValueError(kind)
    (folder / "model.xml").write_text(xml)
    jtxt = "".join(f'[joints.{j}]\nrecorded = "{j}"\nunit = "rad"\n' for j in joints)
    logs = [f"push_{k + 1}.csv" for k in range(len(runs))]
    rig_text = RIG.format(
        name=f"{kind} bench",
        body=body,
        grippers=grippers,
        joints=jtxt,
        noise_m=noise_m,
        noise_rad=noise_rad,
        logs=logs,
    )
    (folder / "rig.toml").write_text(rig_text.replace("'", '"'))
    rig = load_rig(folder / "rig.toml")
    xml_true = xml.replace("</worldbody>", "</worldbody>" + _pairs_xml(truth, pairs))
    _log(folder, rig, xml_true, body, runs, start, rng, noise_m, noise_rad)
    return Bench(folder, folder / "rig.toml", rig, dict(truth), pairs)

"""Scripted SO-101 episodes (numpy, no simulation) with known phases and known envelopes.

Joint commands are piecewise-linear between keyframes (constant-velocity ramps and holds);
the measured joints equal the command plus Gaussian noise; the measured gripper follows its
command except while it holds the cube, when the cube blocks it at ``BLOCK_PCT``. The cube
rides with the end effector (forward kinematics of the demo model, computed here with
MuJoCo directly) while held, and falls to the table when released or dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from simgap.demo import demo_model_path

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
GRIP_LO, GRIP_HI = -0.174533, 1.7453292
OPEN_PCT = 60.0
BLOCK_PCT = 25.0
HOME = np.array([0.0, -1.57, 1.57, 0.66, 0.0])


def grasp_pose(pan: float) -> np.ndarray:
    """Jaws at table height, arm turned by ``pan`` [rad]."""
    return np.array([pan, 0.0, 0.6, 1.0, 0.0])


def lifted_pose(pan: float) -> np.ndarray:
    """About 5 cm above ``grasp_pose(pan)``."""
    return np.array([pan, -0.3, 0.6, 1.0, 0.0])


class _FK:
    def __init__(self) -> None:
        self.m = mujoco.MjModel.from_xml_path(str(demo_model_path()))
        self.d = mujoco.MjData(self.m)
        self.adr = [
            int(self.m.jnt_qposadr[mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_JOINT, j)])
            for j in JOINTS[:5]
        ]
        self.site = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_SITE, "gripperframe")

    def __call__(self, q: np.ndarray) -> np.ndarray:
        out = np.empty((len(q), 3))
        for i, row in enumerate(np.atleast_2d(q)):
            self.d.qpos[:] = self.m.qpos0
            self.d.qpos[self.adr] = row[:5]
            mujoco.mj_kinematics(self.m, self.d)
            out[i] = self.d.site_xpos[self.site]
        return out


FK = _FK()


@dataclass
class Script:
    """Keyframes: (time [s], body pose [rad] (5,), gripper command [pct])."""

    keys: list[tuple[float, np.ndarray, float]]

    def add(
        self, duration: float, pose: np.ndarray | None = None, grip: float | None = None
    ) -> float:
        t0, p0, g0 = self.keys[-1]
        self.keys.append(
            (t0 + duration, p0 if pose is None else pose, g0 if grip is None else grip)
        )
        return t0  # start time of this move

    @property
    def end(self) -> float:
        return self.keys[-1][0]

    def command(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        kt = np.array([k[0] for k in self.keys])
        kp = np.array([k[1] for k in self.keys])
        kg = np.array([k[2] for k in self.keys])
        body = np.stack([np.interp(t, kt, kp[:, j]) for j in range(5)], axis=1)
        return body, np.interp(t, kt, kg)


def _to_recorded(body_rad: np.ndarray, grip_pct: np.ndarray) -> np.ndarray:
    return np.concatenate([np.rad2deg(body_rad), grip_pct[:, None]], axis=1)


def pick_place(
    kind: str = "success",
    *,
    fps: float = 15.0,
    rng: np.random.Generator,
    noise_rad: float = 0.0,
    squeeze_pct: float = 8.0,
    pan_obj: float = 0.0,
    pan_target: float = 0.8,
    time_scale: float = 1.0,
) -> dict[str, np.ndarray]:
    """One pick-and-place episode of a known kind.

    kinds: ``success``, ``closed_on_nothing`` (the cube sits 2 cm beside the jaws),
    ``early_release`` (opens half-way to the target), ``search`` (the cube is far away and
    never reached, the gripper never closes), ``dropped`` (falls mid-carry),
    ``drift`` (placed at the target, then pushed 10 cm away), ``slipped`` (closes on the
    cube, which never rises).
    """
    s = time_scale
    obj0 = FK(grasp_pose(pan_obj))[0]
    if kind == "closed_on_nothing":
        obj0 = obj0 + np.array([0.02, 0.0, 0.0])
    if kind == "search":
        obj0 = FK(grasp_pose(-1.2))[0]
    sc = Script([(0.0, HOME, OPEN_PCT)])
    sc.add(1.0 * s)  # still at home
    sc.add(1.0 * s, lifted_pose(pan_obj))
    if kind == "search":
        for pan in (0.3, -0.3, 0.4, -0.2):
            sc.add(0.8 * s, lifted_pose(pan))
        sc.add(1.0 * s)
        return _render(sc, fps, rng, noise_rad, obj0, None, None, None, kind)
    sc.add(0.8 * s, grasp_pose(pan_obj))
    t_close = sc.add(0.6 * s, grip=BLOCK_PCT - squeeze_pct if kind != "closed_on_nothing" else 0.0)
    sc.add(0.6 * s)  # hold, closed
    hold = kind not in ("closed_on_nothing",)
    if kind == "slipped":
        sc.add(1.0 * s, lifted_pose(pan_obj))
        sc.add(1.0 * s)
        return _render(sc, fps, rng, noise_rad, obj0, t_close, sc.end, None, kind, attached=False)
    t_lift = sc.add(1.0 * s, lifted_pose(pan_obj))
    if kind == "closed_on_nothing":
        sc.add(1.0 * s)
        return _render(sc, fps, rng, noise_rad, obj0, None, None, None, kind)
    mid = 0.5 * (pan_obj + pan_target)
    if kind == "early_release":
        sc.add(1.0 * s, lifted_pose(mid))
        t_rel = sc.add(0.6 * s, grip=OPEN_PCT)
        sc.add(1.5 * s)
        return _render(sc, fps, rng, noise_rad, obj0, t_close, t_rel, None, kind)
    if kind == "dropped":
        sc.add(1.0 * s, lifted_pose(mid))
        t_drop = sc.end
        sc.add(1.0 * s, lifted_pose(pan_target))
        sc.add(1.0 * s)
        return _render(sc, fps, rng, noise_rad, obj0, t_close, t_drop, None, kind)
    sc.add(1.0 * s, lifted_pose(pan_target))
    sc.add(0.8 * s, grasp_pose(pan_target))
    t_rel = sc.add(0.6 * s, grip=OPEN_PCT)
    sc.add(0.8 * s, lifted_pose(pan_target))
    t_drift = sc.add(1.5 * s) if kind == "drift" else None
    if kind == "drift":
        sc.add(1.0 * s)
    assert hold and t_lift > t_close
    return _render(sc, fps, rng, noise_rad, obj0, t_close, t_rel, t_drift, kind)


def _render(
    sc: Script,
    fps: float,
    rng: np.random.Generator,
    noise_rad: float,
    obj0: np.ndarray,
    t_attach: float | None,
    t_detach: float | None,
    t_drift: float | None,
    kind: str,
    attached: bool = True,
) -> dict[str, np.ndarray]:
    t = np.arange(0.0, sc.end + 1e-9, 1.0 / fps)
    body_cmd, grip_cmd = sc.command(t)
    body = body_cmd + rng.normal(0.0, noise_rad, body_cmd.shape) if noise_rad else body_cmd.copy()
    grip = grip_cmd.copy()
    obj = np.tile(obj0, (len(t), 1))
    if t_attach is not None:
        end = t_detach if t_detach is not None else np.inf
        held = (t >= t_attach) & (t < end)
        grip[held] = np.maximum(grip[held], BLOCK_PCT)
        if attached:
            ee = FK(body_cmd)
            i0 = int(np.searchsorted(t, t_attach))
            offset = obj0 - ee[i0]
            obj[held] = ee[held] + offset
            after = t >= end
            if after.any():
                last = obj[held][-1] if held.any() else obj0
                obj[after] = [last[0], last[1], obj0[2]]
    if t_drift is not None:
        frac = np.clip((t - t_drift) / 1.0, 0.0, 1.0)[:, None]
        obj = obj + frac * np.array([0.1, 0.1, 0.0])
    return {
        "action": _to_recorded(body_cmd, grip_cmd),
        "observation.state": _to_recorded(body, grip),
        "observation.object_pos": obj,
    }


RAMP_AMP = np.array([0.6, 0.5, 0.5, 0.4, 0.5])
"""Ramp amplitude per body joint [rad]: the top speed is 0.6 / ramp_s."""


def ramps(
    *,
    fps: float,
    ramp_s: float,
    rng: np.random.Generator,
    noise_rad: float = 0.0,
    hold_s: float = 1.5,
    n_moves: int = 4,
    grip_pct: float = OPEN_PCT,
) -> dict[str, np.ndarray]:
    """Holds and constant-velocity ramps: body joint j moves by ``RAMP_AMP[j]`` over
    ``ramp_s``, back and forth, with ``hold_s`` still between ramps."""
    sc = Script([(0.0, HOME, grip_pct)])
    sc.add(hold_s)
    for k in range(n_moves):
        sc.add(ramp_s, HOME + (RAMP_AMP if k % 2 == 0 else 0.0))
        sc.add(hold_s)
    t = np.arange(0.0, sc.end + 1e-9, 1.0 / fps)
    body_cmd, grip_cmd = sc.command(t)
    body = body_cmd + rng.normal(0.0, noise_rad, body_cmd.shape) if noise_rad else body_cmd.copy()
    return {
        "action": _to_recorded(body_cmd, grip_cmd),
        "observation.state": _to_recorded(body, grip_cmd.copy()),
    }


def manifest_text(
    kind: str,
    successes: list[bool],
    phases: list[str | None] | None = None,
    states: list[tuple[float, float]] | None = None,
    state_of_trial: list[int] | None = None,
) -> str:
    """A protocol manifest (TOML) with one trial per success flag."""
    lines = [
        "[policy]",
        'checkpoint = "model.safetensors"',
        'sha256 = "' + "ab" * 32 + '"',
        "",
        "[environment]",
        f'kind = "{kind}"',
        'rig = "bench-1"' if kind == "real" else 'model = "so101_demo.xml"\ncommit = "abc123"',
        "",
        "[success]",
        'predicate = "cube_in_bin"',
        "threshold = 0.04",
        'judge = "automatic"',
        "",
    ]
    if states is not None:
        rows = ", ".join(f"[{x}, {y}, 0.0]" for x, y in states)
        lines[7:7] = ["[initial_states]", f"states = [{rows}]", ""]
    else:
        lines[7:7] = [
            "[initial_states]",
            'generator = "uniform_square"',
            "seed = 3",
            'hash = "' + "cd" * 32 + '"',
            "",
        ]
    for i, ok in enumerate(successes):
        lines += ["[[trials]]", f"success = {'true' if ok else 'false'}"]
        if state_of_trial is not None:
            lines.append(f"initial_state = {state_of_trial[i]}")
        if phases is not None and phases[i] is not None:
            lines.append(f'phase = "{phases[i]}"')
        lines.append("")
    return "\n".join(lines)


def write_manifest(path: Path, text: str) -> Path:
    """Write manifest text to ``path``."""
    path.write_text(text)
    return path

"""The demo bench's loops: episodes on the twin and in simulation, pushes, poses, chirps.

Every loop is seeded. Joint values leave this module in recorded units (degrees, gripper
percent) in the servo's frame, i.e. with the twin's zero offset in them; commands are in
the same frame (the servo holds its own zero).
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from simgap.demo.script import Planner, Script
from simgap.demo.truth import TRUTH
from simgap.demo.twin import (
    CAMERA,
    JOINTS,
    Readout,
    auto_exposure,
    nominal_model,
    to_recorded,
    twin_model,
)
from simgap.demo.writers import write_csv
from simgap.sim import scene
from simgap.sim.scene import Data, Model, make_renderer, render

NAMES = [f"{j}.pos" for j in JOINTS]
BIN_XY = (0.15, 0.2)
BIN_RADIUS_M = 0.045
START_KEY = 1
REST_KEY = 0
RES = 96
RESET_LEAD_S = 0.3
"""The scene is reset this long before an episode's first tick [s]."""
READ_NOISE_COUNTS = 0.4
"""Standard deviation of the servo position reading before rounding [encoder counts]."""


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one trial (cube_in_bin, judged automatically from the tracker)."""

    success: bool
    phase: str | None
    note: str
    inside: bool


@dataclass
class Episode:
    """One recorded episode: dataset columns and the outcome."""

    frames: dict[str, Any]
    result: EpisodeResult


@dataclass
class Run:
    """A set of episodes, plus (for the bench) the trace, exposure gains and sample frames."""

    episodes: list[Episode] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    gains: dict[str, list[float]] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)


def _png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False, compress_level=1)
    return buf.getvalue()


def _qadr(model: Model) -> np.ndarray:
    return np.array([model.joint(j).qposadr[0] for j in JOINTS])


def _reset(model: Model, data: Data, q_true: np.ndarray, cube: tuple[float, float, float]) -> None:
    scene.reset(model, data)
    qa = _qadr(model)
    data.qpos[qa] = q_true
    data.ctrl[:] = q_true
    if model.na:
        data.act[:] = q_true
    cadr = model.joint("cube_free").qposadr[0]
    x, y, yaw = cube
    data.qpos[cadr : cadr + 7] = [x, y, 0.0125, math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
    scene.forward(model, data)


def _cube(model: Model, data: Data) -> np.ndarray:
    return np.array(data.xpos[model.body("cube").id])


def classify(cube_path: np.ndarray, start: np.ndarray) -> tuple[bool, str | None, str]:
    """cube_in_bin and, on failure, the phase it failed in, from the cube's path (T, 3)."""
    final = cube_path[-1]
    d_bin = float(np.hypot(final[0] - BIN_XY[0], final[1] - BIN_XY[1]))
    if d_bin < BIN_RADIUS_M and final[2] < 0.03:
        return True, None, "cube in bin"
    lifted = float(cube_path[:, 2].max()) > 0.03
    moved = float(np.max(np.hypot(*(cube_path[:, :2] - start[:2]).T)))
    if not lifted:
        if moved < 0.003:
            return False, "approach", "the jaws never reached the cube"
        if moved > 0.02:
            return False, "contact", f"the cube was pushed {moved * 100:.1f} cm, not grasped"
        return False, "grasp", "closed on the cube but did not lift it"
    if d_bin < 0.08:
        return False, "place", f"released {d_bin * 100:.1f} cm from the bin centre"
    return False, "lift_and_carry", "dropped the cube while carrying it"


def _inside_tick_steps(t0: float, t1: float, dt: float) -> int:
    return max(0, int(round((t1 - t0) / dt)))


def run_real(
    states: list[tuple[float, float, float]],
    inside: list[bool],
    ticks: list[dict[str, Any]],
    script: Script,
    seed: int,
) -> Run:
    """The scripted episodes on the twin, paced and delayed by the timing log's ticks."""
    rng = np.random.default_rng([seed, 11])
    model, nom = twin_model(), nominal_model()
    data = scene.new_data(model)
    planner = Planner(nom, script)
    ro = Readout.of(TRUTH)
    cam = TRUTH.camera
    target = cam.exposure_target["session_a"]
    renderer = make_renderer(model, RES, RES)
    qa = _qadr(model)
    pdt = float(model.opt.timestep)
    dt = 1.0 / 15.0
    run = Run(gains={"session_a": []})
    start_cmd = np.array(script.start_q)
    try:
        # the scene before the first reset: the arm at rest, the cube where it was left
        _reset(model, data, ro.target(model.key_qpos[REST_KEY][:6]), (0.25, 0.0, 0.0))
        img, _ = auto_exposure(
            render(renderer, data, CAMERA), target, cam.max_gain, cam.response_gamma
        )
        last_png, last_t = _png(img), float(ticks[0]["t"]) - 1.0
        gtick = 0
        for e, state in enumerate(states):
            ep_ticks = sorted((t for t in ticks if t["episode"] == e), key=lambda t: t["step"])
            cmds, _ = planner.commands(np.array(state[:2]), dt)
            _reset(model, data, ro.target(start_cmd), state)
            cube0 = _cube(model, data)
            cols: dict[str, list[Any]] = {
                "action": [],
                "observation.state": [],
                "observation.object_pos": [],
                "images": [],
            }
            path = []
            for k, tick in enumerate(ep_ticks):
                t = float(tick["t"])
                lat = float(sum(tick["stages"].values()))
                q_read = ro.read(
                    data.qpos[qa] + rng.normal(0.0, READ_NOISE_COUNTS * ro.quantum_rad, len(JOINTS))
                )
                state_rec = to_recorded(q_read)
                obj = _cube(model, data) + rng.normal(0.0, 0.0005, 3)
                if k == 0:  # fault (6): the frame taken before the reset
                    png, img_t = last_png, last_t
                else:
                    img, gain = auto_exposure(
                        render(renderer, data, CAMERA), target, cam.max_gain, cam.response_gamma
                    )
                    run.gains["session_a"].append(round(gain, 4))
                    png, img_t = _png(img), t
                act_rec = to_recorded(cmds[k])
                cols["action"].append(act_rec)
                cols["observation.state"].append(state_rec)
                cols["observation.object_pos"].append(obj)
                cols["images"].append(png)
                run.trace.append(
                    _trace_record(
                        gtick,
                        e,
                        k,
                        t,
                        state_rec,
                        act_rec,
                        png,
                        img_t,
                        float(tick["stages"]["camera"]),
                        cmds[k],
                        q_read,
                        float(ep_ticks[0]["t"]) - RESET_LEAD_S,
                    )
                )
                if k in (0, len(ep_ticks) // 2, len(ep_ticks) - 1) and e < 4:
                    run.samples.append(
                        {
                            "png": png,
                            "episode": e,
                            "frame_index": k,
                            "recording": "session_a",
                            "pose_label": "",
                            "values": state_rec,
                        }
                    )
                nxt = float(ep_ticks[k + 1]["t"]) if k + 1 < len(ep_ticks) else t + max(dt, lat)
                n_delay = _inside_tick_steps(0.0, lat, pdt)
                n_total = max(n_delay + 1, _inside_tick_steps(t, nxt, pdt))
                scene.step(model, data, n_delay)  # fault (1): the command arrives late
                data.ctrl[:] = ro.target(cmds[k])  # fault (5): servo frame is offset
                for _ in range(n_total - n_delay):
                    scene.step(model, data)
                    path.append(_cube(model, data))
                gtick += 1
                last_png, last_t = png, img_t
            # last_png / last_t: the episode's last frame stays in the camera buffer and is
            # what the next episode's first observation gets
            ok, phase, note = classify(np.array(path), cube0)
            run.episodes.append(
                Episode(
                    frames={k: np.array(v) if k != "images" else v for k, v in cols.items()},
                    result=EpisodeResult(ok, phase, note, inside[e]),
                )
            )
    finally:
        renderer.close()
    return run


def _ticks_of(rad: float) -> int:
    return int(round(2048 + rad * 4096 / (2 * math.pi)))


def _trace_record(
    gtick: int,
    episode: int,
    step: int,
    t: float,
    state_rec: np.ndarray,
    act_rec: np.ndarray,
    png: bytes,
    image_t: float,
    camera_s: float,
    cmd_rad: np.ndarray,
    q_read: np.ndarray,
    reset_t: float,
) -> dict[str, Any]:
    """One record of the deployment trace (docs/plumbing.md's format)."""
    obs: dict[str, Any] = {n: round(float(v), 4) for n, v in zip(NAMES, state_rec, strict=True)}
    obs.update(
        image_sha1=hashlib.sha1(png).hexdigest(),
        image_t=round(image_t, 6),
        image_age_s=round(t + camera_s - image_t, 6),
    )
    present = [
        {"motor": j, "register": "Present_Position", "value": _ticks_of(q)}
        for j, q in zip(JOINTS, q_read, strict=True)
    ]
    writes = [
        {"motor": j, "register": "Goal_Position", "value": _ticks_of(c)}
        for j, c in zip(JOINTS, cmd_rad, strict=True)
    ]
    events: list[dict[str, Any]] = []
    rec: dict[str, Any] = {}
    if gtick == 0:  # connect, seed every goal with the present position, then torque on
        rec["meta"] = {
            "robot_type": "so101_follower",
            "use_degrees": True,
            "control_dt_s": 1.0 / 15.0,
            "policy_server": "127.0.0.1:8080",
            "units": {n: ("pct" if n == "gripper.pos" else "deg") for n in NAMES},
        }
        writes = (
            [
                {"motor": p["motor"], "register": "Goal_Position", "value": p["value"]}
                for p in present
            ]
            + [{"motor": j, "register": "Torque_Enable", "value": 1} for j in JOINTS]
            + writes
        )
        events += [
            {"name": "connect", "t": round(reset_t - 0.5, 6)},
            {"name": "torque_enabled", "t": round(reset_t - 0.4, 6)},
        ]
    if step == 0:
        events.append({"name": "reset", "t": round(reset_t, 6)})
    rec.update(
        tick=gtick,
        episode=episode,
        t=round(t, 6),
        observation=obs,
        action={n: round(float(v), 4) for n, v in zip(NAMES, act_rec, strict=True)},
        reads=present,
        writes=writes,
        events=events,
    )
    return rec


def run_sim(states: list[tuple[float, float, float]], inside: list[bool], script: Script) -> Run:
    """The same protocol on the nominal model: no latency, no offset, ideal camera."""
    model = nominal_model()
    data = scene.new_data(model)
    planner = Planner(model, script)
    renderer = make_renderer(model, RES, RES)
    qa = _qadr(model)
    dt = 1.0 / 15.0
    nsub = int(round(dt / model.opt.timestep))
    run = Run()
    try:
        for e, state in enumerate(states):
            cmds, _ = planner.commands(np.array(state[:2]), dt)
            _reset(model, data, np.array(script.start_q), state)
            cube0 = _cube(model, data)
            cols: dict[str, list[Any]] = {
                "action": [],
                "observation.state": [],
                "observation.object_pos": [],
                "images": [],
            }
            path = []
            for k in range(len(cmds)):
                cols["observation.state"].append(to_recorded(data.qpos[qa]))
                cols["observation.object_pos"].append(_cube(model, data))
                cols["images"].append(_png(render(renderer, data, CAMERA)))
                cols["action"].append(to_recorded(cmds[k]))
                data.ctrl[:] = cmds[k]
                for _ in range(nsub):
                    scene.step(model, data)
                    path.append(_cube(model, data))
            ok, phase, note = classify(np.array(path), cube0)
            run.episodes.append(
                Episode(
                    frames={k: np.array(v) if k != "images" else v for k, v in cols.items()},
                    result=EpisodeResult(ok, phase, note, inside[e]),
                )
            )
    finally:
        renderer.close()
    return run


def write_frames(folder: Path, real: Run) -> None:
    """Frames folder: rest and start frames in two recordings with different auto
    exposure, and sample frames of the bench episodes (the stale first frames among them)."""
    model = twin_model()
    data = scene.new_data(model)
    ro = Readout.of(TRUTH)
    cam = TRUTH.camera
    renderer = make_renderer(model, RES, RES)
    rows: list[list[Any]] = []
    samples = list(real.samples)
    try:
        for rec in ("session_a", "session_b"):
            poses = [
                ("rest", model.key_qpos[REST_KEY][:6], (0.25, 0.0, 0.0)),
                ("start", np.array(Script().start_q), (0.25, 0.0, 0.0)),
                ("start", np.array(Script().start_q), (0.22, 0.05, 0.0)),
            ]
            for label, q_cmd, cube in poses:
                _reset(model, data, ro.target(q_cmd), cube)
                img, gain = auto_exposure(
                    render(renderer, data, CAMERA),
                    cam.exposure_target[rec],
                    cam.max_gain,
                    cam.response_gamma,
                )
                real.gains.setdefault(rec + "_posed", []).append(round(gain, 4))
                samples.append(
                    {
                        "png": _png(img),
                        "episode": -1,
                        "frame_index": 0,
                        "recording": rec,
                        "pose_label": label,
                        "values": to_recorded(ro.read(data.qpos[_qadr(model)])),
                    }
                )
    finally:
        renderer.close()
    for i, s in enumerate(samples):
        name = f"{s['recording']}_{i:03d}.png"
        from simgap.outputs import atomic_write_bytes

        atomic_write_bytes(folder / name, s["png"])
        rows.append(
            [
                name,
                s["episode"],
                s["frame_index"],
                s["recording"],
                s["pose_label"],
                *[float(v) for v in s["values"]],
            ]
        )
    write_csv(
        folder / "index.csv",
        ["file", "episode", "frame_index", "recording", "pose_label", *NAMES],
        rows,
    )


def _settle(model: Model, data: Data, seconds: float) -> None:
    scene.step(model, data, int(round(seconds / model.opt.timestep)))


PUSHES: tuple[tuple[tuple[float, float], float], ...] = (((0.25, -0.02), 1.0), ((0.22, 0.04), -1.0))
"""Cube position [m] and side (+1: towards +y) of the logged pushes."""
PUSH_S = 3.0
PUSH_ALONG_M = -0.006
"""Where along its face the pad starts, from the cube's centre line [m]."""
"""Duration of the pad's travel in a logged push [s]."""


def push_logs(seed: int) -> list[tuple[list[str], list[list[float]]]]:
    """Two logged pushes on the twin (30 Hz rows): the wrist is rolled a quarter turn so the
    open gripper's fixed pad faces the cube sideways, and the pad moves 45 degrees off its
    face normal: the cube moves with the pad only when the pad friction exceeds 1, and
    slides along the pad otherwise. (Rolled so, a joint-zero error moves the pad along its
    face, not towards the cube.)"""
    rng = np.random.default_rng([seed, 13])
    model = twin_model()
    planner = Planner(nominal_model())
    data = scene.new_data(model)
    ro = Readout.of(TRUTH)
    qa = _qadr(model)
    out = []
    open_rad, roll = 1.0, math.pi / 2
    seed_q = np.array(Script().start_q[:4])
    for cube_xy, side in PUSHES:
        bearing = math.atan2(cube_xy[1], cube_xy[0] - 0.0388353)
        radial = np.array([math.cos(bearing), math.sin(bearing), 0.0])
        centre = np.array([cube_xy[0], cube_xy[1], 0.018])
        q_guess = planner.ik(centre, seed_q, roll)
        normal = planner.pad_normal(q_guess, roll, open_rad)
        lateral = radial - normal * float(radial @ normal)
        lateral /= np.linalg.norm(lateral)
        start = centre - normal * (0.0125 + 0.002 + 0.003) + lateral * PUSH_ALONG_M
        direction = (normal + side * lateral) / math.sqrt(2.0)
        q0 = np.concatenate([planner.ik(start, q_guess, roll), [roll, open_rad]])
        _reset(model, data, ro.target(q0), (cube_xy[0], cube_xy[1], bearing))
        _settle(model, data, 0.5)
        header = [
            "t",
            *[f"cmd_{j}" for j in JOINTS],
            *[f"q_{j}" for j in JOINTS],
            "obj_x",
            "obj_y",
            "obj_z",
            "obj_qw",
            "obj_qx",
            "obj_qy",
            "obj_qz",
        ]
        rows = []
        cadr = model.joint("cube_free").qposadr[0]
        q_prev = q0[:4]
        for i in range(int((PUSH_S + 0.4) * 30) + 1):
            a = min(1.0, i / (PUSH_S * 30))
            target = start + direction * 0.06 * (0.5 - 0.5 * math.cos(math.pi * a))
            q_prev = planner.ik(target, q_prev, roll)
            cmd = np.concatenate([q_prev, [roll, open_rad]])
            pose = data.qpos[cadr : cadr + 7] + np.concatenate(
                [rng.normal(0, 0.0003, 3), np.zeros(4)]
            )
            rows.append([i / 30, *to_recorded(cmd), *to_recorded(ro.read(data.qpos[qa])), *pose])
            data.ctrl[:] = ro.target(cmd)
            _settle(model, data, 1 / 30)
        out.append((header, rows))
    return out


def static_poses(seed: int) -> tuple[list[str], list[list[float]], np.ndarray]:
    """One static cube seen from 12 arm poses (a fiducial tag, ±0.3 mm): recorded joints
    (with the zero offset) and the cube centre in the modelled camera frame, from the twin's
    true kinematics [m]."""
    rng = np.random.default_rng([seed, 17])
    nom = nominal_model()
    data = scene.new_data(nom)
    ro = Readout.of(TRUTH)
    qa = _qadr(nom)
    cube = np.array([0.26, 0.03, 0.0125])
    start = np.array(Script().start_q)
    rows = []
    # pan, lift, elbow, wrist_flex, wrist_roll: the roll varies too, or a wrist_flex offset
    # would look like a camera-mount rotation
    deltas = [
        (0, 0, 0, 0, 0),
        (0.3, 0, 0, 0, 0.4),
        (-0.3, 0, 0, 0, -0.4),
        (0, 0.2, -0.2, 0, 0.6),
        (0, -0.2, 0.1, 0.25, -0.6),
        (0.2, 0.1, 0, -0.3, 0.3),
        (-0.2, 0, 0.2, 0.3, -0.3),
        (0.1, -0.15, -0.1, -0.2, 0.8),
        (0, 0.1, 0.15, -0.35, -0.8),
        (-0.15, -0.1, -0.15, 0.35, 0.9),
        (0.25, 0.15, 0.1, 0.2, -0.9),
        (-0.25, -0.05, 0.05, -0.25, 1.0),
    ]
    for d in deltas:
        q_true = start.copy()
        q_true[:5] += d
        data.qpos[qa] = q_true
        scene.pose(nom, data, cameras=True)
        pos, rot = scene.camera_pose(nom, data, CAMERA)
        pc = rot.T @ (cube - pos) + rng.normal(0.0, 0.0003, 3)
        rows.append([*[float(v) for v in to_recorded(ro.read(q_true))], *[float(v) for v in pc]])
    return [*NAMES, "obj_cam_x", "obj_cam_y", "obj_cam_z"], rows, cube


CHIRP_SWEEPS_HZ: tuple[tuple[float, float], ...] = ((0.3, 4.0), (0.5, 6.0))
"""One excitation log per sweep: each joint in turn chirps over it [Hz]."""
CHIRP_S = 1.5
"""Duration of one joint's chirp [s]."""


def chirps(seed: int) -> list[tuple[list[str], list[list[float]]]]:
    """Actuator excitation on the twin, logged at 100 Hz [rad]: per log, each joint in turn
    sweeps a chirp (amplitude 0.15 rad, the gripper 0.3) while the others hold the start
    pose; every joint's command, reading and velocity is logged."""
    rng = np.random.default_rng([seed, 19])
    model = twin_model()
    data = scene.new_data(model)
    ro = Readout.of(TRUTH)
    qa = _qadr(model)
    vadr = np.array([model.joint(j).dofadr[0] for j in JOINTS])
    start = np.array(Script().start_q)
    header = [
        "t",
        *[f"cmd_{n}" for n in JOINTS],
        *[f"q_{n}" for n in JOINTS],
        *[f"qd_{n}" for n in JOINTS],
    ]
    out = []
    for f0, f1 in CHIRP_SWEEPS_HZ:
        _reset(model, data, ro.target(start), (0.0, 0.3, 0.0))
        rows = []
        n = int(CHIRP_S * 100)
        for i, j in enumerate(JOINTS):
            amp = 0.3 if j == "gripper" else 0.15
            for k in range(n):
                tj = k / 100
                phase = 2 * math.pi * (f0 * tj + (f1 - f0) * tj * tj / (2 * CHIRP_S))
                cmd = start.copy()
                cmd[i] += amp * math.sin(phase)
                q = ro.read(data.qpos[qa])
                qd = np.array(data.qvel[vadr]) + rng.normal(0, 0.002, len(JOINTS))
                rows.append(
                    [
                        (i * n + k) / 100,
                        *[float(v) for v in cmd],
                        *[float(v) for v in q],
                        *[float(v) for v in qd],
                    ]
                )
                data.ctrl[:] = ro.target(cmd)
                _settle(model, data, 0.01)
        out.append((header, rows))
    return out


def camera_shift_px(resolution: int = 16) -> dict[str, float]:
    """How far the twin's camera moves the image at the start pose, at policy resolution:
    mean displacement of projected table and cube points [px]."""
    nom, twin = nominal_model(), twin_model()
    dn, dt_ = scene.new_data(nom), scene.new_data(twin)
    ro = Readout.of(TRUTH)
    start = np.array(Script().start_q)
    xs, ys = np.meshgrid(np.linspace(0.2, 0.32, 5), np.linspace(-0.05, 0.05, 5))
    pts = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
    out = {}
    for label, q_twin in (("mount_only", start), ("with_zero_offset", ro.target(start))):
        dn.qpos[_qadr(nom)] = start
        dt_.qpos[_qadr(twin)] = q_twin
        for m, d in ((nom, dn), (twin, dt_)):
            scene.pose(m, d, cameras=True)
        a = scene.project(nom, dn, pts, (resolution, resolution), CAMERA)
        b = scene.project(twin, dt_, pts, (resolution, resolution), CAMERA)
        out[f"{label}_px"] = float(np.mean(np.linalg.norm(b - a, axis=1)))
    out["policy_resolution"] = float(resolution)
    return out

"""The demo bench's episodes: the scripted pick-and-place on the twin (paced, delayed and
traced as the timing log says) and in simulation.

Every loop is seeded (as are the pushes, poses and chirps: ``pushes``, ``poses``,
``chirps``). Joint values leave this module in recorded units (degrees, gripper
percent) in the servo's frame, i.e. with the twin's zero offset in them; commands are in
the same frame (the servo holds its own zero).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.demo.episode import (
    READ_NOISE_COUNTS,
    RES,
    RESET_LEAD_S,
    REST_KEY,
    Run,
    cube_position,
    episode_columns,
    finished_episode,
    joint_qpos_adr,
    png_bytes,
    reset_scene,
)
from simgap.demo.script import Planner, Script
from simgap.demo.trace import trace_record
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
from simgap.sim import scene
from simgap.sim.scene import make_renderer, render


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
    qa = joint_qpos_adr(model)
    pdt = float(model.opt.timestep)
    dt = 1.0 / 15.0
    run = Run(gains={"session_a": []})
    start_cmd = np.array(script.start_q)
    try:
        # the scene before the first reset: the arm at rest, the cube where it was left
        reset_scene(model, data, ro.target(model.key_qpos[REST_KEY][:6]), (0.25, 0.0, 0.0))
        img, _ = auto_exposure(
            render(renderer, data, CAMERA), target, cam.max_gain, cam.response_gamma
        )
        last_png, last_t = png_bytes(img), float(ticks[0]["t"]) - 1.0
        gtick = 0
        for e, state in enumerate(states):
            ep_ticks = sorted((t for t in ticks if t["episode"] == e), key=lambda t: t["step"])
            cmds, _ = planner.commands(np.array(state[:2]), dt)
            reset_scene(model, data, ro.target(start_cmd), state)
            cube0 = cube_position(model, data)
            cols = episode_columns()
            path = []
            for k, tick in enumerate(ep_ticks):
                t = float(tick["t"])
                lat = float(sum(tick["stages"].values()))
                q_read = ro.read(
                    data.qpos[qa] + rng.normal(0.0, READ_NOISE_COUNTS * ro.quantum_rad, len(JOINTS))
                )
                state_rec = to_recorded(q_read)
                obj = cube_position(model, data) + rng.normal(0.0, 0.0005, 3)
                if k == 0:  # fault (6): the frame taken before the reset
                    png, img_t = last_png, last_t
                else:
                    img, gain = auto_exposure(
                        render(renderer, data, CAMERA), target, cam.max_gain, cam.response_gamma
                    )
                    run.gains["session_a"].append(round(gain, 4))
                    png, img_t = png_bytes(img), t
                act_rec = to_recorded(cmds[k])
                cols["action"].append(act_rec)
                cols["observation.state"].append(state_rec)
                cols["observation.object_pos"].append(obj)
                cols["images"].append(png)
                run.trace.append(
                    trace_record(
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
                    path.append(cube_position(model, data))
                gtick += 1
                last_png, last_t = png, img_t
            # last_png / last_t: the episode's last frame stays in the camera buffer and is
            # what the next episode's first observation gets
            run.episodes.append(finished_episode(cols, path, cube0, inside[e]))
    finally:
        renderer.close()
    return run


def run_sim(states: list[tuple[float, float, float]], inside: list[bool], script: Script) -> Run:
    """The same protocol on the nominal model: no latency, no offset, ideal camera."""
    model = nominal_model()
    data = scene.new_data(model)
    planner = Planner(model, script)
    renderer = make_renderer(model, RES, RES)
    qa = joint_qpos_adr(model)
    dt = 1.0 / 15.0
    nsub = int(round(dt / model.opt.timestep))
    run = Run()
    try:
        for e, state in enumerate(states):
            cmds, _ = planner.commands(np.array(state[:2]), dt)
            reset_scene(model, data, np.array(script.start_q), state)
            cube0 = cube_position(model, data)
            cols = episode_columns()
            path = []
            for k in range(len(cmds)):
                cols["observation.state"].append(to_recorded(data.qpos[qa]))
                cols["observation.object_pos"].append(cube_position(model, data))
                cols["images"].append(png_bytes(render(renderer, data, CAMERA)))
                cols["action"].append(to_recorded(cmds[k]))
                data.ctrl[:] = cmds[k]
                for _ in range(nsub):
                    scene.step(model, data)
                    path.append(cube_position(model, data))
            run.episodes.append(finished_episode(cols, path, cube0, inside[e]))
    finally:
        renderer.close()
    return run

"""The fake arm's ``get_observation`` with a 64x64 wrist camera, the old render path beside
the new one in one run (issue 39).

Run: ``PYTHONPATH=src MUJOCO_GL=egl python benchmarks/fake_arm_camera.py`` (or
``MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa``; ``--model`` defaults to the Menagerie SO-101
in ../shared/data/so101/scene_box.xml). Prints JSON:

- ``virtual_clock``: ``get_observation`` on the virtual clock, a new capture instant every
  call, so every call renders on the caller's thread. The old path (the model's own
  visual settings: 640x480 offscreen buffer, 4x multisampling, a 4096x4096 shadow map, the
  reflective floor, the STL meshes as they are, ``mj_forward`` per frame) and the new one
  (``CameraRenderer``) are called alternately, so machine load falls on both alike.
- ``real_clock``: the new path on the real clock for ``--seconds`` of a loop at ``--fps``:
  the camera renders on its own thread; ``get_observation`` takes the latest frame.
- ``no_camera``: ``get_observation`` without a camera (the floor).

Times are wall-clock medians and 90th percentiles [ms]; on a shared machine they are noisy,
which is why the old and new paths are measured interleaved and reported as a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import types
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simgap.fakearm import FakeCameraConfig, FakeSO101, FakeSO101Config

MENAGERIE = Path(__file__).resolve().parents[2] / "shared" / "data" / "so101" / "scene_box.xml"


def _old_render(sim: Any) -> np.ndarray:
    """ArmSim.render before issue 39: a Renderer on the physics model as modelled."""
    if getattr(sim, "_old_renderer", None) is None:
        sim._old_renderer = mujoco.Renderer(sim.model, sim.camera.height, sim.camera.width)
    mujoco.mj_forward(sim.model, sim.data)
    sim._old_renderer.update_scene(sim.data, camera=sim.camera.name)
    return np.asarray(sim._old_renderer.render(), dtype=np.uint8).copy()


def _robot(model: Path, size: int, fps: float, realtime: bool, camera: bool) -> FakeSO101:
    cams = {"wrist": FakeCameraConfig(fps=fps, height=size, width=size)} if camera else {}
    r = FakeSO101(
        FakeSO101Config(
            model_path=model,
            keyframe=None,
            object_body="box",
            write_goal_before_torque=True,
            realtime=realtime,
            cameras=cams,
        )
    )
    return r


def _step(r: FakeSO101, k: int, dt: float) -> float:
    t = time.perf_counter()
    r.get_observation()
    spent = time.perf_counter() - t
    r.send_action(
        {
            "shoulder_pan.pos": 15.0 * np.sin(k / 9),
            "wrist_flex.pos": 20.0 * np.sin(k / 7),
            "wrist_roll.pos": 30.0 * np.sin(k / 5),
        }
    )
    r.clock.sleep(dt)
    return spent


def _ms(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs) * 1e3
    return {
        "median_ms": round(float(np.median(a)), 2),
        "p90_ms": round(float(np.percentile(a, 90)), 2),
        "n": len(xs),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, default=MENAGERIE)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--n-old", type=int, default=15, help="old-path frames (~0.1-0.5 s each)")
    ap.add_argument("--n-new", type=int, default=150)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    dt = 1.0 / args.fps

    old, new = (_robot(args.model, args.size, args.fps, False, True) for _ in range(2))
    t = time.perf_counter()
    new.connect()
    connect_new = time.perf_counter() - t
    old.connect()
    old._sim.render = types.MethodType(_old_render, old._sim)
    old.clock.sleep(dt)
    t = time.perf_counter()
    old.get_observation()  # a fresh capture instant: the old path's Renderer and first frame
    first_old = time.perf_counter() - t
    old.clock.sleep(dt)
    t_old: list[float] = []
    t_new: list[float] = []
    for k in range(max(args.n_old, args.n_new)):  # interleaved: load falls on both alike
        if k < args.n_old:
            t_old.append(_step(old, k, dt))
        t_new.append(_step(new, k, dt))
    faces = int(new._sim._renderer.model.mesh_facenum.sum()) if new._sim.model.nmesh else 0
    old._sim._old_renderer.close()
    old.disconnect()
    new.disconnect()

    rt = _robot(args.model, args.size, args.fps, True, True)
    rt.connect()
    t_rt: list[float] = []
    t0 = time.perf_counter()
    seen = set()
    k = 0
    while time.perf_counter() - t0 < args.seconds:
        start = time.perf_counter()
        t_rt.append(_step(rt, k, 0.0))
        seen.add(rt.camera_frame()[0])
        rt.clock.sleep(dt - (time.perf_counter() - start))
        k += 1
    assert rt.camera is not None
    renders = rt.camera.n_renders
    render_s = list(rt.camera.render_s)
    warned = rt.camera.warned
    rt.disconnect()

    bare = _robot(args.model, args.size, args.fps, False, False)
    bare.connect()
    t_bare = [_step(bare, k, dt) for k in range(200)]
    bare.disconnect()

    o, n = _ms(t_old), _ms(t_new)
    print(
        json.dumps(
            {
                "model": str(args.model),
                "image": [args.size, args.size, 3],
                "fps": args.fps,
                "gl": os.environ.get("MUJOCO_GL", ""),
                "cpus": os.cpu_count(),
                "load_average_1min": round(os.getloadavg()[0], 2),
                "virtual_clock": {
                    "old_path": {**o, "first_frame_s": round(first_old, 3)},
                    "new_path": {
                        **n,
                        "connect_s": round(connect_new, 3),
                        "mesh_faces_drawn": faces,
                    },
                    "old_over_new_median": round(o["median_ms"] / n["median_ms"], 1),
                },
                "real_clock": {
                    "get_observation": _ms(t_rt),
                    "loop_s": args.seconds,
                    "frames_rendered_per_s": round(renders / args.seconds, 1),
                    "distinct_frames_seen_per_s": round(len(seen) / args.seconds, 1),
                    "render_median_ms": round(float(np.median(render_s)) * 1e3, 2),
                    "rate_warning": warned,
                },
                "no_camera": _ms(t_bare),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

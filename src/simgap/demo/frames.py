"""The demo bench's camera evidence: the frames folder (two recordings under different auto
exposure, and sample frames of the episodes) and how far the twin's camera moves the image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simgap.demo.episode import NAMES, RES, REST_KEY, Run, joint_qpos_adr, png_bytes, reset_scene
from simgap.demo.script import Script
from simgap.demo.truth import TRUTH
from simgap.demo.twin import CAMERA, Readout, auto_exposure, nominal_model, to_recorded, twin_model
from simgap.demo.writers import write_csv
from simgap.sim import scene
from simgap.sim.scene import make_renderer, render


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
                reset_scene(model, data, ro.target(q_cmd), cube)
                img, gain = auto_exposure(
                    render(renderer, data, CAMERA),
                    cam.exposure_target[rec],
                    cam.max_gain,
                    cam.response_gamma,
                )
                real.gains.setdefault(rec + "_posed", []).append(round(gain, 4))
                samples.append(
                    {
                        "png": png_bytes(img),
                        "episode": -1,
                        "frame_index": 0,
                        "recording": rec,
                        "pose_label": label,
                        "values": to_recorded(ro.read(data.qpos[joint_qpos_adr(model)])),
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
        dn.qpos[joint_qpos_adr(nom)] = start
        dt_.qpos[joint_qpos_adr(twin)] = q_twin
        for m, d in ((nom, dn), (twin, dt_)):
            scene.pose(m, d, cameras=True)
        a = scene.project(nom, dn, pts, (resolution, resolution), CAMERA)
        b = scene.project(twin, dt_, pts, (resolution, resolution), CAMERA)
        out[f"{label}_px"] = float(np.mean(np.linalg.norm(b - a, axis=1)))
    out["policy_resolution"] = float(resolution)
    return out

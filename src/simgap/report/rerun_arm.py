"""The model's layers of a Rerun recording: the arm in 3D at the real and the simulated poses,
and the rig's camera rendered at the measured angles.

- ``world``: the MJCF's frame (z up, metres). Under ``world/<layer>`` (layers ``real``,
  ``sim/nominal``, ``sim/identified``) the arm's visual geoms, logged once (static) in their
  own frames: every box, capsule, cylinder, sphere and ellipsoid as one batch of Rerun's
  primitive per kind (``world/<layer>/box``, ...), each mesh as a ``Mesh3D``
  (``world/<layer>/mesh/<geom>``, simplified to 2 mm cells); per frame, each geom's world
  pose from forward kinematics of that layer's joints, as the batch's ``InstancePoses3D``
  (an entity per body and geom, each chunk carrying its own headers, made the demo's file
  11.7 MB against 9.4 MB with these batches).
  ``real`` keeps the model's colours; each simulated layer is one colour, half transparent.
- ``sim/camera/<cam>``: the camera's image rendered from the MJCF at the measured joint
  angles, at the frames the recorded camera has (every frame when none was recorded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

SIM_COLORS = {"nominal": (70, 130, 255, 128), "identified": (255, 150, 40, 128)}
"""RGBA of each simulated layer's arm."""


def _part(rr: Any, name: str) -> str:
    return str(rr.escape_entity_path_part(name))


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    """MuJoCo's (w, x, y, z) as Rerun's (x, y, z, w), along the last axis."""
    return np.roll(np.asarray(wxyz, dtype=float), -1, axis=-1)


def _groups(shapes: Any) -> dict[str, list[int]]:
    """Entity name (under ``world/<layer>/``) -> indices of the shapes it draws: one batch
    per primitive kind, one entity per mesh geom."""
    out: dict[str, list[int]] = {}
    for i, s in enumerate(shapes.shapes):
        key = s.kind if s.kind != "mesh" else f"mesh/{s.name}"
        out.setdefault(key, []).append(i)
    return out


def _batch(rr: Any, shapes: Sequence[Any], colors: Sequence[tuple[int, ...]]) -> Any:
    """Shapes of one kind as one archetype, each in its geom's frame (the instance poses
    place them)."""
    solid = rr.components.FillMode.Solid
    size = np.array([s.size for s in shapes], dtype=float)
    kind = shapes[0].kind
    if kind == "box":
        return rr.Boxes3D(half_sizes=size, colors=colors, fill_mode=solid)
    if kind == "capsule":  # Rerun's runs from 0 to length along z; MuJoCo's is centred
        base = np.zeros((len(shapes), 3))
        base[:, 2] = -size[:, 1]
        return rr.Capsules3D(
            lengths=2 * size[:, 1],
            radii=size[:, 0],
            translations=base,
            colors=colors,
            fill_mode=solid,
        )
    if kind == "cylinder":
        return rr.Cylinders3D(
            lengths=2 * size[:, 1], radii=size[:, 0], colors=colors, fill_mode=solid
        )
    if kind in ("sphere", "ellipsoid"):
        half = size[:, :1].repeat(3, 1) if kind == "sphere" else size
        return rr.Ellipsoids3D(half_sizes=half, colors=colors, fill_mode=solid)
    return rr.Mesh3D(
        vertex_positions=shapes[0].vertices,
        triangle_indices=shapes[0].triangles,
        albedo_factor=colors[0],
    )


def log_arm_shapes(rr: Any, rec: Any, shapes: Any, layers: Sequence[str]) -> None:
    """Each layer's arm, static, in its geoms' frames: ``world/<layer>/<kind>`` (one batch of
    every box, capsule, cylinder, sphere or ellipsoid) and ``world/<layer>/mesh/<geom>``."""
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    for layer in layers:
        tint = None if layer == "real" else SIM_COLORS.get(layer.split("/")[-1])
        for key, idx in _groups(shapes).items():
            mine = [shapes.shapes[i] for i in idx]
            colors = [tint or tuple(int(round(255 * c)) for c in s.rgba) for s in mine]
            path = "/".join(_part(rr, p) for p in key.split("/", 1))
            rec.log(f"world/{layer}/{path}", _batch(rr, mine, colors), static=True)


def log_arm_poses(
    rr: Any,
    rec: Any,
    index: Sequence[Any],
    layer: str,
    shapes: Any,
    pos: np.ndarray,
    quat: np.ndarray,
) -> None:
    """One layer's geom poses over the episode, ``pos`` (T, G, 3) [m] and ``quat``
    (T, G, 4) (w, x, y, z), at the frames of ``index``: the instance poses of each batch."""
    T = pos.shape[0]
    for key, idx in _groups(shapes).items():
        path = "/".join(_part(rr, p) for p in key.split("/", 1))
        cols = rr.InstancePoses3D.columns(
            translations=pos[:, idx].reshape(-1, 3), quaternions=_xyzw(quat[:, idx]).reshape(-1, 4)
        ).partition(np.full(T, len(idx)))
        rec.send_columns(f"world/{layer}/{path}", indexes=index, columns=cols)


def log_rendered(
    rr: Any,
    rec: Any,
    path: str,
    images: np.ndarray,
    rows: np.ndarray,
    frame_index: np.ndarray,
    t_s: np.ndarray,
    timelines: tuple[str, str],
) -> None:
    """Rendered images (N, H, W, 3) uint8 at the episode's rows ``rows`` (N,), as PNG:
    lossless, and a flat-shaded render packs into 0.6 kB at 96 x 96 against 27 kB raw."""
    import io

    from PIL import Image

    for img, k in zip(images, rows, strict=True):
        rec.set_time(timelines[0], sequence=int(frame_index[k]))
        rec.set_time(timelines[1], duration=float(t_s[k]))
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG")
        rec.log(path, rr.EncodedImage(contents=buf.getvalue(), media_type="image/png"))


def arm_layers(q: Mapping[str, np.ndarray], poser: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per layer (``real``, ``sim/<name>``), the drawn geoms' world poses (``ArmPoser.poses``)
    at that layer's joints (T, J) [rad]."""
    return {layer: poser.poses(qq) for layer, qq in q.items()}


RENDER_HZ = 15.0
"""The rendered camera's rate at most [frames per recorded second]: every frame of a 15 fps
recording, every second frame of a 30 fps one. Measured on 2 shared cores with OSMesa, a
96 x 96 frame costs 0.7 ms for the demo's box-and-capsule arm and about 15 ms for the
Menagerie SO-101's simplified meshes."""


def render_rows(frame_t_s: np.ndarray, image_rows: np.ndarray | None) -> np.ndarray:
    """The rows of an episode to render: those with a recorded image (else every row),
    thinned to at most ``RENDER_HZ`` a second."""
    rows = np.arange(frame_t_s.size) if image_rows is None else np.asarray(image_rows, int)
    if rows.size < 2:
        return rows
    dt = float(np.median(np.diff(frame_t_s[rows])))
    stride = max(1, int(np.ceil(RENDER_HZ**-1 / dt - 1e-9))) if dt > 0 else 1
    return rows[::stride]


def with_model_layers(rig: Any, layers: Sequence[Any], skipped: list[str]) -> tuple[list[Any], Any]:
    """``layers`` (``EpisodeLayers``) with the arm's poses and the rendered camera added,
    and the arm's shapes (``ArmShapes``); what cannot be made (no offscreen GL) is left out
    and said in ``skipped``."""
    from dataclasses import replace

    from simgap.errors import SimgapError
    from simgap.sim.arm_pose import ArmPoser
    from simgap.sim.camera_replay import render_at_angles

    poser = ArmPoser(rig.model_path, rig.joint_names)
    out = [
        replace(
            lay,
            arm=arm_layers(
                {"real": lay.q_rad, **{f"sim/{k}": v for k, v in lay.sim.items()}}, poser
            ),
        )
        for lay in layers
    ]
    if rig.camera is None:
        return out, poser.shapes
    rows = []
    for lay in out:
        img_rows = (
            None if lay.image_frames is None else np.searchsorted(lay.frame_index, lay.image_frames)
        )
        rows.append(render_rows(lay.t_s, img_rows))
    size = next(
        (lay.images.shape[1:3] for lay in out if lay.images is not None and len(lay.images)),
        tuple(rig.camera.render_resolution),
    )
    q = np.concatenate([lay.q_rad[r] for lay, r in zip(out, rows, strict=True)])
    try:
        images = render_at_angles(
            rig.model_path, rig.camera.name, rig.joint_names, q, int(size[0]), int(size[1])
        )
    except SimgapError as e:  # no GL context here: the rest of the recording stands
        skipped.append(f"sim/camera: {e}")
        return out, poser.shapes
    cut = np.cumsum([r.size for r in rows])[:-1]
    return [
        replace(lay, rendered=im, rendered_rows=r)
        for lay, im, r in zip(out, np.split(images, cut), rows, strict=True)
    ], poser.shapes

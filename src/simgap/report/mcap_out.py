"""The diagnosis as an MCAP file for Foxglove: the layers of the Rerun recording on Foxglove's
well-known schemas, JSON-encoded (``mcap`` package; docs/rerun.md).

One clock for the whole file: the episodes laid end to end, ``EPISODE_GAP_S`` apart (episode
``e`` starts at ``starts[e]`` seconds, its frames at their ``timestamp`` after that); each
message's log time, publish time and ``timestamp`` field are that time. Channels:

- ``/action``, ``/observation.state`` (``simgap.JointVector``): the recorded vectors in the
  dataset's units, named as the dataset names them, with ``episode`` and ``frame_index``;
- ``/real/observation.state``, ``/sim/nominal/observation.state``,
  ``/sim/identified/observation.state`` (``simgap.JointVector``): measured and replayed [rad];
- ``/gap`` (``simgap.Gap``): per joint, measured minus each replay and the noise floor [rad];
- ``/observation.images.<cam>``, ``/sim/camera/<cam>`` (``foxglove.CompressedImage``, PNG):
  the recorded frames and the camera rendered at the measured angles;
- ``/tf`` (``foxglove.FrameTransforms``): per frame, each geom's world pose, frame
  ``<layer>/<geom>`` under ``world``, for the layers ``real``, ``sim/nominal``,
  ``sim/identified``;
- ``/arm`` (``foxglove.SceneUpdate``): once, at the file's start, every geom as a primitive
  locked to its frame (capsules as a cylinder and two spheres, meshes as triangle lists);
- ``/latency`` (``simgap.JointVector``, ``total_s``, ``budget_s``): each tick's total from the
  timing log and the budget [s], where a tick is a frame (``rerun_latency``);
- ``/findings`` (``foxglove.Log``): each finding at the moments ``rerun_findings`` and
  ``rerun_latency`` place it.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from simgap.errors import MissingExtraError
from simgap.report.mcap_schemas import SCHEMAS
from simgap.rig import Rig

EPISODE_GAP_S = 1.0
"""Seconds between one episode's last frame and the next one's first on the file's clock."""
LOG_LEVELS = {"DEBUG": 1, "INFO": 2, "WARN": 3}
"""foxglove.Log's level of each text-log level the Rerun recording uses."""


@dataclass(frozen=True)
class WrittenMcap:
    """What ``write_mcap`` wrote: the file, its episodes and the second each starts at on
    the file's clock, and each layer left out with why."""

    path: Path
    episodes: tuple[int, ...]
    starts_s: tuple[float, ...]
    skipped: tuple[str, ...] = ()


def _mcap_writer() -> Any:
    try:
        from mcap.writer import Writer
    except ImportError as e:
        raise MissingExtraError("mcap", "mcap", "Writing an MCAP file") from e
    return Writer


def _compression() -> Any:
    """zstd when zstandard is installed (the mcap extra), else lz4, else none."""
    from mcap.writer import CompressionType

    for module, kind in (("zstandard", CompressionType.ZSTD), ("lz4", CompressionType.LZ4)):
        try:
            __import__(module)
        except ImportError:
            continue
        return kind
    return CompressionType.NONE


def require_mcap() -> None:
    """Raise MissingExtraError now when the mcap package is absent (before a long run)."""
    _mcap_writer()


def _time(t_s: float) -> dict[str, int]:
    ns = int(round(t_s * 1e9))
    return {"sec": ns // 1_000_000_000, "nsec": ns % 1_000_000_000}


def _png(img: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pose(pos: Sequence[float], wxyz: Sequence[float]) -> dict[str, Any]:
    return {
        "position": dict(zip("xyz", map(float, pos), strict=True)),
        "orientation": dict(zip("xyzw", map(float, [*wxyz[1:], wxyz[0]]), strict=True)),
    }


def _color(rgba: Sequence[float]) -> dict[str, float]:
    return dict(zip("rgba", map(float, rgba), strict=True))


def _primitives(s: Any, rgba: Sequence[float]) -> dict[str, list[dict[str, Any]]]:
    """One geom as SceneUpdate primitives in its own frame."""
    still, c = _pose((0, 0, 0), (1, 0, 0, 0)), _color(rgba)
    r, h = float(s.size[0]), float(s.size[1])
    if s.kind == "box":
        return {
            "cubes": [
                {
                    "pose": still,
                    "color": c,
                    "size": dict(zip("xyz", map(float, 2 * s.size), strict=True)),
                }
            ]
        }
    if s.kind in ("sphere", "ellipsoid"):
        d = [2 * r] * 3 if s.kind == "sphere" else list(map(float, 2 * s.size))
        return {"spheres": [{"pose": still, "color": c, "size": dict(zip("xyz", d, strict=True))}]}
    if s.kind in ("capsule", "cylinder"):
        cyl = [
            {
                "pose": still,
                "color": c,
                "size": {"x": 2 * r, "y": 2 * r, "z": 2 * h},
                "bottom_scale": 1.0,
                "top_scale": 1.0,
            }
        ]
        caps = [
            {
                "pose": _pose((0, 0, z), (1, 0, 0, 0)),
                "color": c,
                "size": {"x": 2 * r, "y": 2 * r, "z": 2 * r},
            }
            for z in (-h, h)
        ]
        return {"cylinders": cyl, **({"spheres": caps} if s.kind == "capsule" else {})}
    return {
        "triangles": [
            {
                "pose": still,
                "color": c,
                "points": [dict(zip("xyz", map(float, v), strict=True)) for v in s.vertices],
                "indices": [int(i) for i in s.triangles.ravel()],
            }
        ]
    }


def write_mcap(
    path: str | Path,
    rig: Rig,
    ds: Any,
    diagnosis: Mapping[str, Any],
    episodes: Sequence[int] | None = None,
) -> WrittenMcap:
    """Write the diagnosis's MCAP file to ``path`` (see the module docstring).

    Raises:
        MissingExtraError: the mcap package is not installed.
        InputError: no episode to write.
    """
    from simgap.errors import InputError
    from simgap.outputs import atomic_write_bytes
    from simgap.report.rerun_arm import SIM_COLORS, with_model_layers
    from simgap.report.rerun_findings import episode_logs, finding_marks
    from simgap.report.rerun_latency import with_latency
    from simgap.report.rerun_layers import episode_layers, finding_dicts

    writer_cls = _mcap_writer()
    layers = episode_layers(rig, ds, diagnosis, episodes)
    if not layers:
        raise InputError(
            file=getattr(ds, "root", None),
            field="episodes",
            expected="at least one episode to write",
            got="none",
        )
    skipped: list[str] = []
    layers, shapes = with_model_layers(rig, layers, skipped)
    cam = (
        None
        if rig.camera is None
        else quote(
            (rig.camera.recorded or rig.camera.name).removeprefix("observation.images."), safe="_-."
        )
    )
    findings = finding_dicts(diagnosis)
    layers, late = with_latency(rig, layers, findings)
    marks = finding_marks(findings) + late
    buf = io.BytesIO()
    w = writer_cls(buf, compression=_compression())
    w.start(profile="", library="simgap")
    schema_ids = {
        name: w.register_schema(name=name, encoding="jsonschema", data=json.dumps(s).encode())
        for name, s in SCHEMAS.items()
    }
    channels: dict[str, int] = {}

    def put(topic: str, schema: str, t_s: float, msg: Mapping[str, Any]) -> None:
        if topic not in channels:
            channels[topic] = w.register_channel(
                topic=topic, message_encoding="json", schema_id=schema_ids[schema]
            )
        ns = int(round(t_s * 1e9))
        w.add_message(
            channel_id=channels[topic],
            log_time=ns,
            publish_time=ns,
            data=json.dumps(msg, separators=(",", ":")).encode(),
        )

    if shapes is not None:
        ents = []
        for layer in ("real", *(f"sim/{k}" for k in layers[0].sim)):
            tint = SIM_COLORS.get(layer.split("/")[-1]) if layer != "real" else None
            for s in shapes.shapes:
                rgba = s.rgba if tint is None else [c / 255 for c in tint]
                ents.append(
                    {
                        "timestamp": _time(0.0),
                        "frame_id": f"{layer}/{s.name}",
                        "id": f"{layer}/{s.name}",
                        "lifetime": _time(0.0),
                        "frame_locked": True,
                        **_primitives(s, rgba),
                    }
                )
        put("/arm", "foxglove.SceneUpdate", 0.0, {"deletions": [], "entities": ents})
    starts, start = [], 0.0
    for lay in layers:
        starts.append(start)
        clock = start + lay.t_s
        names = {"action": lay.action_names, "observation.state": lay.state_names}
        vectors = {
            "action": lay.action,
            "observation.state": lay.state,
            "real/observation.state": lay.q_rad,
            **{f"sim/{k}/observation.state": v for k, v in lay.sim.items()},
        }
        image_rows = (
            {}
            if lay.image_frames is None
            else {
                int(np.searchsorted(lay.frame_index, f)): i for i, f in enumerate(lay.image_frames)
            }
        )
        rendered = (
            {}
            if lay.rendered_rows is None
            else {int(r): i for i, r in enumerate(lay.rendered_rows)}
        )
        logs: dict[int, list[tuple[str, str, str]]] = {}
        for row, text, lvl, branch in episode_logs(lay.episode, lay.t_s, lay.t0_s, findings, marks):
            logs.setdefault(row, []).append((text, lvl, branch))
        for k in range(lay.frame_index.size):
            t, stamp = float(clock[k]), _time(float(clock[k]))
            head = {
                "episode": lay.episode,
                "frame_index": int(lay.frame_index[k]),
                "timestamp": float(lay.t_s[k]),
            }
            for topic, v in vectors.items():
                put(
                    f"/{topic}",
                    "simgap.JointVector",
                    t,
                    {
                        **head,
                        "name": list(names.get(topic, lay.joints)),
                        "position": [float(x) for x in v[k]],
                    },
                )
            if lay.tick_total_s is not None:
                put(
                    "/latency",
                    "simgap.JointVector",
                    t,
                    {
                        **head,
                        "name": ["total_s", "budget_s"],
                        "position": [float(lay.tick_total_s[k]), float(lay.budget_s or 0.0)],
                    },
                )
            put(
                "/gap",
                "simgap.Gap",
                t,
                {
                    **head,
                    "joint": list(lay.joints),
                    **{n: [float(x) for x in lay.q_rad[k] - q[k]] for n, q in lay.sim.items()},
                    "floor": [float(x) for x in lay.floor_rad],
                },
            )
            if k in image_rows and lay.images is not None and cam:
                put(
                    f"/observation.images.{cam}",
                    "foxglove.CompressedImage",
                    t,
                    {
                        "timestamp": stamp,
                        "frame_id": cam,
                        "format": "png",
                        "data": _png(lay.images[image_rows[k]]),
                    },
                )
            if k in rendered and lay.rendered is not None and cam:
                put(
                    f"/sim/camera/{cam}",
                    "foxglove.CompressedImage",
                    t,
                    {
                        "timestamp": stamp,
                        "frame_id": cam,
                        "format": "png",
                        "data": _png(lay.rendered[rendered[k]]),
                    },
                )
            if shapes is not None and lay.arm:
                put(
                    "/tf",
                    "foxglove.FrameTransforms",
                    t,
                    {
                        "transforms": [
                            {
                                "timestamp": stamp,
                                "parent_frame_id": "world",
                                "child_frame_id": f"{layer}/{s.name}",
                                "translation": _pose(pos[k, g], quat[k, g])["position"],
                                "rotation": _pose(pos[k, g], quat[k, g])["orientation"],
                            }
                            for layer, (pos, quat) in lay.arm.items()
                            for g, s in enumerate(shapes.shapes)
                        ]
                    },
                )
            for text, lvl, branch in logs.get(k, []):
                put(
                    "/findings",
                    "foxglove.Log",
                    t,
                    {
                        "timestamp": stamp,
                        "level": LOG_LEVELS[lvl],
                        "message": text,
                        "name": f"simgap/{branch}",
                        "file": "",
                        "line": 0,
                    },
                )
        start = float(clock[-1]) + EPISODE_GAP_S
    w.finish()
    atomic_write_bytes(Path(path), buf.getvalue())
    return WrittenMcap(
        path=Path(path),
        episodes=tuple(lay.episode for lay in layers),
        starts_s=tuple(starts),
        skipped=tuple(skipped),
    )

"""The JSON Schemas of the MCAP file's channels (``simgap.report.mcap_out``).

Foxglove knows a message by its schema name: ``foxglove.Log``, ``foxglove.CompressedImage``,
``foxglove.FrameTransforms`` and ``foxglove.SceneUpdate`` are its well-known schemas, here in
their JSON encoding (times as ``{sec, nsec}``, bytes as base64, enums as integers), with the
fields simgap writes; ``simgap.JointVector`` and ``simgap.Gap`` are simgap's own. Written from
Foxglove's published message definitions; the tests parse every message into the
``foxglove-schemas-protobuf`` classes to hold the field names and types to them.
"""

from __future__ import annotations

from typing import Any

_NUM: dict[str, Any] = {"type": "number"}
_TIME: dict[str, Any] = {
    "type": "object",
    "title": "time",
    "properties": {
        "sec": {"type": "integer", "minimum": 0},
        "nsec": {"type": "integer", "minimum": 0},
    },
    "required": ["sec", "nsec"],
}
_VEC3: dict[str, Any] = {"type": "object", "properties": {k: _NUM for k in "xyz"}}
_QUAT: dict[str, Any] = {"type": "object", "properties": {k: _NUM for k in "xyzw"}}
_POSE: dict[str, Any] = {"type": "object", "properties": {"position": _VEC3, "orientation": _QUAT}}
_COLOR: dict[str, Any] = {"type": "object", "properties": {k: _NUM for k in "rgba"}}
_NUMS: dict[str, Any] = {"type": "array", "items": _NUM}


def _obj(title: str, props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": props,
        "required": required or list(props),
    }


def _prims(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": props}}


_FRAME = {
    "episode": {"type": "integer"},
    "frame_index": {"type": "integer"},
    "timestamp": {**_NUM, "description": "seconds into the episode"},
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "foxglove.Log": _obj(
        "foxglove.Log",
        {
            "timestamp": _TIME,
            "level": {"type": "integer", "description": "1 DEBUG, 2 INFO, 3 WARNING, 4 ERROR"},
            "message": {"type": "string"},
            "name": {"type": "string"},
            "file": {"type": "string"},
            "line": {"type": "integer", "minimum": 0},
        },
    ),
    "foxglove.CompressedImage": _obj(
        "foxglove.CompressedImage",
        {
            "timestamp": _TIME,
            "frame_id": {"type": "string"},
            "data": {"type": "string", "contentEncoding": "base64"},
            "format": {"type": "string", "description": "png"},
        },
    ),
    "foxglove.FrameTransforms": _obj(
        "foxglove.FrameTransforms",
        {
            "transforms": {
                "type": "array",
                "items": _obj(
                    "foxglove.FrameTransform",
                    {
                        "timestamp": _TIME,
                        "parent_frame_id": {"type": "string"},
                        "child_frame_id": {"type": "string"},
                        "translation": _VEC3,
                        "rotation": _QUAT,
                    },
                ),
            }
        },
    ),
    "foxglove.SceneUpdate": _obj(
        "foxglove.SceneUpdate",
        {
            "deletions": {"type": "array"},
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "timestamp": _TIME,
                        "frame_id": {"type": "string"},
                        "id": {"type": "string"},
                        "lifetime": _TIME,
                        "frame_locked": {"type": "boolean"},
                        "cubes": _prims({"pose": _POSE, "size": _VEC3, "color": _COLOR}),
                        "spheres": _prims({"pose": _POSE, "size": _VEC3, "color": _COLOR}),
                        "cylinders": _prims(
                            {
                                "pose": _POSE,
                                "size": _VEC3,
                                "bottom_scale": _NUM,
                                "top_scale": _NUM,
                                "color": _COLOR,
                            }
                        ),
                        "triangles": _prims(
                            {
                                "pose": _POSE,
                                "points": {"type": "array", "items": _VEC3},
                                "color": _COLOR,
                                "indices": {"type": "array", "items": {"type": "integer"}},
                            }
                        ),
                    },
                },
            },
        },
    ),
    "simgap.JointVector": _obj(
        "simgap.JointVector",
        {
            **_FRAME,
            "name": {"type": "array", "items": {"type": "string"}},
            "position": {**_NUMS, "description": "the dataset's units (rad for real/ and sim/)"},
        },
    ),
    "simgap.Gap": _obj(
        "simgap.Gap",
        {
            **_FRAME,
            "joint": {"type": "array", "items": {"type": "string"}},
            "nominal": {**_NUMS, "description": "measured minus the nominal replay [rad]"},
            "identified": {**_NUMS, "description": "measured minus the patched replay [rad]"},
            "floor": {**_NUMS, "description": "the noise floor [rad]"},
        },
        required=["episode", "frame_index", "timestamp", "joint", "nominal", "floor"],
    ),
}
"""Schema name -> JSON Schema."""

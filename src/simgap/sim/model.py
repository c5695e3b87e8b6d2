"""Load a MuJoCo model and look its objects up by name.

This is the one place models are compiled. A model that does not compile is reported with
MuJoCo's message and the file; a name that is not in the model is reported with the list of
valid names of that kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import mujoco

from simgap.errors import InputError, NameNotFoundError

ObjKind = Literal["joint", "actuator", "site", "body", "geom", "camera", "sensor"]

_OBJ: dict[str, tuple[mujoco.mjtObj, str]] = {
    "joint": (mujoco.mjtObj.mjOBJ_JOINT, "njnt"),
    "actuator": (mujoco.mjtObj.mjOBJ_ACTUATOR, "nu"),
    "site": (mujoco.mjtObj.mjOBJ_SITE, "nsite"),
    "body": (mujoco.mjtObj.mjOBJ_BODY, "nbody"),
    "geom": (mujoco.mjtObj.mjOBJ_GEOM, "ngeom"),
    "camera": (mujoco.mjtObj.mjOBJ_CAMERA, "ncam"),
    "sensor": (mujoco.mjtObj.mjOBJ_SENSOR, "nsensor"),
}


def load_model(path: str | Path) -> mujoco.MjModel:
    """Compile an MJCF file.

    Raises:
        InputError: the file is missing or does not compile (MuJoCo's message is kept).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(file=path, expected="an MJCF model file", got="no such file",
                         fix="set model.path in rig.toml to your MJCF")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise InputError(file=path, expected="an MJCF model that compiles", got=str(e).strip(),
                         fix="correct the model so that MuJoCo compiles it") from e


def load_spec(path: str | Path) -> mujoco.MjSpec:
    """Parse an MJCF file into an editable ``MjSpec`` (errors as in ``load_model``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(file=path, expected="an MJCF model file", got="no such file")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as e:
        raise InputError(file=path, expected="an MJCF model that parses", got=str(e).strip()
                         ) from e


def compile_spec(spec: mujoco.MjSpec, source: str | Path | None = None) -> mujoco.MjModel:
    """Compile a spec; a failure is an InputError carrying MuJoCo's message."""
    try:
        return spec.compile()
    except ValueError as e:
        raise InputError(file=source, expected="a model that compiles", got=str(e).strip()
                         ) from e


def names(model: mujoco.MjModel, kind: ObjKind) -> list[str]:
    """Every name of one kind of object in the model (unnamed objects are skipped)."""
    obj, count = _OBJ[kind]
    out = []
    for i in range(getattr(model, count)):
        n = mujoco.mj_id2name(model, obj, i)
        if n:
            out.append(n)
    return out


def object_id(model: mujoco.MjModel, kind: ObjKind, name: str,
              source: str | Path | None = None) -> int:
    """The id of a named object; a miss lists the valid names of that kind."""
    if kind not in _OBJ:
        raise NameNotFoundError("object kind", kind, _OBJ)
    obj, _ = _OBJ[kind]
    i = mujoco.mj_name2id(model, obj, name)
    if i < 0:
        raise NameNotFoundError(kind, name, names(model, kind), file=source)
    return int(i)


def joint_qpos_index(model: mujoco.MjModel, name: str) -> int:
    """Address of a hinge or slide joint's coordinate in ``qpos``."""
    return int(model.jnt_qposadr[object_id(model, "joint", name)])


def joint_dof_index(model: mujoco.MjModel, name: str) -> int:
    """Address of a hinge or slide joint's velocity in ``qvel``."""
    return int(model.jnt_dofadr[object_id(model, "joint", name)])


def actuator_for_joint(model: mujoco.MjModel, joint: str) -> int:
    """The id of the (first) actuator that drives a joint."""
    jid = object_id(model, "joint", joint)
    for a in range(model.nu):
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and \
                model.actuator_trnid[a, 0] == jid:
            return a
    raise NameNotFoundError(f"actuator driving joint '{joint}'", joint, names(model, "actuator"))


def strip_visuals(spec: mujoco.MjSpec) -> mujoco.MjSpec:
    """A copy of ``spec`` without visual-only geoms (contype = conaffinity = 0) that carry
    no mass, so fits compile fast without changing the dynamics.

    Unlike ``mujoco.sysid.remove_visuals``, a visual geom that carries mass (the SO-101's
    camera mount, 12 g) is kept, because removing it changes the dynamics.
    """
    out = spec.copy()
    for geom in list(out.geoms):
        if geom.contype == 0 and geom.conaffinity == 0:
            has_mass = geom.mass is not None and float(geom.mass) > 0
            if not has_mass:
                out.delete(geom)
    used = {g.meshname for g in out.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH}
    for mesh in list(out.meshes):
        if mesh.name not in used:  # unused meshes still cost a convex hull at compile
            out.delete(mesh)
    return out

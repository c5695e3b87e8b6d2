"""Load a MuJoCo model and look its objects up by name.

A model file becomes a model here (``load_model``, ``load_spec``, ``compile_spec``): one
that does not compile is reported with MuJoCo's message and the file; a name that is not in
the model is reported with the list of valid names of that kind.
"""

from __future__ import annotations

import copy
import typing
from pathlib import Path
from typing import Literal

import mujoco

from simgap.errors import InputError, NameNotFoundError, found_instead
from simgap.validate import check_input_file

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
        raise InputError(
            file=path,
            expected="an MJCF model file",
            got=found_instead(path),
            fix=_model_fix(path),
        )
    check_input_file(path, "an MJCF model file")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise InputError(
            file=path,
            expected="an MJCF model that compiles",
            got=str(e).strip(),
            fix="correct the model so that MuJoCo compiles it",
        ) from e


def _model_fix(path: Path) -> str:
    """What to pass instead of a model path that is no file: for a folder, the MJCF files
    in it; else where the path is set."""
    where = "in rig.toml it is model.path; for 'simgap init', --model"
    if path.is_dir():
        xml = sorted(p.name for p in path.glob("*.xml"))
        inside = f": {', '.join(xml[:10])}" if xml else " (it holds no .xml file)"
        return f"name the MJCF file inside the folder{inside} ({where})"
    return f"check the path ({where})"


def load_spec(path: str | Path) -> mujoco.MjSpec:
    """Parse an MJCF file into an editable ``MjSpec`` (errors as in ``load_model``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            file=path, expected="an MJCF model file", got=found_instead(path), fix=_model_fix(path)
        )
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as e:
        raise InputError(file=path, expected="an MJCF model that parses", got=str(e).strip()) from e


def compile_spec(spec: mujoco.MjSpec, source: str | Path | None = None) -> mujoco.MjModel:
    """Compile a spec; a failure is an InputError carrying MuJoCo's message."""
    try:
        return spec.compile()
    except ValueError as e:
        raise InputError(file=source, expected="a model that compiles", got=str(e).strip()) from e


def names(model: mujoco.MjModel, kind: ObjKind) -> list[str]:
    """Every name of one kind of object in the model (unnamed objects are skipped)."""
    obj, count = _OBJ[kind]
    out = []
    for i in range(getattr(model, count)):
        n = mujoco.mj_id2name(model, obj, i)
        if n:
            out.append(n)
    return out


def object_id(
    model: mujoco.MjModel, kind: ObjKind, name: str, source: str | Path | None = None
) -> int:
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
        if (
            model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
            and model.actuator_trnid[a, 0] == jid
        ):
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


# --- parameter sets: read and write physical parameters on a compiled model -------------

ParamKind = Literal[
    "kp",
    "kv",
    "force_limit",
    "damping",
    "armature",
    "frictionloss",
    "pair_friction",
    "geom_friction",
    "mass",
]
PARAM_KINDS: tuple[str, ...] = typing.get_args(ParamKind)
"""Parameter kinds ``get_param``/``with_params`` know. Targets: ``kp``/``kv``/``force_limit``
an actuator (or the joint it drives), ``damping``/``armature``/``frictionloss`` a joint,
``pair_friction`` a contact pair name or ``"geom1|geom2"``, ``geom_friction`` a geom,
``mass`` a body. ``force_limit`` is the actuator's symmetric torque limit [N m] (MJCF
``forcerange="-f f"``; an actuator without ``forcelimited`` reads as inf)."""


def _pair_id(model: mujoco.MjModel, target: str) -> int:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_PAIR, target)
    if i >= 0:
        return int(i)
    if "|" in target:
        a, b = (object_id(model, "geom", n) for n in target.split("|", 1))
        for p in range(model.npair):
            if {int(model.pair_geom1[p]), int(model.pair_geom2[p])} == {a, b}:
                return p
    valid = [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_PAIR, p)
        or f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, model.pair_geom1[p])}|"
        f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, model.pair_geom2[p])}"
        for p in range(model.npair)
    ]
    raise NameNotFoundError("contact pair", target, valid)


def _actuator(model: mujoco.MjModel, target: str) -> int:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, target)
    if i >= 0:
        return int(i)
    if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, target) >= 0:
        return actuator_for_joint(model, target)
    raise NameNotFoundError("actuator", target, names(model, "actuator"))


def get_param(model: mujoco.MjModel, kind: str, target: str) -> float:
    """The current value of one physical parameter (SI units: N m/rad, N m s/rad, kg m^2,
    N m, friction coefficient, kg). A target ``a+b`` names several objects written
    together (e.g. both finger pads); the first one's value is returned."""
    target = target.split("+", maxsplit=1)[0]
    if kind == "kp":
        return float(model.actuator_gainprm[_actuator(model, target), 0])
    if kind == "kv":
        return float(-model.actuator_biasprm[_actuator(model, target), 2])
    if kind == "force_limit":
        a = _actuator(model, target)
        if not model.actuator_forcelimited[a]:
            return float("inf")
        return float(max(abs(float(f)) for f in model.actuator_forcerange[a]))
    if kind in ("damping", "armature", "frictionloss"):
        dof = joint_dof_index(model, target)
        return float(getattr(model, f"dof_{kind}")[dof])
    if kind == "pair_friction":
        return float(model.pair_friction[_pair_id(model, target), 0])
    if kind == "geom_friction":
        return float(model.geom_friction[object_id(model, "geom", target), 0])
    if kind == "mass":
        return float(model.body_mass[object_id(model, "body", target)])
    raise NameNotFoundError("parameter kind", kind, PARAM_KINDS)


def set_param(model: mujoco.MjModel, kind: str, target: str, value: float) -> None:
    """Write one physical parameter into a compiled model in place (see ``get_param``).

    ``kp`` keeps a position actuator consistent (gain and bias); ``pair_friction`` and
    ``geom_friction`` set both tangential coefficients; ``mass`` scales the body's inertia
    with its mass. Call ``finish_params`` after the last write. A target ``a+b`` writes
    the same value to each named object.
    """
    if "+" in target:
        for part in target.split("+"):
            set_param(model, kind, part, value)
        return
    if kind == "kp":
        a = _actuator(model, target)
        model.actuator_gainprm[a, 0] = value
        model.actuator_biasprm[a, 1] = -value
    elif kind == "kv":
        model.actuator_biasprm[_actuator(model, target), 2] = -value
    elif kind == "force_limit":
        a = _actuator(model, target)
        model.actuator_forcelimited[a] = 1
        model.actuator_forcerange[a] = (-value, value)
    elif kind in ("damping", "armature", "frictionloss"):
        getattr(model, f"dof_{kind}")[joint_dof_index(model, target)] = value
    elif kind == "pair_friction":
        p = _pair_id(model, target)
        model.pair_friction[p, 0:2] = value
    elif kind == "geom_friction":
        model.geom_friction[object_id(model, "geom", target), 0] = value
    elif kind == "mass":
        b = object_id(model, "body", target)
        ratio = value / float(model.body_mass[b])
        model.body_mass[b] = value
        model.body_inertia[b] *= ratio
    else:
        raise NameNotFoundError("parameter kind", kind, PARAM_KINDS)


def finish_params(model: mujoco.MjModel) -> None:
    """Recompute the constants that depend on written parameters (masses, armature)."""
    mujoco.mj_setConst(model, mujoco.MjData(model))


def with_params(base: mujoco.MjModel, writes: dict[tuple[str, str], float]) -> mujoco.MjModel:
    """A copy of ``base`` with parameters written: ``{(kind, target): value}``.

    This is the fast path for fits: copying a compiled model and writing its arrays costs
    microseconds, against milliseconds (or, with meshes, a tenth of a second) for
    ``MjSpec.compile``. The copy has the same size signature as ``base``, so a list of them
    can be rolled out in one batched ``mujoco.rollout`` call.
    """
    m = copy.copy(base)
    for (kind, target), value in writes.items():
        set_param(m, kind, target, float(value))
    if any(k in ("mass", "armature") for k, _ in writes):
        finish_params(m)
    return m


class ModelPool:
    """Reusable copies of one compiled model for fits that write every searched parameter
    of every candidate anew at each evaluation (``models(writes_per_candidate)``): no copy
    and no scratch ``MjData`` per candidate, which on a meshed arm cost more than the
    rollout itself."""

    def __init__(self, base: mujoco.MjModel) -> None:
        self.base = base
        self._models: list[mujoco.MjModel] = []
        self._data = mujoco.MjData(base)

    def models(self, writes: list[dict[tuple[str, str], float]]) -> list[mujoco.MjModel]:
        """One model per dict of writes (valid until the next call)."""
        while len(self._models) < len(writes):
            self._models.append(copy.copy(self.base))
        out = self._models[: len(writes)]
        for m, w in zip(out, writes, strict=True):
            for (kind, target), value in w.items():
                set_param(m, kind, target, float(value))
            if any(k in ("mass", "armature") for k, _ in w):
                mujoco.mj_setConst(m, self._data)
        return out


def spec_from_xml(xml: str, source: str | Path | None = None) -> mujoco.MjSpec:
    """Parse MJCF text into a spec; a parse failure names ``source``."""
    try:
        return mujoco.MjSpec.from_string(xml)
    except ValueError as e:
        raise InputError(file=source, expected="MJCF text that parses", got=str(e).strip()) from e

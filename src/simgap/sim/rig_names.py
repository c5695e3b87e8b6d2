"""The model names a rig gives, looked up in its compiled model (``check_model_names``).

A rig names joints, a site, bodies, geoms and a camera of its MJCF; a typo there would be
found by whichever branch reads it first, after the cheaper branches had run, as a bare
"expected a known joint name". ``load_checked_rig`` loads a rig and looks every such name
up at once, naming rig.toml, the field and the valid names of that kind. It lives in
``sim/`` because it compiles the model; ``simgap.rig.load_rig`` stays a pure reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco

from simgap.errors import InputError, NameNotFoundError
from simgap.rig import Rig, load_rig
from simgap.rig.checks import check_dataset_root

__all__ = ["MODEL_EVIDENCE", "check_model_file", "check_model_names", "load_checked_rig"]

MODEL_EVIDENCE = (
    "dataset",
    "actuator_logs",
    "push_logs",
    "static_object_poses",
    "ros2_bags",
    "frames",
)
"""The evidence keys whose branches replay or render the rig's model: a rig naming any of
them needs its model file (a latency-only rig does not)."""


def load_checked_rig(path: str | Path) -> Rig:
    """``load_rig``, then the checks that need the files it names (``evidence.dataset`` a
    dataset's root, ``check_model_file``) and ``check_model_names``: what every command that
    acts on a rig loads it with."""
    rig = load_rig(path)
    check_dataset_root(rig.evidence.dataset, rig.source)
    check_model_file(rig)
    check_model_names(rig)
    return rig


def check_model_file(rig: Rig) -> None:
    """Refuse a ``model.path`` that is not a file when the rig's evidence needs the model
    (``MODEL_EVIDENCE``), before any branch runs: it was found by the fourth branch, after
    three had run.

    Raises:
        InputError: naming the rig file, ``model.path``, the evidence that needs it, the fix.
    """
    path = rig.model_path
    wants = [f"evidence.{k}" for k in MODEL_EVIDENCE if _exists(getattr(rig.evidence, k))]
    if path.is_file() or not wants:
        return
    raise InputError(
        file=rig.source,
        field="model.path",
        expected=f"the rig's MJCF model file (the rig's {', '.join(wants)} "
        "are replayed against it)",
        got=f"{path}: {'a folder' if path.is_dir() else 'no such file'}",
        fix="correct model.path in rig.toml (relative to the rig file)",
    )


def _exists(value: Path | tuple[Path, ...] | None) -> bool:
    """Whether an evidence value names a path that exists (a missing one is the evidence
    check's to name, with every other missing path at once)."""
    paths = value if isinstance(value, tuple) else (value,) if value is not None else ()
    return any(Path(p).exists() for p in paths)


def _refuse(
    rig: Rig, field: str, kind: str, name: str, valid: Sequence[str], where: str, what: str = ""
) -> None:
    """A NameNotFoundError naming the rig file and field; ``what`` says what the model has
    under that name when it is another kind of object."""
    err = NameNotFoundError(
        kind, f"{name} ({what})" if what else name, valid, file=rig.source, field=field, where=where
    )
    err.name = name
    raise err


def check_model_names(rig: Rig) -> None:
    """Refuse a name the rig gives that its model lacks, or has as another kind of object:
    every ``[joints.<name>]`` (a hinge or slide joint an actuator drives: the arm's joints,
    not an object's free joint; any hinge or slide joint of a model without actuators),
    ``model.ee_site`` (a site or body), ``model.object_body`` (a body with a free joint),
    ``model.object_geom`` (a geom on that body, else any geom), ``model.gripper_geoms`` and
    ``contact.support_geoms`` (geoms), ``camera.name``.

    Needs a model to check against: a model file that is missing, does not compile (the
    branches report MuJoCo's message) or defines no joint at all (a stand-in such as
    ``<mujoco/>`` in a rig that only names it) is not checked.

    Raises:
        NameNotFoundError: naming the rig file and the field, with the valid names of that
            kind (those the model has) as the fix.
    """
    path = rig.model_path
    if not path.is_file():
        return
    try:
        m = mujoco.MjModel.from_xml_path(str(path))
    except ValueError:
        return
    if m.njnt == 0:
        return
    obj = mujoco.mjtObj

    def named(kind: mujoco.mjtObj, n: int) -> list[str]:
        return [s for i in range(n) if (s := mujoco.mj_id2name(m, kind, i))]

    def body_of(name: str) -> int:
        return int(mujoco.mj_name2id(m, obj.mjOBJ_BODY, name))

    driven = {
        int(m.actuator_trnid[a, 0])
        for a in range(m.nu)
        if int(m.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT)
    }
    moving = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    joints = named(obj.mjOBJ_JOINT, m.njnt)
    hinges = [
        n for n in joints if int(m.jnt_type[mujoco.mj_name2id(m, obj.mjOBJ_JOINT, n)]) in moving
    ]
    arm = [n for n in hinges if mujoco.mj_name2id(m, obj.mjOBJ_JOINT, n) in driven]
    which = "its hinge and slide joints that an actuator drives"
    if not arm:  # a kinematic model: the replaying branches say they need actuators
        arm, which = hinges, "its hinge and slide joints (no actuator drives any)"
    for jm in rig.joints:
        if jm.name not in arm:
            what = ""
            if jm.name in joints:
                kind = int(m.jnt_type[mujoco.mj_name2id(m, obj.mjOBJ_JOINT, jm.name)])
                what = (
                    "a free joint"
                    if kind == int(mujoco.mjtJoint.mjJNT_FREE)
                    else "a ball joint"
                    if kind == int(mujoco.mjtJoint.mjJNT_BALL)
                    else "a joint no actuator drives"
                )
            _refuse(rig, f"joints.{jm.name}", "arm joint", jm.name, arm, f"{path}: {which}", what)
    bodies, geoms = named(obj.mjOBJ_BODY, m.nbody), named(obj.mjOBJ_GEOM, m.ngeom)
    sites = named(obj.mjOBJ_SITE, m.nsite)
    if rig.ee_site is not None and rig.ee_site not in sites + bodies:
        _refuse(rig, "model.ee_site", "site or body", rig.ee_site, sites + bodies, str(path))
    free = [
        b
        for b in bodies
        if m.body_jntnum[body_of(b)] > 0
        and int(m.jnt_type[m.body_jntadr[body_of(b)]]) == int(mujoco.mjtJoint.mjJNT_FREE)
    ]
    if rig.object_body is not None and rig.object_body not in free:
        _refuse(
            rig,
            "model.object_body",
            "object body",
            rig.object_body,
            free,
            f"{path}: its bodies with a free joint",
            "a body without a free joint" if rig.object_body in bodies else "",
        )
    if rig.object_geom is not None:
        own, where = geoms, str(path)
        if rig.object_body is not None:
            own = [
                g
                for g in geoms
                if _carried_by(
                    m,
                    int(m.geom_bodyid[mujoco.mj_name2id(m, obj.mjOBJ_GEOM, g)]),
                    body_of(rig.object_body),
                )
            ]
            where = f"{path}: the geoms body '{rig.object_body}' carries"
        if rig.object_geom not in own:
            _refuse(
                rig,
                "model.object_geom",
                "object geom",
                rig.object_geom,
                own,
                where,
                "a geom of another body" if rig.object_geom in geoms else "",
            )
    for field, gs in (
        ("model.gripper_geoms", rig.gripper_geoms),
        ("contact.support_geoms", rig.support_geoms or ()),
    ):
        for g in gs:
            if g not in geoms:
                _refuse(rig, field, "geom", g, geoms, str(path))
    cams = named(obj.mjOBJ_CAMERA, m.ncam)
    if rig.camera is not None and rig.camera.name not in cams:
        _refuse(rig, "camera.name", "camera", rig.camera.name, cams, str(path))


def _carried_by(m: Any, body: int, carrier: int) -> bool:
    """Whether ``body`` is ``carrier`` or a descendant welded to it (no joint between)."""
    while body != carrier:
        if body == 0 or m.body_jntnum[body] > 0:
            return False
        body = int(m.body_parentid[body])
    return True

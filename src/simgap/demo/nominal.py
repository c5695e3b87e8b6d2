"""An SO-101 model's actuator and joint parameters: the nominal model (cached, without
its visual geoms), its parameters, and the true ones written into it."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from pathlib import Path

from simgap.demo.faults import JointTruth
from simgap.demo.twin import JOINTS
from simgap.errors import InputError
from simgap.sim.model import compile_spec, load_spec, strip_visuals
from simgap.sim.scene import Model, position_actuators


@functools.lru_cache(maxsize=4)
def _nominal(path: str, mtime: float) -> Model:
    return compile_spec(strip_visuals(load_spec(path)), source=path)


def nominal_model(model_path: str | Path) -> Model:
    """A fresh copy of the nominal model, without its massless visual geoms (the same
    dynamics, faster to compile); the compiled model is cached per process."""
    p = Path(model_path)
    if not p.is_file():
        raise InputError(
            file=p,
            expected="the SO-101 MJCF (so101.xml)",
            got="no such file",
            fix="pass the path of the Menagerie robotstudio_so101/so101.xml",
        )
    return copy.copy(_nominal(str(p.resolve()), p.stat().st_mtime))


def nominal_params(
    m: Model,
    joints: Sequence[str] = JOINTS,
) -> dict[str, dict[str, float]]:
    """joint -> {kp, kv, damping, frictionloss, armature, force_limit} of the model, in
    ``joints`` order (``force_limit`` inf for an actuator without a force range)."""
    acts, dofs = position_actuators(m, joints)
    return {
        j: {
            "kp": float(m.actuator_gainprm[a, 0]),
            "kv": float(-m.actuator_biasprm[a, 2]),
            "damping": float(m.dof_damping[d]),
            "frictionloss": float(m.dof_frictionloss[d]),
            "armature": float(m.dof_armature[d]),
            "force_limit": float(max(abs(f) for f in m.actuator_forcerange[a]))
            if m.actuator_forcelimited[a]
            else float("inf"),
        }
        for j, a, d in zip(joints, acts, dofs, strict=True)
    }


def apply_truth(m: Model, truth: tuple[JointTruth, ...]) -> Model:
    """Write the true joint parameters into ``m`` (in place) and return it (the joints
    ``truth`` names, any model)."""
    acts, dofs = position_actuators(m, [t.name for t in truth])
    for t, a, d in zip(truth, acts, dofs, strict=True):
        kp, kv = t.value("kp"), t.value("kv")
        m.actuator_gainprm[a, 0] = kp
        m.actuator_biasprm[a, 1] = -kp
        m.actuator_biasprm[a, 2] = -kv
        m.dof_damping[d] = t.value("damping")
        m.dof_frictionloss[d] = t.value("frictionloss")
        m.dof_armature[d] = t.value("armature")
        if t.factor("force_limit") != 1.0:
            f = t.value("force_limit")
            m.actuator_forcelimited[a] = 1
            m.actuator_forcerange[a] = (-f, f)
    return m

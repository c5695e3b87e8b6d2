"""Isaac Lab export: one named actuator configuration per joint group, finite values only.

Each rung maps to the Isaac Lab class that models it (``isaaclab.actuators``, release
``ISAACLAB_RELEASE``): a delay (``delay``/``delay_lag``) to ``DelayedPDActuatorCfg`` with the
identified stiffness and damping and the delay in physics steps (``min_delay``/``max_delay``
span the delay's 95% interval); a ``servo`` to ``DCMotorCfg``; a ``net`` to
``ActuatorNetMLPCfg``. Joints are grouped by class and delay (or by the caller's groups);
per-joint values that differ inside a group are written as ``{joint regex: value}``, the form
Isaac Lab resolves against joint names. A required value that is missing or not finite keeps
the joint out (``NOT_OFFERED`` says why); an optional one is left out (``LEFT_OUT``). Joint
names reach the generated source only through ``repr`` of ``re.escape``-d strings
(``safe_names.py_literal``), and the module is compiled before it is returned.
Use the file as ``ArticulationCfg(..., actuators=ACTUATORS)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.errors import NameNotFoundError
from simgap.fit.delay import delay_step_span, delay_steps
from simgap.outputs import atomic_write_text
from simgap.safe_names import checked_python, py_literal

ISAACLAB_RELEASE = "isaaclab 2.3.2.post1"
RUNG_CLASS: Mapping[str, str] = {
    "delay": "DelayedPDActuatorCfg",
    "delay_lag": "DelayedPDActuatorCfg",
    "servo": "DCMotorCfg",
    "net": "ActuatorNetMLPCfg",
}
REQUIRED: Mapping[str, tuple[str, ...]] = {
    "DelayedPDActuatorCfg": ("stiffness", "damping"),
    "DCMotorCfg": ("stiffness", "damping", "saturation_effort"),
    "ActuatorNetMLPCfg": (
        "network_file",
        "pos_scale",
        "vel_scale",
        "torque_scale",
        "input_idx",
        "saturation_effort",
    ),
}
OPTIONAL: Mapping[str, tuple[str, ...]] = {
    "DelayedPDActuatorCfg": (
        "effort_limit",
        "velocity_limit",
        "armature",
        "friction",
        "viscous_friction",
    ),
    "DCMotorCfg": ("effort_limit", "velocity_limit", "armature", "friction", "viscous_friction"),
    "ActuatorNetMLPCfg": ("effort_limit", "velocity_limit", "armature"),
}
_GROUP_SCALARS = ("network_file", "pos_scale", "vel_scale", "torque_scale", "input_idx")


@dataclass(frozen=True)
class JointDrive:
    """One joint's identified actuator in Isaac Lab's terms (SI units; None: not known).

    Attributes:
        joint: joint name (as in the robot's USD/URDF).
        rung: ``delay``, ``delay_lag``, ``servo`` or ``net``.
        stiffness: PD position gain [N m/rad].
        damping: PD velocity gain [N m s/rad].
        armature: rotor inertia [kg m^2].
        friction: joint static friction [N m] (an effort from Isaac Sim 5 on).
        viscous_friction: joint viscous friction [N m s/rad].
        effort_limit: torque limit [N m].
        velocity_limit: velocity limit [rad/s].
        saturation_effort: peak motor torque [N m] (DC motor).
        delay_s: command delay [s].
        delay_interval_s: its 95% interval [s], or None.
        network_file: TorchScript file (net).
        pos_scale: network position-input scale (net).
        vel_scale: network velocity-input scale (net).
        torque_scale: network output scale (net).
        input_idx: history indices in physics steps (net).
        reason: why a value is missing, for ``NOT_OFFERED`` (e.g. "kp masked: force
            saturated in 92% of samples").
    """

    joint: str
    rung: str
    stiffness: float | None = None
    damping: float | None = None
    armature: float | None = None
    friction: float | None = None
    viscous_friction: float | None = None
    effort_limit: float | None = None
    velocity_limit: float | None = None
    saturation_effort: float | None = None
    delay_s: float | None = None
    delay_interval_s: tuple[float, float] | None = None
    network_file: str | None = None
    pos_scale: float | None = None
    vel_scale: float | None = None
    torque_scale: float | None = None
    input_idx: tuple[int, ...] | None = None
    reason: str = ""


@dataclass(frozen=True)
class IsaacGroup:
    """One generated configuration.

    Attributes:
        name: group name (the key in ``ACTUATORS``).
        variable: the Python variable holding it.
        class_name: the Isaac Lab configuration class.
        joints: joints in the group.
        fields: (field, value) passed to the class, in order.
    """

    name: str
    variable: str
    class_name: str
    joints: tuple[str, ...]
    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class IsaacLabExport:
    """The generated module and what went into it.

    Attributes:
        source: Python source of the module.
        groups: the configurations offered.
        not_offered: (joint, reason) for joints kept out.
        left_out: (joint, field) optional values left out (not finite or not known).
    """

    source: str
    groups: tuple[IsaacGroup, ...]
    not_offered: tuple[tuple[str, str], ...]
    left_out: tuple[tuple[str, str], ...]

    @property
    def offered(self) -> bool:
        """True when at least one configuration was written."""
        return bool(self.groups)

    def write(self, path: str | Path) -> Path:
        """Write the module (atomically)."""
        return atomic_write_text(path, self.source)


def _ok(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, (tuple, list)):
        return len(v) > 0 and all(_ok(x) for x in v)
    if isinstance(v, str):
        return bool(v)
    return isinstance(v, (int, float)) and math.isfinite(float(v))


def delay_steps_span(d: JointDrive, physics_dt_s: float) -> tuple[int, int]:
    """(min_delay, max_delay) in physics steps: the 95% interval floored and ceiled, or the
    delay rounded when there is no interval; (0, 0) without a delay."""
    if d.delay_interval_s is not None and _ok(d.delay_interval_s):
        lo, hi = d.delay_interval_s
        return delay_step_span(lo, hi, physics_dt_s)
    if d.delay_s is not None and _ok(d.delay_s):
        k = delay_steps(d.delay_s, physics_dt_s)
        return k, k
    return 0, 0


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name, flags=re.ASCII).upper().strip("_") or "GROUP"
    return ("G_" + ident) if ident[0].isdigit() else ident


def _literal(v: Any) -> str:
    if isinstance(v, float):
        return repr(float(f"{v:.6g}"))
    if isinstance(v, tuple):
        return repr(list(v))
    return repr(v)


def _field_value(drives: Sequence[JointDrive], name: str) -> str | None:
    """One value for the group, a {joint regex: value} dict over the joints that have a
    finite value (the others keep the asset's own), or None when none has."""
    have = [(d, getattr(d, name)) for d in drives if _ok(getattr(d, name))]
    if not have:
        return None
    if len(have) == len(drives) and all(v == have[0][1] for _, v in have):
        return _literal(have[0][1])
    return (
        "{" + ", ".join(f"{py_literal(re.escape(d.joint))}: {_literal(v)}" for d, v in have) + "}"
    )


def isaaclab_export(
    drives: Sequence[JointDrive],
    physics_dt_s: float,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> IsaacLabExport:
    """Build the Isaac Lab module for ``drives`` (see the module docstring).

    Args:
        drives: one per joint.
        physics_dt_s: Isaac Lab's physics step [s] (delays are counted in it).
        groups: optional group name -> joints; a group mixing classes or delays is split
            (``<name>_1``, ...). Default: one group per class and delay.
    """
    by_joint = {d.joint: d for d in drives}
    if groups is not None:
        for g, js in groups.items():
            for j in js:
                if j not in by_joint:
                    raise NameNotFoundError("joint", j, by_joint, field=f"groups.{g}")
    not_offered: list[tuple[str, str]] = []
    left_out: list[tuple[str, str]] = []
    keyed: dict[tuple[str, str, tuple[Any, ...]], list[JointDrive]] = {}
    owner = {j: g for g, js in (groups or {}).items() for j in js}
    for d in drives:
        if d.rung not in RUNG_CLASS:
            not_offered.append(
                (
                    d.joint,
                    f"rung {d.rung!r} has no Isaac Lab class (nothing to change from the model)"
                    if d.rung == "ideal"
                    else f"unknown rung {d.rung!r}",
                )
            )
            continue
        cls = RUNG_CLASS[d.rung]
        missing = [f for f in REQUIRED[cls] if not _ok(getattr(d, f))]
        if missing:
            why = d.reason or "not identified"
            not_offered.append((d.joint, f"{cls} needs {', '.join(missing)}: {why}"))
            continue
        left_out += [
            (d.joint, f)
            for f in OPTIONAL[cls]
            if getattr(d, f) is not None and not _ok(getattr(d, f))
        ]
        span = delay_steps_span(d, physics_dt_s) if cls == "DelayedPDActuatorCfg" else ()
        scal = tuple(getattr(d, f) for f in _GROUP_SCALARS) if cls == "ActuatorNetMLPCfg" else ()
        base = (
            owner.get(d.joint)
            or {
                "DelayedPDActuatorCfg": "delayed_pd",
                "DCMotorCfg": "dc_motor",
                "ActuatorNetMLPCfg": "actuator_net",
            }[cls]
        )
        keyed.setdefault((base, cls, span + scal), []).append(d)
    out_groups: list[IsaacGroup] = []
    counts: dict[str, int] = {}
    for (base, _, _), _ in keyed.items():
        counts[base] = counts.get(base, 0) + 1
    seen: dict[str, int] = {}
    for (base, cls, span_scal), ds in keyed.items():
        seen[base] = seen.get(base, 0) + 1
        name = base if counts[base] == 1 else f"{base}_{seen[base]}"
        fl: list[tuple[str, Any]] = [
            ("joint_names_expr", "[" + ", ".join(py_literal(re.escape(d.joint)) for d in ds) + "]")
        ]
        for f in REQUIRED[cls] + OPTIONAL[cls]:
            if f in _GROUP_SCALARS:
                fl.append((f, _literal(getattr(ds[0], f))))
            elif (val := _field_value(ds, f)) is not None:
                fl.append((f, val))
        if cls == "DelayedPDActuatorCfg":
            fl += [("min_delay", repr(span_scal[0])), ("max_delay", repr(span_scal[1]))]
        if cls == "ActuatorNetMLPCfg":
            fl.append(("input_order", repr("pos_vel")))
        var = _identifier(name) + "_CFG"
        while var in {g.variable for g in out_groups}:  # 'arm-1' and 'arm_1': one name
            var = var[:-4] + "_X_CFG"
        out_groups.append(
            IsaacGroup(
                name=name,
                variable=var,
                class_name=cls,
                joints=tuple(d.joint for d in ds),
                fields=tuple(fl),
            )
        )
    return IsaacLabExport(
        source=_source(out_groups, not_offered, left_out, physics_dt_s),
        groups=tuple(out_groups),
        not_offered=tuple(not_offered),
        left_out=tuple(left_out),
    )


def _source(
    groups: Sequence[IsaacGroup],
    not_offered: Sequence[tuple[str, str]],
    left_out: Sequence[tuple[str, str]],
    physics_dt_s: float,
) -> str:
    classes = sorted({g.class_name for g in groups})
    lines = [
        '"""Isaac Lab actuator configurations identified by simgap.',
        "",
        f"Written against {ISAACLAB_RELEASE} (isaaclab.actuators). Physics step "
        f"{physics_dt_s:g} s: min_delay/max_delay count physics steps.",
        "Use: ArticulationCfg(..., actuators=ACTUATORS).",
        '"""',
        "",
    ]
    if classes:
        lines += [f"from isaaclab.actuators import {', '.join(classes)}", ""]
    for g in groups:
        lines.append(f"{g.variable} = {g.class_name}(")
        lines += [f"    {f}={v}," for f, v in g.fields]
        lines += [")", ""]
    lines.append(
        "ACTUATORS = {" + ", ".join(f"{py_literal(g.name)}: {g.variable}" for g in groups) + "}"
    )
    lines.append(
        "NOT_OFFERED = {"
        + ", ".join(f"{py_literal(j)}: {py_literal(r)}" for j, r in not_offered)
        + "}"
    )
    lo: dict[str, list[str]] = {}
    for j, f in left_out:
        lo.setdefault(j, []).append(f)
    lines.append("LEFT_OUT = {" + ", ".join(f"{py_literal(j)}: {v!r}" for j, v in lo.items()) + "}")
    return checked_python("\n".join(lines) + "\n", "Isaac Lab module")


def drive_from_params(
    joint: str,
    rung: str,
    params: Mapping[str, float],
    *,
    delay_s: float | None = None,
    delay_interval_s: tuple[float, float] | None = None,
    effort_limit: float | None = None,
    reason: str = "",
) -> JointDrive:
    """A ``JointDrive`` from MuJoCo-style joint parameters (the identification's ``params``:
    ``kp kv damping frictionloss armature``): stiffness = kp, damping = kv, armature,
    friction = frictionloss, viscous_friction = the joint's damping. For a ``servo`` rung the
    torque limit is the DC motor's saturation effort."""
    return JointDrive(
        joint=joint,
        rung=rung,
        stiffness=params.get("kp"),
        damping=params.get("kv"),
        armature=params.get("armature"),
        friction=params.get("frictionloss"),
        viscous_friction=params.get("damping"),
        effort_limit=effort_limit,
        saturation_effort=effort_limit if rung == "servo" else None,
        delay_s=delay_s,
        delay_interval_s=delay_interval_s,
        reason=reason,
    )

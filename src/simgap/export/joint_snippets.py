"""Exports of a fitted actuator ladder: Isaac Lab configs, BAM-style parameters, and the
randomisation entry for what stays uncertain.

Per-joint snippets (``simgap.export.isaaclab`` writes the whole module, one configuration
per joint group); each snippet names its configuration after its joint, never one shared name,
and a joint without finite stiffness and damping gets a comment saying so instead.

- ``DelayedPDActuatorCfg``: stiffness/damping and ``min_delay``/``max_delay`` in *physics
  steps* (Isaac Lab counts the delay in steps of the physics dt).
- ``ActuatorNetMLPCfg``: a TorchScript network file plus ``pos_scale``, ``vel_scale`` and
  ``input_idx`` matching the physics step. simgap's networks take ``e = cmd - q`` with the
  normalisation folded into the weights, so ``pos_scale = vel_scale = 1``; Isaac Lab keeps
  ``joint_pos_target - joint_pos`` in its position history, the same sign. ``input_idx``
  spaces the history by the training spacing in physics steps (10 ms at dt 5 ms ->
  ``[0, 2, 4]``). The reference Go1 net was trained on ``q - q_target`` at 50 Hz and is
  consumed with ``pos_scale = -1``, ``input_idx = [0, 1, 2]``.
- BAM-style JSON: ``kt``, ``R``, ``armature``, ``friction_base``, ``friction_viscous``
  (names as in BAM's ``m1.json``), with ``model = "m1"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simgap.actuator.ladder import JointResult
from simgap.actuator.servo import PARAM_NAMES
from simgap.fit.delay import delay_steps
from simgap.safe_names import checked_python, py_comment, py_literal


def config_name(joint: str, kind: str = "") -> str:
    """A Python variable name of one joint's configuration: ``<JOINT>[_<KIND>]_CFG``; a
    name that is not already an ASCII identifier also gets 6 hex digits of its hash, so
    ``a.b`` and ``a_b`` do not share (and overwrite) one variable."""
    import hashlib
    import re

    ident = re.sub(r"\W", "_", joint, flags=re.ASCII).upper().strip("_") or "JOINT"
    ident = ("J_" + ident) if ident[0].isdigit() else ident
    if ident.lower() != joint.lower():
        digest = hashlib.sha256(joint.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        ident = f"{ident}_{digest.upper()}"
    return f"{ident}_{kind}_CFG" if kind else f"{ident}_CFG"


def servo_equivalent(res: JointResult, gain: float = 1.0, vin: float = 1.0) -> dict[str, float]:
    """The servo rung as PD gains about the joint: stiffness [N m/rad], damping
    [N m s/rad] (back-EMF + viscous), Coulomb friction [N m], armature [kg m^2]."""
    if res.servo_params is None:
        return {}
    p = dict(zip(PARAM_NAMES, res.servo_params, strict=True))
    return {
        "stiffness": p["km"] * gain * vin,
        "damping": p["dm"] + p["friction_viscous"],
        "back_emf_damping": p["dm"],
        "friction_viscous": p["friction_viscous"],
        "friction": p["friction_base"],
        "armature": p["armature"],
        "lag_s": p["lag_s"],
    }


M1_TERMS = (
    "kt",
    "R",
    "armature",
    "friction_base",
    "friction_viscous",
    "q_offset",
    "delay_s",
    "max_velocity",
)
"""BAM parameters a PD drive with armature, friction and delay carries (or that are the
joint's zero): the rest (load-dependent and Stribeck friction) it cannot."""


def delayed_pd_cfg(
    joint_expr: str,
    res: JointResult,
    physics_dt_s: float,
    delays_s: Sequence[float] | None = None,
    gain: float = 1.0,
    vin: float = 1.0,
    effort_limit: float | None = None,
) -> str:
    """An Isaac Lab ``DelayedPDActuatorCfg`` snippet (Python source).

    Args:
        joint_expr: ``joint_names_expr`` regular expression.
        res: the joint's ladder.
        physics_dt_s: the simulation's physics step [s].
        delays_s: delays seen across joints/units [s] (min/max span them); default the
            joint's own delay.
        gain, vin: the firmware gain x error gain and voltage when the servo is known.
        effort_limit: torque limit [N m].
    """
    eq = servo_equivalent(res, gain, vin)
    ds = list(delays_s) if delays_s else [res.delay_s]
    lo, hi = delay_steps(min(ds), physics_dt_s), delay_steps(max(ds), physics_dt_s)
    stiff = eq.get("stiffness", float("nan"))
    damp = eq.get("damping", float("nan"))
    if not (math.isfinite(stiff) and math.isfinite(damp)):
        return checked_python(
            f"# {py_literal(res.joint)}: no DelayedPDActuatorCfg offered: "
            "stiffness and damping not identified (rung "
            f"{py_literal(res.selected)})\n",
            "Isaac Lab snippet",
        )
    lines = [
        "from isaaclab.actuators import DelayedPDActuatorCfg",
        "",
        f"# simgap fit of {py_comment(res.joint)}: selected rung {py_comment(res.selected)}, "
        "physics dt "
        f"{physics_dt_s:g} s",
    ]
    if gain != 1.0 or vin != 1.0:
        lines.append(
            f"# stiffness at the drive gain {gain:.6g} duty/rad and {vin:g} V (the "
            "firmware P gain it is exported for; it scales with that gain); damping "
            f"= back-EMF {eq['back_emf_damping']:.6g} + viscous "
            f"{eq['friction_viscous']:.6g} N m s/rad"
        )
    extra = sorted(
        k
        for k, v in (res.bam_params or {}).items()
        if k not in M1_TERMS and isinstance(v, (int, float)) and v != 0.0
    )
    if extra:
        lines.append(
            f"# not representable in DelayedPDActuatorCfg (the BAM export keeps "
            f"them): {', '.join(py_comment(k) for k in extra)}"
        )
    lines += [
        f"{config_name(res.joint)} = DelayedPDActuatorCfg(",
        f"    joint_names_expr=[{py_literal(joint_expr)}],",
        f"    stiffness={stiff:.6g},",
        f"    damping={damp:.6g},",
    ]
    for key in ("armature", "friction"):
        if key in eq and math.isfinite(eq[key]):
            lines.append(f"    {key}={eq[key]:.6g},")
    if effort_limit is not None and math.isfinite(effort_limit):
        lines.append(f"    effort_limit={effort_limit:.6g},")
    lines += [f"    min_delay={lo},  # physics steps", f"    max_delay={hi},  # physics steps", ")"]
    return checked_python("\n".join(lines) + "\n", "Isaac Lab snippet")


def net_input_idx(history_spacing_s: float, physics_dt_s: float) -> list[int]:
    """``input_idx`` for Isaac Lab: t, t - d, t - 2d counted in physics steps."""
    k = max(1, int(round(history_spacing_s / physics_dt_s)))
    return [0, k, 2 * k]


def actuator_net_cfg(
    joint_expr: str,
    network_file: str,
    physics_dt_s: float,
    history_spacing_s: float,
    *,
    pos_scale: float = 1.0,
    vel_scale: float = 1.0,
    torque_scale: float = 1.0,
    effort_limit: float | None = None,
    velocity_limit: float | None = None,
) -> str:
    """An Isaac Lab ``ActuatorNetMLPCfg`` snippet (Python source)."""
    idx = net_input_idx(history_spacing_s, physics_dt_s)
    lines = [
        "from isaaclab.actuators import ActuatorNetMLPCfg",
        "",
        f"# trained with a {history_spacing_s * 1000:g} ms input history; physics dt "
        f"{physics_dt_s:g} s -> input_idx {idx}",
        f"{config_name(joint_expr, 'NET')} = ActuatorNetMLPCfg(",
        f"    joint_names_expr=[{py_literal(joint_expr)}],",
        f"    network_file={py_literal(network_file)},",
        f"    pos_scale={pos_scale:g},",
        f"    vel_scale={vel_scale:g},",
        f"    torque_scale={torque_scale:g},",
        '    input_order="pos_vel",',
        f"    input_idx={idx},",
    ]
    if effort_limit is not None and math.isfinite(effort_limit):
        lines += [
            f"    effort_limit={effort_limit:.6g},",
            f"    saturation_effort={effort_limit:.6g},",
        ]
    if velocity_limit is not None and math.isfinite(velocity_limit):
        lines.append(f"    velocity_limit={velocity_limit:.6g},")
    lines.append(")")
    return checked_python("\n".join(lines) + "\n", "Isaac Lab snippet")


def bam_params(res: JointResult, actuator: str = "") -> dict[str, Any]:
    """BAM-style parameter JSON (``m1``) of a known servo's fit; {} without a servo fit."""
    if res.servo_params is None:
        return {}
    p = dict(zip(PARAM_NAMES, res.servo_params, strict=True))
    out: dict[str, Any] = {}
    if "dm" in res.servo_free and p["km"] > 0:
        kt = p["dm"] / p["km"]
        out.update({"kt": kt, "R": kt / p["km"]})
    else:
        out["stiffness"] = p["km"]
    out.update(
        {
            "armature": p["armature"],
            "friction_base": p["friction_base"],
            "friction_viscous": p["friction_viscous"],
            "model": "m1",
            "actuator": actuator or res.joint,
            "delay_s": res.servo_delay_s,
        }
    )
    return out


def randomisation(results: Mapping[str, JointResult]) -> dict[str, Any]:
    """What stays uncertain, as ranges to randomise over in training.

    The delay's spread across joints (or units) gives its range; each servo parameter's
    spread across joints gives a scale range around its value (at least +-10 %); the
    held-out error of the selected rung is the residual to add as position noise.
    """
    delays = [r.delay_s for r in results.values()]
    out: dict[str, Any] = {
        "delay_s": {
            "min": float(min(delays)),
            "max": float(max(delays)),
            "source": "spread of the identified delay across joints/units",
        },
        "joints": {},
    }
    for name, r in results.items():
        sel = r.rung(r.selected)
        entry: dict[str, Any] = {"selected": r.selected, "residual_rad": sel.validation_mae_rad}
        if r.servo_params is not None:
            p = dict(zip(PARAM_NAMES, r.servo_params, strict=True))
            per = np.asarray(sel.validation_per_log_rad, dtype=float)
            fold_spread = float(per.std() / max(float(per.mean()), 1e-12)) if per.size else 0.1
            scale = max(0.1, min(0.5, fold_spread))
            entry["scale"] = {
                k: [1.0 - scale, 1.0 + scale]
                for k in ("km", "friction_base", "friction_viscous")
                if p[k] > 0
            }
        out["joints"][name] = entry
    return out

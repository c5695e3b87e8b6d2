"""mjlab actuator configurations of a fitted servo (Python source to paste into a config).

Field names are those of mjlab 1.6.0 (``mjlab/actuator/actuator.py``, ``builtin_actuator.py``,
``dc_actuator.py``, ``learned_actuator.py``; the release the tests name):

- every ``ActuatorCfg``: ``target_names_expr`` (tuple of regexes), ``armature``,
  ``frictionloss``, ``viscous_damping`` (passive joint damping, not the PD gain),
  ``delay_min_lag``/``delay_max_lag`` (command delay in *physics steps*, sampled per step);
- ``BuiltinPositionActuatorCfg``: ``stiffness``, ``damping`` (PD gains), ``effort_limit``;
- ``DcMotorActuatorCfg`` (an ``IdealPdActuatorCfg``): ``stiffness``, ``damping``,
  ``effort_limit``, ``saturation_effort`` (stall torque) and ``velocity_limit`` (no-load
  speed): torque falls linearly from stall to zero at the no-load speed;
- ``LearnedMlpActuatorCfg`` (a ``DcMotorActuatorCfg``): ``network_file``, ``pos_scale``,
  ``vel_scale``, ``torque_scale``, ``input_order`` (``pos_vel``), ``history_length``
  (consecutive physics steps; the position history holds ``position_target - pos``).

The servo maps onto these as the firmware P law driving a DC motor does: stiffness
``kt / R * vin * kp_fw * error_gain`` [N m/rad], damping the back-EMF ``kt^2 / R``
[N m s/rad], stall torque (``saturation_effort``) the torque at the duty limit
``kt / R * vin * max_pwm``, effort limit the same or, where the firmware limits the current
(the XL330's 1.75 A), ``kt * i_max`` if lower, no-load speed ``vin * max_pwm / kt``.
BAM's Coulomb ``friction_base`` becomes ``frictionloss`` and ``friction_viscous``
``viscous_damping``; load-dependent and Stribeck terms have no mjlab
field (say so in the comment, randomise what they add). mjlab spaces the network's
history by one physics step while simgap's network spaces it by 10 ms, so
``history_wrapper`` wraps the network to take ``2 * stride + 1`` steps and pick
``[0, stride, 2 * stride]`` of each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from simgap.fit.delay import delay_steps
from simgap.safe_names import checked_python, py_comment, py_literal

MJLAB_RELEASE = "1.6.0"
"""The mjlab release whose field names these snippets use."""

UNMAPPED = (
    "friction_stribeck",
    "load_friction_base",
    "load_friction_motor",
    "load_friction_external",
    "load_friction_stribeck",
    "load_friction_motor_stribeck",
    "load_friction_external_stribeck",
    "load_friction_motor_quad",
    "load_friction_external_quad",
)


def servo_gains(
    params: Mapping[str, float],
    gain: float,
    vin: float,
    max_pwm: float,
    current_limit_a: float | None = None,
) -> dict[str, float]:
    """PD gains and limits of a BAM-named servo: stiffness [N m/rad], damping
    [N m s/rad], stall torque at the duty limit (``saturation_effort``) [N m], effort
    limit [N m] (the stall torque, or the current limit's ``kt i_max`` where lower), no-load
    speed [rad/s]."""
    kt, r = float(params["kt"]), float(params["R"])
    stall = kt / r * vin * max_pwm
    cap = stall if current_limit_a is None else min(stall, kt * current_limit_a)
    return {
        "stiffness": kt / r * vin * gain,
        "damping": kt * kt / r,
        "saturation_effort": stall,
        "effort_limit": cap,
        "no_load_speed": vin * max_pwm / kt,
    }


def _common(
    params: Mapping[str, float], physics_dt_s: float, delays_s: Sequence[float] | None
) -> list[str]:
    ds = list(delays_s) if delays_s else [float(params.get("delay_s", 0.0))]
    lines = [
        f"    armature={float(params['armature']):.6g},",
        f"    frictionloss={float(params['friction_base']):.6g},",
        f"    viscous_damping={float(params['friction_viscous']):.6g},",
        f"    delay_min_lag={delay_steps(min(ds), physics_dt_s)},  # physics steps",
        f"    delay_max_lag={delay_steps(max(ds), physics_dt_s)},  # physics steps",
    ]
    return lines


def _header(
    cls: str, joint: str, params: Mapping[str, float], physics_dt_s: float, family: str | None
) -> list[str]:
    lost = [k for k in UNMAPPED if float(params.get(k, 0.0)) > 0]
    out = [
        f"from mjlab.actuator import {cls}  # mjlab {MJLAB_RELEASE}",
        "",
        f"# simgap fit of {py_comment(joint)}"
        + (f" (friction family {py_comment(family)})" if family else "")
        + f", physics dt {physics_dt_s:g} s",
    ]
    if lost:
        out.append(f"# not representable in mjlab, randomise instead: {', '.join(lost)}")
    return out


def _variable(variable: str) -> str:
    if not variable.isidentifier():
        raise ValueError(f"not a Python identifier: {variable!r}")
    return variable


def _pd_open(
    cls: str,
    joint_expr: str,
    params: Mapping[str, float],
    physics_dt_s: float,
    family: str | None,
    g: Mapping[str, float],
    variable: str,
    joint: str | None,
) -> list[str]:
    """The header comments and the opening lines of a PD config ``cls``: the joints, the
    stiffness and the damping."""
    return _header(cls, joint_expr if joint is None else joint, params, physics_dt_s, family) + [
        f"{_variable(variable)} = {cls}(",
        f"    target_names_expr=({py_literal(joint_expr)},),",
        f"    stiffness={g['stiffness']:.6g},",
        f"    damping={g['damping']:.6g},",
    ]


def builtin_position_cfg(
    joint_expr: str,
    params: Mapping[str, float],
    gain: float,
    vin: float,
    max_pwm: float,
    physics_dt_s: float,
    delays_s: Sequence[float] | None = None,
    family: str | None = None,
    current_limit_a: float | None = None,
    *,
    variable: str = "ACTUATOR_CFG",
    joint: str | None = None,
) -> str:
    """A ``BuiltinPositionActuatorCfg`` snippet (MuJoCo's <position> actuator), assigned to
    ``variable``; ``joint`` (default ``joint_expr``) is the name its comment gives. Names
    reach the source only as ``repr`` literals and escaped comments; the snippet is
    compiled before it is returned."""
    g = servo_gains(params, gain, vin, max_pwm, current_limit_a)
    lines = _pd_open(
        "BuiltinPositionActuatorCfg", joint_expr, params, physics_dt_s, family, g, variable, joint
    )
    if math.isfinite(g["effort_limit"]):
        lines.append(f"    effort_limit={g['effort_limit']:.6g},")
    lines += _common(params, physics_dt_s, delays_s) + [")"]
    return checked_python("\n".join(lines) + "\n", "mjlab snippet")


def dc_motor_cfg(
    joint_expr: str,
    params: Mapping[str, float],
    gain: float,
    vin: float,
    max_pwm: float,
    physics_dt_s: float,
    delays_s: Sequence[float] | None = None,
    family: str | None = None,
    current_limit_a: float | None = None,
    *,
    variable: str = "ACTUATOR_CFG",
    joint: str | None = None,
) -> str:
    """A ``DcMotorActuatorCfg`` snippet: PD with the motor's torque-speed line, capped at
    the firmware's current limit where it has one (``variable`` and ``joint`` as in
    ``builtin_position_cfg``; compiled before it is returned)."""
    g = servo_gains(params, gain, vin, max_pwm, current_limit_a)
    lines = _pd_open(
        "DcMotorActuatorCfg", joint_expr, params, physics_dt_s, family, g, variable, joint
    )
    lines += [
        f"    effort_limit={g['effort_limit']:.6g},",
        f"    saturation_effort={g['saturation_effort']:.6g},",
        f"    velocity_limit={g['no_load_speed']:.6g},",
    ]
    lines += _common(params, physics_dt_s, delays_s) + [")"]
    return checked_python("\n".join(lines) + "\n", "mjlab snippet")


def learned_mlp_cfg(
    joint_expr: str,
    network_file: str,
    history_length: int,
    effort_limit: float,
    velocity_limit: float,
    physics_dt_s: float,
    *,
    variable: str = "ACTUATOR_CFG",
    joint: str | None = None,
) -> str:
    """A ``LearnedMlpActuatorCfg`` snippet for a network taking ``history_length``
    consecutive physics steps (``history_wrapper``'s output); scales are 1 because the
    normalisation is folded into the network (``variable`` and ``joint`` as in
    ``builtin_position_cfg``; compiled before it is returned)."""
    who = joint_expr if joint is None else joint
    return checked_python(
        "\n".join(
            [
                f"from mjlab.actuator import LearnedMlpActuatorCfg  # mjlab {MJLAB_RELEASE}",
                "",
                f"# simgap actuator network of {py_comment(who)}, physics dt {physics_dt_s:g} s",
                f"{_variable(variable)} = LearnedMlpActuatorCfg(",
                f"    target_names_expr=({py_literal(joint_expr)},),",
                f"    network_file={py_literal(network_file)},",
                "    pos_scale=1.0,",
                "    vel_scale=1.0,",
                "    torque_scale=1.0,",
                "    input_order='pos_vel',",
                f"    history_length={history_length},",
                f"    effort_limit={effort_limit:.6g},",
                f"    saturation_effort={effort_limit:.6g},",
                f"    velocity_limit={velocity_limit:.6g},",
                ")",
            ]
        )
        + "\n",
        "mjlab snippet",
    )


def history_wrapper(module: Any, stride: int) -> tuple[Any, int]:
    """Wrap a simgap network ``(N, 6)`` (error and velocity at t, t - d, t - 2d) so it takes
    mjlab's ``(N, 2 H)`` input (H = 2 stride + 1 consecutive steps, positions first).

    Returns:
        (TorchScript module, H).
    """
    import warnings

    import torch

    H = 2 * stride + 1
    idx = [0, stride, 2 * stride, H, H + stride, H + 2 * stride]

    class _Pick(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner
            self.pick = torch.tensor(idx, dtype=torch.long)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x.index_select(1, self.pick))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(_Pick(module).eval()), H

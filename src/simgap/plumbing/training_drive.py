"""The training audit's drive check: training's PD drive against the servo's own loop."""

from __future__ import annotations

from typing import Any

from simgap.actuator.families import servo_family
from simgap.finding import Finding
from simgap.plumbing.training_findings import (
    missing_keys,
    not_measured,
    provenance_of,
    stated,
    training_finding,
)
from simgap.rig import Rig

DRIVE_BAND = (0.5, 2.0)
"""Training's PD stiffness and force limit within this factor of the servo's."""


def servo_drive(model: str, p_gain: float) -> tuple[float, float]:
    """The servo's own position loop as a PD drive at zero speed: (stiffness [N m/rad],
    torque limit [N m]) = (kt V / R x error gain x P, kt V / R x duty limit)."""
    fam = servo_family(model)
    stall = fam.nominal["kt"] * fam.vin_v / fam.nominal["R"]
    return stall * fam.error_gain * p_gain, stall * fam.max_pwm


def check_drive(rig: Rig) -> Finding:
    """Training's PD stiffness and force limit against the servo's loop."""
    tr, dep, title = rig.training, rig.deploy, "PD drive vs the servo (training config)"
    miss = missing_keys(
        rig,
        [
            ("training.pd_stiffness_nm_rad", tr.pd_stiffness_nm_rad),
            ("deploy.servo_model", dep.servo_model),
            ("deploy.servo_p_gain", dep.servo_p_gain),
        ],
    )
    if miss:
        return not_measured(title, "pd_drive", miss, "the servo's loop")
    assert tr.pd_stiffness_nm_rad is not None and dep.servo_model and dep.servo_p_gain
    k, tau = servo_drive(dep.servo_model, float(dep.servo_p_gain))
    k_ratio = tr.pd_stiffness_nm_rad / k
    figs: dict[str, Any] = {
        "training_stiffness_nm_rad": tr.pd_stiffness_nm_rad,
        "servo_stiffness_nm_rad": k,
        "stiffness_ratio": k_ratio,
        "servo_p_gain": dep.servo_p_gain,
        "servo_torque_limit_nm": tau,
    }
    bad = not DRIVE_BAND[0] <= k_ratio <= DRIVE_BAND[1]
    parts = [
        f"training's stiffness {tr.pd_stiffness_nm_rad:g} N m/rad is {k_ratio:.3g}x the "
        f"{dep.servo_model}'s {k:.3g} N m/rad at P = {dep.servo_p_gain:g}"
    ]
    if stated(rig, "training.pd_force_limit_nm", tr.pd_force_limit_nm):
        assert tr.pd_force_limit_nm is not None
        f_ratio = tr.pd_force_limit_nm / tau
        figs.update(training_force_limit_nm=tr.pd_force_limit_nm, force_ratio=f_ratio)
        bad = bad or not DRIVE_BAND[0] <= f_ratio <= DRIVE_BAND[1]
        parts.append(
            f"its force limit {tr.pd_force_limit_nm:g} N m is {f_ratio:.3g}x the "
            f"servo's {tau:.3g} N m"
        )
    return training_finding(
        title,
        "pd_drive",
        bad,
        (
            "Simulated joints track far harder than the real servos: "
            if bad
            else "Training's drive is the servo's, within 2x: "
        )
        + "; ".join(parts)
        + ".",
        f"Train with stiffness ~{k:.3g} N m/rad and force limit ~{tau:.3g} N m (the "
        "servo's loop; 'simgap actuator' identifies it from your recordings), or raise "
        "the servo's P coefficient.",
        figs,
        "stiffness_ratio",
        provenance_of(
            rig,
            "training.pd_stiffness_nm_rad",
            "training.pd_force_limit_nm",
            "deploy.servo_model",
            "deploy.servo_p_gain",
        ),
    )

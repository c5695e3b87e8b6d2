"""Servo families: the firmware and motor constants of a known servo, and the physical box
each fitted motor parameter must stay in.

A box is what stops a fit from buying training error with an impossible motor (a first fit
here reached R = 15.3 ohm on the XL330 and scored 3.6x worse than BAM on an unseen
trajectory type). Every constant names its source.

XL330-M288-T (Dynamixel). Firmware: ``duty = kp * (4096 / 2 pi) / (256 * 885) * e`` (the
position P gain divides by 256 on the 330 series as BAM measured it; 885 is the Present-PWM
full scale), duty limit 1.0, and the firmware's 1.75 A current limit held on the duty,
``(kt qd +- R 1.75) / vin`` (BAM 1.0.2 ``bam/dynamixel/actuator.py``, the released
simulator; BAM's main branch dropped the limit after the release, commit edef2f4, on the
reading that the servo does not limit current in voltage mode). The shared logs say the
limit acts: with it M3's training MAE is 0.028 rad instead of 0.042, and the selected
family's leave-one-type-out MAE over seeds 0-2 is 0.052 rad instead of 0.063
(``benchmarks/actuator.py``, docs/actuator.md). Motor, from the ROBOTIS
e-manual: stall torque 0.52 N m at 1.47 A and 5.0 V, so kt ~ 0.52 / 1.47 = 0.35 N m/A at
the output shaft and R ~ 5.0 / 1.47 = 3.4 ohm; no-load speed 103 rpm (10.8 rad/s) at 5 V,
so the back-EMF constant is at most 5.0 / 10.8 = 0.46 V s/rad. Box: kt 0.2-0.8 N m/A (the
datasheet figure within a factor 2 either way), R 2.0-5.0 ohm (BAM's box), armature
1e-4-0.02 kg m^2 (BAM's lower bound; its upper 0.05 is 25x its fits, 0.0018-0.0019).

STS3215 7.4 V (Feetech, the SO-101's servo). Firmware: ``duty = kp * 0.166 * e`` with the
error gain BAM measured on an oscilloscope, duty limit 0.97, and an internal target that
moves at most 3400 steps/s (``max_velocity`` = 3400 * 2 pi / 4096 = 5.22 rad/s; BAM
``bam/feetech/actuator.py``). The factory P coefficient is 32; LeRobot writes 16 (the rig's
``deploy.servo_p_gain``). Motor, from Feetech's STS3215 sheet (7.4 V version): stall torque
19.5 kg cm (1.91 N m) at 2.7 A, so kt ~ 0.71 N m/A and R ~ 7.4 / 2.7 = 2.7 ohm; BAM's
nominal kt is 0.7845 N m/A ("docs says 8 kg.cm/A"). Box: kt 0.35-2.0 N m/A, R 1.5-5.0 ohm,
armature 1e-5-0.04 kg m^2 (BAM's box), max_velocity 0.5x-2x the nominal clamp.

Motor curve. Besides the boxes, the datasheet's two points of the motor curve bound what a
(kt, R, friction) set may do together: the stall torque ``kt V / R`` and the no-load speed
``(kt V / R - friction_base) / (kt^2 / R + friction_viscous)`` at the datasheet's voltage
must stay within ``curve_box`` times the datasheet's (XL330: 0.52 N m and 103 rpm at 5 V,
0.7x-1.4x; BAM's shipped XL330 m1-m6 give 0.93x-1.27x and 1.05x-1.13x. STS3215: 1.91 N m and
0.222 s/60 deg (4.72 rad/s) at 7.4 V, 0.6x-2x, because BAM's own STS3215 fit gives 1.75x
the sheet's stall torque). The fit pays 1 rad of cost per unit of relative excess, so the
search never settles outside the curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from simgap.errors import NameNotFoundError


@dataclass(frozen=True)
class ServoFamily:
    """The constants of one servo model.

    Attributes:
        name: family key (``xl330``, ``sts3215``).
        error_gain: duty per (firmware kp unit x rad of error).
        max_pwm: duty limit.
        vin_v: nominal supply [V] (a log's own ``vin`` wins).
        kp_default: the firmware P gain a log without one runs at.
        kt_box: torque constant box [N m/A] (at the output shaft).
        r_box: winding resistance box [ohm].
        armature_box: reflected rotor inertia box [kg m^2].
        max_velocity_rad_s: the firmware's target velocity clamp [rad/s] (inf when none).
        max_velocity_box: box of the fitted clamp [rad/s] (None: not fitted).
        encoder_rad: one encoder count [rad].
        curve_voltage_v: voltage of the datasheet's motor curve [V] (0: none).
        stall_torque_nm: datasheet stall torque at that voltage [N m].
        no_load_speed_rad_s: datasheet no-load speed at that voltage [rad/s].
        curve_box: allowed ratio of the fitted motor's stall torque and speed to those.
        nominal: the datasheet motor (kt, R, armature): the fit's first start.
        source: where the constants come from.
        current_limit_a: the firmware's current limit [A] that the simulator applies to
            the duty (None: none).
    """

    name: str
    error_gain: float
    max_pwm: float
    vin_v: float
    kp_default: float
    kt_box: tuple[float, float]
    r_box: tuple[float, float]
    armature_box: tuple[float, float]
    max_velocity_rad_s: float = math.inf
    max_velocity_box: tuple[float, float] | None = None
    encoder_rad: float = 2.0 * math.pi / 4096
    curve_voltage_v: float = 0.0
    stall_torque_nm: float = 0.0
    no_load_speed_rad_s: float = 0.0
    curve_box: tuple[float, float] = (0.7, 1.4)
    nominal: dict[str, float] = field(default_factory=dict)
    source: str = ""
    current_limit_a: float | None = None

    def motor_curve(
        self, kt: np.ndarray, r: np.ndarray, friction_base: np.ndarray, friction_viscous: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(stall torque [N m], no-load speed [rad/s]) at ``curve_voltage_v`` of motor
        parameters: ``kt V / R`` and ``(kt V / R - friction_base) / (kt^2 / R + viscous)``."""
        stall = kt * self.curve_voltage_v / r
        speed = (stall - friction_base) / (kt * kt / r + friction_viscous)
        return stall, speed

    def curve_violation(
        self, kt: np.ndarray, r: np.ndarray, friction_base: np.ndarray, friction_viscous: np.ndarray
    ) -> np.ndarray:
        """How far (relative, 0 inside) the motor's stall torque and no-load speed fall
        outside ``curve_box`` times the datasheet's (0 when the family has no curve)."""
        if self.curve_voltage_v <= 0:
            return np.zeros(np.shape(kt))
        stall, speed = self.motor_curve(kt, r, friction_base, friction_viscous)
        lo, hi = self.curve_box
        out = np.zeros(np.shape(stall))
        for val, ref in ((stall, self.stall_torque_nm), (speed, self.no_load_speed_rad_s)):
            ratio = val / ref
            out = out + np.maximum(lo - ratio, 0.0) + np.maximum(ratio - hi, 0.0)
        return out


XL330 = ServoFamily(
    name="xl330",
    error_gain=(4096.0 / (2.0 * math.pi)) / (256.0 * 885.0),
    max_pwm=1.0,
    vin_v=7.4,
    kp_default=400.0,
    kt_box=(0.2, 0.8),
    r_box=(2.0, 5.0),
    armature_box=(1e-4, 0.02),
    curve_voltage_v=5.0,
    stall_torque_nm=0.52,
    no_load_speed_rad_s=103.0 * 2.0 * math.pi / 60.0,
    nominal={"kt": 0.52 / 1.47, "R": 5.0 / 1.47, "armature": 0.005},
    current_limit_a=1.75,
    source="ROBOTIS XL330-M288-T e-manual (stall 0.52 N m / 1.47 A at 5 V); BAM 1.0.2 "
    "bam/xl330/actuator.py (error gain, max_pwm, R box)",
)

STS3215 = ServoFamily(
    name="sts3215",
    error_gain=0.166,
    max_pwm=0.97,
    vin_v=7.4,
    kp_default=32.0,
    kt_box=(0.35, 2.0),
    r_box=(1.5, 5.0),
    armature_box=(1e-5, 0.04),
    max_velocity_rad_s=3400.0 * 2.0 * math.pi / 4096.0,
    max_velocity_box=(0.5 * 3400.0 * 2.0 * math.pi / 4096.0, 2.0 * 3400.0 * 2.0 * math.pi / 4096.0),
    curve_voltage_v=7.4,
    stall_torque_nm=19.5 * 0.0980665,
    no_load_speed_rad_s=(math.pi / 3.0) / 0.222,
    curve_box=(0.6, 2.0),
    nominal={
        "kt": 0.7845,
        "R": 7.4 / 2.7,
        "armature": 0.005,
        "max_velocity": 3400.0 * 2.0 * math.pi / 4096.0,
    },
    source="Feetech STS3215 7.4 V sheet (stall 19.5 kg cm / 2.7 A); BAM 1.0.2 "
    "bam/feetech/actuator.py (error gain 0.166, max_pwm 0.97, 3400 steps/s clamp)",
)

FAMILIES = {f.name: f for f in (XL330, STS3215)}

LEROBOT_P_COEFFICIENT = 16.0
"""The P coefficient LeRobot writes to every SO-101 servo (the factory value is 32)."""


def servo_family(name: str) -> ServoFamily:
    """A family by name (``xl330``, ``sts3215``; a motor string that starts with one, e.g.
    ``xl330-m288``, matches); a miss lists the known ones."""
    key = name.lower().replace("_", "").replace("-", "")
    for k, fam in FAMILIES.items():
        if key.startswith(k):
            return fam
    raise NameNotFoundError("servo family", name, list(FAMILIES))


def find_family(motor: str) -> ServoFamily | None:
    """The family of a motor string, or None when it is not a known one."""
    try:
        return servo_family(motor)
    except NameNotFoundError:
        return None


def servo_family_for(rig: object) -> tuple[ServoFamily, float] | None:
    """The servo family and firmware P gain of a rig's actuators, for the actuator branch.

    The family comes from ``deploy.servo_model`` (e.g. ``"sts3215"``); the gain from
    ``deploy.servo_p_gain``, else LeRobot's 16 for an STS3215, else the family's factory
    default. None when the rig names no servo model.
    """
    deploy = getattr(rig, "deploy", None)
    model = getattr(deploy, "servo_model", None)
    if not model:
        return None
    fam = servo_family(str(model))
    gain = getattr(deploy, "servo_p_gain", None)
    if gain is None:
        gain = LEROBOT_P_COEFFICIENT if fam.name == "sts3215" else fam.kp_default
    return fam, float(gain)

"""Rung 3: a physical servo model, simulated open loop and vectorised over candidates.

The firmware's proportional controller drives a DC motor, which moves a load against
friction (BAM's M1 family, ``bam/actuator.py`` and ``bam/simulate.py``)::

    duty  = clip(gain * (u - q), -max_pwm, max_pwm)      gain = kp_fw * error_gain
    drive = clip(km * vin * duty, +-tau_max)               km = kt / R, dm = kt^2 / R
    tau_g = g_sin * sin(q) + g_cos * cos(q)                pendulum: g_sin = -m g l
    stop  = J / dt * qd + drive + tau_g
    tau_f = -sign(stop) * min(|stop|, friction_base)
    qd    = (stop + tau_f) / (J / dt + dm + friction_viscous) ;  q += dt * qd

with J = inertia + armature. Coulomb friction is BAM's budget (it can stop the joint but
never push it). The two damping terms, back-EMF ``dm`` and ``friction_viscous``, are taken
at the new velocity, as MuJoCo integrates joint damping (implicitly, in both its Euler and
implicitfast integrators): the step cannot go unstable, and a fitted viscous friction is
exactly MuJoCo's joint ``damping`` (the MJCF export relies on it). BAM puts the viscous
term in the budget instead; both agree while the joint slides.

``u`` is the delayed command, optionally through a first-order filter of time constant
``lag_s`` (integrated the way MuJoCo integrates a ``filter`` actuator). With torque disabled
the motor gives no torque. The firmware gain comes from each log, so one parameter set holds
across gains. ``simulate`` runs N candidate parameter sets on L logs at once: every array in
the loop has shape (N, L).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

PARAM_NAMES = ("km", "dm", "armature", "friction_base", "friction_viscous", "lag_s")
"""Order of the internal parameter vector (all >= 0)."""

XL330_ERROR_GAIN = (4096.0 / (2.0 * np.pi)) / (256.0 * 885.0)
"""XL330 firmware: duty per (kp unit x rad) of position error (BAM's constant)."""

ERROR_GAINS = {
    "xl330": XL330_ERROR_GAIN,
    "mx64": 0.158,
    "mx106": 0.158,
    "xl320": 0.0505,
    "sts3215": 0.166,
}
MAX_PWM = {"xl330": 1.0, "mx64": 0.9625, "mx106": 0.9625, "xl320": 1.0, "sts3215": 0.97}
GRAVITY = 9.80665
"""Standard gravity [m/s^2] (BAM's pendulum uses it)."""


@dataclass(frozen=True)
class ServoBatch:
    """L logs on a common step, padded to a common length T.

    Attributes:
        dt: step [s].
        cmd: command [rad], shape (L, T) (held after a log's end).
        q: measured position [rad], shape (L, T).
        mask: 1 where a sample counts, shape (L, T).
        enable: torque enabled, shape (L, T), bool.
        qd0: initial velocity [rad/s], shape (L,).
        gain: firmware gain x error gain [duty/rad], shape (L,).
        vin: supply voltage [V], shape (L,) (1 for a generic torque servo).
        max_pwm: duty limit, shape (L,) (inf for a generic servo).
        tau_max: motor torque limit [N m], shape (L,) (inf when none).
        inertia: load inertia without armature [kg m^2], shape (L,).
        g_sin: gravity torque coefficient of sin(q) [N m], shape (L,).
        g_cos: gravity torque coefficient of cos(q) [N m], shape (L,).
        qd: measured (or differentiated) velocity [rad/s], shape (L, T).
        tau: logged joint torque [N m], shape (L, T), when every log has it.
        vin_t: logged supply voltage [V], shape (L, T), when every log has it (the
            physical servo then drives with it instead of ``vin``: the XL330 logs sag to
            5.7 V and rise to 8.5 V around their 7.4 V).
        i_max: the firmware's current limit [A], shape (L,), when the physical servo
            models one (``families.ServoFamily.current_limit_a``): the duty is held within
            ``(kt qd +- R i_max) / vin`` before the duty limit, as BAM 1.0.2 models it.
    """

    dt: float
    cmd: np.ndarray
    q: np.ndarray
    mask: np.ndarray
    enable: np.ndarray
    qd0: np.ndarray
    gain: np.ndarray
    vin: np.ndarray
    max_pwm: np.ndarray
    tau_max: np.ndarray
    inertia: np.ndarray
    g_sin: np.ndarray
    g_cos: np.ndarray
    qd: np.ndarray | None = None
    tau: np.ndarray | None = None
    vin_t: np.ndarray | None = None
    i_max: np.ndarray | None = None

    @property
    def n_logs(self) -> int:
        """L."""
        return int(self.cmd.shape[0])

    def take(self, idx: np.ndarray | list[int]) -> ServoBatch:
        """The logs at ``idx``."""
        ix = np.asarray(idx, dtype=int)
        arrays = {
            f.name: getattr(self, f.name)[ix]
            for f in fields(self)
            if f.name != "dt" and getattr(self, f.name) is not None
        }
        return replace(self, **arrays)


def simulate(
    params: np.ndarray,
    batch: ServoBatch,
    cmd: np.ndarray | None = None,
) -> np.ndarray:
    """Open-loop rollouts from each log's first measured state.

    Args:
        params: shape (N, 6) in ``PARAM_NAMES`` order.
        batch: the logs.
        cmd: delayed commands, shape (L, T) or (N, L, T); default ``batch.cmd``.

    Returns:
        Simulated positions [rad], shape (N, L, T).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # diverging candidates: NaN
        return _simulate(params, batch, cmd)


def _simulate(params: np.ndarray, batch: ServoBatch, cmd: np.ndarray | None) -> np.ndarray:
    p = np.atleast_2d(np.asarray(params, dtype=float))
    n = p.shape[0]
    c = batch.cmd if cmd is None else cmd
    per_cand = c.ndim == 3
    km, dm, arm, fc, fv, lag = (p[:, i : i + 1] for i in range(6))
    dt = batch.dt
    alpha = np.where(lag > dt, dt / np.maximum(lag, 1e-12), 1.0)
    inv_lag = lag > 0
    J = batch.inertia[None, :] + arm
    j_dt = J / dt
    kv = km * batch.vin[None, :]
    gmax = batch.max_pwm[None, :]
    tmax = batch.tau_max[None, :]
    gain = batch.gain[None, :]
    gs, gc = batch.g_sin[None, :], batch.g_cos[None, :]
    L, T = batch.cmd.shape
    q = np.broadcast_to(batch.q[:, 0][None, :], (n, L)).copy()
    qd = np.broadcast_to(batch.qd0[None, :], (n, L)).copy()
    u = np.broadcast_to((c[..., 0] if per_cand else c[:, 0][None, :]), (n, L)).copy()
    out = np.empty((n, L, T))
    en = batch.enable
    for k in range(T):
        out[:, :, k] = q
        ck = c[..., k] if per_cand else c[None, :, k]
        target = np.where(inv_lag, u, ck)
        duty = np.clip(gain * (target - q), -gmax, gmax)
        on = en[None, :, k]
        drive = np.clip(kv * duty, -tmax, tmax) * on
        stop = j_dt * qd + drive + gs * np.sin(q) + gc * np.cos(q)
        tau_f = -np.sign(stop) * np.minimum(np.abs(stop), fc)
        qd = (stop + tau_f) / (j_dt + dm * on + fv)  # damping taken implicitly
        q = q + dt * qd
        u = u + alpha * (ck - u)
    return out


def pendulum_load(
    mass: float,
    length: float,
    arm_mass: float = 0.0,
) -> tuple[float, float, float]:
    """BAM's bench: point mass at ``length`` plus a uniform arm; 0 rad hangs down.

    Returns:
        (inertia [kg m^2], g_sin [N m], g_cos [N m]).
    """
    inertia = mass * length**2 + arm_mass * length**2 / 3.0
    mgl = GRAVITY * (mass * length + arm_mass * length / 2.0)
    return inertia, -mgl, 0.0


FREE_BAM = ("km", "dm", "armature", "friction_base", "friction_viscous")
"""Fitted for a known servo (firmware gain and error gain known, voltage logged)."""

FREE_GENERIC = ("km", "friction_base", "friction_viscous", "lag_s")
"""Fitted for a servo of unknown firmware: km is then the stiffness [N m/rad]; back-EMF is
folded into viscous friction and armature comes with the model's inertia."""

BOUNDS = {
    "km": (1e-3, 1e3),
    "dm": (1e-5, 10.0),
    "armature": (1e-6, 0.5),
    "friction_base": (1e-5, 10.0),
    "friction_viscous": (1e-6, 10.0),
    "lag_s": (1e-3, 1.0),
}
"""Box for each parameter (fitted in log space)."""


@dataclass(frozen=True)
class ParamSpace:
    """Which of the six parameters are fitted (in log space) and the values of the others."""

    free: tuple[str, ...]
    fixed: tuple[float, ...] = (0.0,) * 6

    @property
    def idx(self) -> np.ndarray:
        """Positions of the free parameters in ``PARAM_NAMES``."""
        return np.array([PARAM_NAMES.index(f) for f in self.free])

    @property
    def lo(self) -> np.ndarray:
        """Lower bounds of theta (log)."""
        return np.log([BOUNDS[f][0] for f in self.free])

    @property
    def hi(self) -> np.ndarray:
        """Upper bounds of theta (log)."""
        return np.log([BOUNDS[f][1] for f in self.free])

    def full(self, theta: np.ndarray) -> np.ndarray:
        """theta (M, n_free) -> parameters (M, 6)."""
        th = np.atleast_2d(theta)
        p = np.tile(np.asarray(self.fixed, dtype=float), (th.shape[0], 1))
        p[:, self.idx] = np.exp(th)
        return p

    def theta(self, params: np.ndarray) -> np.ndarray:
        """parameters (M, 6) -> theta (M, n_free)."""
        return np.log(np.maximum(np.atleast_2d(params)[:, self.idx], 1e-300))


def named_params(p: np.ndarray, space: ParamSpace) -> dict[str, float]:
    """Readable parameters: BAM's names (kt, R, ...) for a known servo, else stiffness."""
    km, dm, arm, fc, fv, lag = (float(x) for x in p)
    out: dict[str, float] = {}
    if "dm" in space.free:
        kt = dm / km
        out.update({"kt": kt, "R": kt / km})
    else:
        out["stiffness_nm_per_rad"] = km
    out.update({"armature": arm, "friction_base": fc, "friction_viscous": fv})
    if "lag_s" in space.free:
        out["lag_s"] = lag
    return out


@dataclass(frozen=True)
class Drive:
    """What drives one log's joint: the firmware side.

    Attributes:
        gain: kp_fw * error_gain [duty/rad] (1 for a servo of unknown firmware).
        vin: supply voltage [V] (1 when unknown).
        max_pwm: duty limit (inf when unknown).
        known: True when the firmware law is known (BAM-style kt, R are then fitted).
        family: the servo family (``families.FAMILIES``) when its constants and motor
            boxes are known: the servo rung then fits BAM's friction families M1-M6.
        current_limit_a: the firmware's current limit [A] (None: none modelled).
        transport_delay: a delay between the logged command and the firmware is fitted
            (False for BAM's recorder, which stamps each goal when it sends it; BAM's own
            model has none).
        logged_voltage: the physical servo drives with the log's supply-voltage channel
            where it has one (False for BAM logs: BAM 1.0.2 drives with the header's
            ``vin``, and so does simgap, so that a BAM file reproduces in BAM; measured on
            the 12 XL330 logs, the logged channel gains nothing held out: selected mean
            0.052 rad either way over seeds 0-2).
    """

    gain: float = 1.0
    vin: float = 1.0
    max_pwm: float = float("inf")
    known: bool = False
    family: str | None = None
    current_limit_a: float | None = None
    transport_delay: bool = True
    logged_voltage: bool = True


def bam_drive(meta: Mapping[str, object]) -> Drive:
    """The drive of a BAM log from its header (``kp``, ``vin``, ``motor``); a motor whose
    firmware constants are unknown gets the generic drive."""
    motor = str(meta.get("motor", "")).lower()
    key = next((k for k in ERROR_GAINS if motor.startswith(k)), None)
    kp, vin = meta.get("kp"), meta.get("vin", 1.0)
    if key is None or not isinstance(kp, (int, float)) or not isinstance(vin, (int, float)):
        return Drive()
    from simgap.actuator.families import FAMILIES

    fam = FAMILIES.get(key)
    return Drive(
        gain=float(kp) * ERROR_GAINS[key],
        vin=float(vin),
        max_pwm=MAX_PWM[key],
        known=True,
        family=key if fam else None,
        current_limit_a=fam.current_limit_a if fam else None,
        transport_delay=False,
        logged_voltage=False,
    )


def rig_drive(rig: object) -> Drive | None:
    """The drive of a rig whose ``deploy.servo_model`` names a known servo family (the
    SO-101: ``sts3215``, firmware gain ``deploy.servo_p_gain``, LeRobot's 16 by default);
    None otherwise. The actuator branch uses it for every joint of such a rig."""
    from simgap.actuator.families import servo_family_for

    found = servo_family_for(rig)
    if found is None:
        return None
    fam, kp = found
    return Drive(
        gain=kp * fam.error_gain,
        vin=fam.vin_v,
        max_pwm=fam.max_pwm,
        known=True,
        family=fam.name,
        current_limit_a=fam.current_limit_a,
    )

"""The physical servo of BAM's friction families, simulated as BAM simulates it, batched.

One step of ``dt`` for N candidates on L logs (every array has shape (N, L))::

    u     = cmd(t - delay_s)              (STS3215: u moves at most max_velocity * dt a step)
    vin   = the logged supply voltage where the batch carries it (``ServoBatch.vin_t``; not
            on BAM's own logs, which BAM drives with the header's), else the header's
    duty  = clip(kp_fw * error_gain * (u - q), (kt qd +- R i_max) / vin)   (current limit:
            only where the servo family models one, ``ServoBatch.i_max``)
    duty  = clip(duty, +-max_pwm)
    tau_m = on * (kt / R * vin * duty - kt^2 / R * qd)          motor, back-EMF included
    tau_e = g_sin sin(q + q_offset) + g_cos cos(q + q_offset)   the load (pendulum)
    tau_fm = friction budget of the family (friction.py)
    stop  = (J / dt) qd + tau_m + tau_e,   J = inertia + armature
    acc   = (tau_m + tau_e - clip(stop, -tau_fm, tau_fm)) / J
    qd   += acc dt  (clipped to +-100 rad/s);   q += qd dt + acc dt^2 / 2

which is BAM 1.0.2's ``Simulator.step`` (explicit; the viscous term inside the budget), so
parameters fitted here mean in BAM what they mean here (``simgap.export.bam``). The rollout is
open loop from each log's first measured state, like BAM's ``simulate_control=True``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgap.actuator.families import ServoFamily
from simgap.actuator.friction import (
    FRICTION_BOXES,
    LOG_SCALED,
    PHYS_NAMES,
    VISCOUS_BOXES,
    FrictionFamily,
)
from simgap.actuator.servo import ServoBatch
from simgap.fit.delay import shift

MAX_SPEED_RAD_S = 100.0
"""BAM's velocity clip [rad/s]."""

CHUNK = 192
"""Candidates simulated together (bounds the delayed-command array's memory)."""

NOMINAL_FRICTION = {
    "q_offset": 0.0,
    "delay_s": 0.005,
    "friction_base": 0.05,
    "friction_viscous": 0.01,
    "friction_stribeck": 0.05,
    "dtheta_stribeck": 0.2,
    "alpha": 1.35,
    "load_friction_base": 0.05,
    "load_friction_motor": 0.05,
    "load_friction_external": 0.05,
    "load_friction_stribeck": 0.05,
    "load_friction_motor_stribeck": 0.05,
    "load_friction_external_stribeck": 0.05,
    "load_friction_motor_quad": 0.0,
    "load_friction_external_quad": 0.0,
}
"""BAM 1.0.2's default friction values (``bam/model.py``), viscous excepted (BAM's 0.1 is
above the XL330 box), and a 5 ms delay."""

DTYPE = np.float32
"""Precision of the rollout state. float32 halves the memory traffic; against float64 the
rollouts of BAM's shipped XL330 m1-m6 on the 12 logs differ by at most 8e-7 rad."""

_I = {n: i for i, n in enumerate(PHYS_NAMES)}


@dataclass(frozen=True)
class PhysicalSpace:
    """The fitted parameters of one friction family on one servo family, and their boxes.

    ``fit_delay``: the transport delay between the logged command and the firmware is
    fitted (a LeRobot loop's); False where the log stamps each command when it is sent
    (BAM's recorder: BAM's own model has no delay), and the delay is then 0.

    Candidates are searched in the unit cube (``to_unit``/``from_unit``): linear in each
    box, logarithmic for ``LOG_SCALED`` parameters.
    """

    family: FrictionFamily
    servo: ServoFamily
    fit_max_velocity: bool = False
    fit_delay: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        """Fitted parameters, BAM's names (``delay_s`` only with ``fit_delay``)."""
        extra = ("max_velocity",) if self.fit_max_velocity and self.servo.max_velocity_box else ()
        free = (
            self.family.free
            if self.fit_delay
            else tuple(n for n in self.family.free if n != "delay_s")
        )
        return free + extra

    def box(self, name: str) -> tuple[float, float]:
        """The physical box of one parameter."""
        s = self.servo
        special = {
            "kt": s.kt_box,
            "R": s.r_box,
            "armature": s.armature_box,
            "friction_viscous": VISCOUS_BOXES.get(s.name, (0.0, 0.05)),
            "max_velocity": s.max_velocity_box or (s.max_velocity_rad_s,) * 2,
        }
        return special.get(name) or FRICTION_BOXES[name]

    @property
    def lo(self) -> np.ndarray:
        """Lower bounds, shape (n,)."""
        return np.array([self.box(n)[0] for n in self.names])

    @property
    def hi(self) -> np.ndarray:
        """Upper bounds, shape (n,)."""
        return np.array([self.box(n)[1] for n in self.names])

    @property
    def _log(self) -> np.ndarray:
        return np.array([n in LOG_SCALED for n in self.names])

    def from_unit(self, z: np.ndarray) -> np.ndarray:
        """Unit-cube points (M, n) -> physical values (M, n)."""
        z = np.clip(np.atleast_2d(z), 0.0, 1.0)
        lo, hi, lg = self.lo, self.hi, self._log
        lin = lo + z * (hi - lo)
        lgv = np.exp(
            np.log(np.maximum(lo, 1e-12)) + z * (np.log(hi) - np.log(np.maximum(lo, 1e-12)))
        )
        return np.where(lg, lgv, lin)

    def to_unit(self, x: np.ndarray) -> np.ndarray:
        """Physical values (M, n) -> unit-cube points (M, n)."""
        x = np.atleast_2d(x)
        lo, hi, lg = self.lo, self.hi, self._log
        lin = (x - lo) / np.maximum(hi - lo, 1e-300)
        llo = np.log(np.maximum(lo, 1e-12))
        lgv = (np.log(np.maximum(x, 1e-12)) - llo) / np.maximum(np.log(hi) - llo, 1e-300)
        return np.clip(np.where(lg, lgv, lin), 0.0, 1.0)

    def superset(self, x: np.ndarray) -> np.ndarray:
        """Physical values (M, n) -> superset vectors (M, len(PHYS_NAMES))."""
        x = np.atleast_2d(x)
        out = np.zeros((x.shape[0], len(PHYS_NAMES)))
        out[:, _I["dtheta_stribeck"]] = 1.0
        out[:, _I["alpha"]] = 1.0
        out[:, _I["max_velocity"]] = self.servo.max_velocity_rad_s
        for j, n in enumerate(self.names):
            if n == "load_friction_base":
                out[:, _I["load_friction_motor"]] = out[:, _I["load_friction_external"]] = x[:, j]
            elif n == "load_friction_stribeck":
                out[:, _I["load_friction_motor_stribeck"]] = x[:, j]
                out[:, _I["load_friction_external_stribeck"]] = x[:, j]
            else:
                out[:, _I[n]] = x[:, j]
        return out

    def nominal_unit(self) -> np.ndarray:
        """The unit-cube point of the nominal parameters (the first CMA-ES start): the
        servo's datasheet motor (``ServoFamily.nominal``) and BAM's default friction."""
        nom = {**NOMINAL_FRICTION, **self.servo.nominal}
        x = np.array(
            [
                min(max(nom.get(n, 0.5 * sum(self.box(n))), self.box(n)[0]), self.box(n)[1])
                for n in self.names
            ]
        )
        return self.to_unit(x[None])[0]

    def penalty(self, x: np.ndarray) -> np.ndarray:
        """Cost added to physical values (M, n) whose motor leaves the datasheet's curve
        (``ServoFamily.curve_violation``, 1 rad per unit of relative excess), shape (M,)."""
        x = np.atleast_2d(x)
        col = {n: x[:, j] for j, n in enumerate(self.names)}
        return self.servo.curve_violation(
            col["kt"], col["R"], col["friction_base"], col["friction_viscous"]
        )

    def named(self, x: np.ndarray) -> dict[str, float]:
        """One physical vector (n,) -> BAM-named values."""
        return {n: float(v) for n, v in zip(self.names, np.ravel(x), strict=True)}


def simulate_physical(params: np.ndarray, batch: ServoBatch) -> np.ndarray:
    """Open-loop rollouts of N superset parameter vectors on every log.

    Args:
        params: shape (N, len(PHYS_NAMES)).
        batch: the logs (``gain`` = kp_fw x error gain, ``vin``, ``max_pwm``, the load).

    Returns:
        Simulated positions [rad], shape (N, L, T) (NaN where a candidate diverged).
    """
    p = np.atleast_2d(np.asarray(params, dtype=float))
    out = np.empty((p.shape[0], batch.n_logs, batch.cmd.shape[1]))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for s in range(0, p.shape[0], CHUNK):
            out[s : s + CHUNK] = _simulate(p[s : s + CHUNK], batch)
    return out


def _simulate(p: np.ndarray, batch: ServoBatch) -> np.ndarray:
    def col(name: str) -> np.ndarray:
        return p[:, _I[name]][:, None].astype(DTYPE)

    dt = batch.dt
    N, (L, T) = p.shape[0], batch.cmd.shape
    kt, R = col("kt"), col("R")
    cmd = shift(batch.cmd.T, p[:, _I["delay_s"]] / dt).transpose(0, 2, 1).astype(DTYPE)
    kvr = (kt / R * batch.vin[None, :] * batch.gain[None, :]).astype(DTYPE)  # N m per rad
    tmax = (kt / R * batch.vin[None, :] * batch.max_pwm[None, :]).astype(DTYPE)  # duty limit
    dm = kt * kt / R
    J = (batch.inertia[None, :] + col("armature")).astype(DTYPE)
    j_dt = J / dt
    inv_j = 1.0 / J
    gs, gc = batch.g_sin[None, :].astype(DTYPE), batch.g_cos[None, :].astype(DTYPE)
    qoff = col("q_offset")
    fb, fv = col("friction_base"), col("friction_viscous")
    fs, dth, alpha = col("friction_stribeck"), col("dtheta_stribeck"), col("alpha")
    km, ke = col("load_friction_motor"), col("load_friction_external")
    kms, kes = col("load_friction_motor_stribeck"), col("load_friction_external_stribeck")
    qm, qe = col("load_friction_motor_quad"), col("load_friction_external_quad")
    vmax = col("max_velocity") * dt
    use_load = bool(np.any(km) or np.any(ke))
    use_strib = bool(np.any(fs) or np.any(kms) or np.any(kes))
    use_quad = bool(np.any(qm) or np.any(qe))
    use_clamp = bool(np.any(np.isfinite(vmax)))
    use_cos = bool(np.any(gc))
    # the current limit as a window on the motor's drive torque kt / R vin duty:
    # dm qd +- kt i_max (the same for any supply voltage); no limit: an infinite window
    ilim = (
        None
        if batch.i_max is None
        else (kt * np.where(np.isfinite(batch.i_max), batch.i_max, np.inf)[None, :]).astype(DTYPE)
    )
    vscale = None if batch.vin_t is None else (batch.vin_t / batch.vin[:, None]).astype(DTYPE)
    q = np.broadcast_to(batch.q[:, 0][None, :], (N, L)).astype(DTYPE)
    qd = np.broadcast_to(batch.qd0[None, :], (N, L)).astype(DTYPE)
    target = q.copy()
    en = batch.enable
    out = np.empty((N, L, T))
    half_dt2 = DTYPE(0.5 * dt * dt)
    dt32 = DTYPE(dt)
    for k in range(T):
        out[:, :, k] = q
        if use_clamp:
            target = np.clip(cmd[:, :, k], target - vmax, target + vmax)
        else:
            target = cmd[:, :, k]
        on = en[None, :, k]
        emf = dm * qd
        drive_m, lim = kvr * (target - q), tmax
        if vscale is not None:
            vs = vscale[None, :, k]
            drive_m, lim = drive_m * vs, tmax * vs
        if ilim is not None:
            drive_m = np.clip(drive_m, emf - ilim, emf + ilim)
        tau_m = (np.clip(drive_m, -lim, lim) - emf) * on
        qo = q + qoff
        tau_e = gs * np.sin(qo)
        if use_cos:
            tau_e = tau_e + gc * np.cos(qo)
        aqd = np.abs(qd)
        budget = fb + fv * aqd
        if use_load:
            budget = budget + np.abs(ke * tau_e - km * tau_m)
        if use_strib:
            strib = fs + np.abs(kes * tau_e - kms * tau_m)
            if use_quad:
                opposite = np.sign(tau_e) != np.sign(tau_m)
                ae, am = np.abs(tau_e), np.abs(tau_m)
                strib = strib + opposite * ((ae < am) * qe * ae * ae + (ae > am) * qm * am * am)
            budget = budget + np.exp(-((aqd / dth) ** alpha)) * strib
        drive = tau_m + tau_e
        acc = (drive - np.clip(j_dt * qd + drive, -budget, budget)) * inv_j
        qd = np.clip(qd + acc * dt32, -MAX_SPEED_RAD_S, MAX_SPEED_RAD_S)
        q = q + qd * dt32 + acc * half_dt2
    return out

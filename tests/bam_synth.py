"""Synthetic BAM-style pendulum logs simulated with known servo parameters (test helper).

The trajectories imitate BAM's four types, written out here: ``sin_sin`` (two sines),
``lift_and_drop`` (a cubic lift to -pi/2, then torque off: a free swing), ``up_and_down``
(slow ramps and holds) and ``sin_time_square`` (a rising-frequency sine, the type the fits
never see in the generalisation test).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from simgap.actuator.families import XL330, ServoFamily
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch, pendulum_load
from simgap.series import Trajectory
from simgap.values.actuator_log import ActuatorLog

DT = 0.005
MASS, LENGTH = 0.49, 0.10


def command(kind: str, duration: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(goal positions [rad], torque enabled) of one trajectory type."""
    t = np.arange(0.0, duration, DT)
    on = np.ones(t.size, dtype=bool)
    ph = rng.uniform(0, 2 * np.pi)
    if kind == "sin_sin":
        cmd = np.sin(1.3 * t + ph) * 1.2 + np.sin(5 * t) * 0.4 * np.sin(2 * t + ph)
    elif kind == "lift_and_drop":
        s = np.clip(t / (0.4 * duration), 0, 1)
        cmd = -np.pi / 2 * (3 * s**2 - 2 * s**3)
        on = t < 0.45 * duration
    elif kind == "up_and_down":
        s = np.clip(t / (0.3 * duration), 0, 1)
        back = np.clip((t - 0.55 * duration) / (0.3 * duration), 0, 1)
        cmd = np.pi / 2 * (3 * s**2 - 2 * s**3) - 0.2 * np.pi / 2 * (3 * back**2 - 2 * back**3)
    elif kind == "sin_time_square":
        cmd = 0.8 * np.sin((1.5 * t) ** 2 + ph)
    else:
        raise ValueError(kind)
    return cmd, on


def make_logs(
    values: dict[str, float],
    family: str,
    specs: list[tuple[str, float]],
    seed: int,
    duration: float = 3.0,
    noise_rad: float = 0.0,
    servo: ServoFamily = XL330,
) -> list[ActuatorLog]:
    """Logs of ``specs`` [(type, kp)] simulated with BAM-named ``values`` of ``family``
    (and the servo's firmware current limit, as the fits simulate it), quantised to one
    encoder count, plus optional Gaussian noise."""
    from simgap.actuator.friction import friction_family

    rng = np.random.default_rng(seed)
    sp = PhysicalSpace(friction_family(family), servo)
    x = np.array([[values[n] for n in sp.names]])
    cmds, ens = zip(*(command(k, duration, rng) for k, _ in specs), strict=True)
    c, e = np.array(cmds), np.array(ens)
    L, T = c.shape
    inertia, g_sin, g_cos = pendulum_load(MASS, LENGTH)
    batch = ServoBatch(
        dt=DT,
        cmd=c,
        q=np.repeat(c[:, :1], T, axis=1),
        mask=np.ones((L, T)),
        enable=e,
        qd0=np.zeros(L),
        gain=np.array([kp * servo.error_gain for _, kp in specs]),
        vin=np.full(L, servo.vin_v),
        max_pwm=np.full(L, servo.max_pwm),
        tau_max=np.full(L, np.inf),
        inertia=np.full(L, inertia),
        g_sin=np.full(L, g_sin),
        g_cos=np.full(L, g_cos),
        i_max=None if servo.current_limit_a is None else np.full(L, servo.current_limit_a),
    )
    q = simulate_physical(sp.superset(x), batch)[0]
    q = np.round(q / servo.encoder_rad) * servo.encoder_rad + rng.normal(0, noise_rad, q.shape)
    out = []
    for i, (kind, kp) in enumerate(specs):
        meta = {
            "mass": MASS,
            "arm_mass": 0.0,
            "length": LENGTH,
            "kp": float(kp),
            "vin": servo.vin_v,
            "motor": servo.name,
            "trajectory": kind,
            "format": "bam",
        }
        traj = Trajectory(
            t=np.arange(T) * DT,
            q_cmd=c[i][:, None],
            q=q[i][:, None],
            qd=np.gradient(q[i], DT)[:, None],
            joint_names=(servo.name,),
            source=f"synthetic_{kind}_{kp:g}_{i}.json",
            meta=meta,
        )
        out.append(
            ActuatorLog(
                traj=traj, torque_enable=e[i][:, None], dt=DT, resampling={"resampled": False}
            )
        )
    return out


def write_sine_log(path: Path, motor: str, n: int = 500) -> Path:
    """A BAM log file of ``n`` samples (two sines, the position a 2-sample lagged 0.95 x
    the goal) for ``motor``: input for readers and writers, not a simulated servo."""
    t = np.arange(n) * DT
    goal = 0.5 * np.sin(2 * np.pi * 1.3 * t) + 0.3 * np.sin(2 * np.pi * 3.1 * t)
    pos = np.concatenate([[0.0, 0.0], goal[:-2]]) * 0.95
    entries = [
        {
            "timestamp": float(t[i]),
            "position": float(pos[i]),
            "speed": 0.0,
            "goal_position": float(goal[i]),
            "torque_enable": True,
            "load": 10,
        }
        for i in range(n)
    ]
    path.write_text(
        json.dumps(
            {
                "mass": MASS,
                "length": LENGTH,
                "kp": 200,
                "vin": 7.4,
                "motor": motor,
                "trajectory": "sin_sin",
                "entries": entries,
            }
        )
    )
    return path

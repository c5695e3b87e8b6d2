"""A MuJoCo servo twin: one pendulum hinge driven by a position actuator with a first-order
lag (``dyntype="filter"``) and a command transport delay, for synthetic actuator logs with
known parameters (tests, the benchmark, the docs example)."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np


@dataclass(frozen=True)
class TwinParams:
    """Known actuator parameters of the twin.

    Attributes:
        kp: position gain [N m/rad].
        lag_s: time constant of the actuator's filter [s].
        delay_steps: command transport delay [physics steps].
        frictionloss: Coulomb friction [N m].
        damping: viscous friction [N m s/rad].
        armature: rotor inertia [kg m^2].
        mass: tip mass [kg] at ``length`` [m] below the hinge (0 rad hangs down).
        length: pendulum length [m].
        dt: physics step [s].
    """

    kp: float = 4.0
    lag_s: float = 0.04
    delay_steps: int = 10
    frictionloss: float = 0.03
    damping: float = 0.05
    armature: float = 0.002
    mass: float = 0.3
    length: float = 0.1
    dt: float = 0.002


def twin_xml(p: TwinParams) -> str:
    """MJCF of the twin."""
    return f"""<mujoco model="servo_twin">
  <compiler angle="radian"/>
  <option timestep="{p.dt}" integrator="implicitfast"/>
  <worldbody>
    <body name="arm">
      <joint name="servo" type="hinge" axis="0 1 0" damping="{p.damping}"
             frictionloss="{p.frictionloss}" armature="{p.armature}" range="-3 3"
             solreffriction="{2 * p.dt} 1"/>
      <geom type="sphere" size="0.005" pos="0 0 -{p.length}" mass="{p.mass}"/>
    </body>
  </worldbody>
  <actuator>
    <general name="servo" joint="servo" dyntype="filter" dynprm="{p.lag_s}" gaintype="fixed"
             gainprm="{p.kp}" biastype="affine" biasprm="0 -{p.kp} 0"/>
  </actuator>
</mujoco>"""


def run_twin(p: TwinParams, cmd: np.ndarray, q0: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Drive the twin with ``cmd`` [rad] (one value per physics step).

    Returns:
        (measured position [rad], measured velocity [rad/s]), each shape (T,), recorded
        before each step.
    """
    m = mujoco.MjModel.from_xml_string(twin_xml(p))
    d = mujoco.MjData(m)
    d.qpos[0] = q0
    d.act[0] = q0
    mujoco.mj_forward(m, d)
    n = cmd.size
    q, qd = np.empty(n), np.empty(n)
    for k in range(n):
        q[k], qd[k] = d.qpos[0], d.qvel[0]
        d.ctrl[0] = cmd[max(0, k - p.delay_steps)] if k >= p.delay_steps else cmd[0]
        mujoco.mj_step(m, d)
    return q, qd

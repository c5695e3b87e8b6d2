"""Known delay, lag, gain and friction on a MuJoCo joint are recovered by the ladder."""

from __future__ import annotations

import numpy as np
import pytest

from simgap.actuator.ladder import JointResult, LadderConfig, fit_joint
from simgap.actuator.servo import Drive
from simgap.series import Trajectory
from simgap.sim.load import joint_load
from simgap.sim.servo_twin import TwinParams, run_twin, twin_xml
from simgap.values.actuator_log import ActuatorLog

pytestmark = pytest.mark.slow  # one ladder fit (~10 s on 2 cores), shared by the tests

TRUE = TwinParams(kp=4.0, lag_s=0.04, delay_steps=10, frictionloss=0.03, damping=0.05)


def _logs(p: TwinParams) -> list[ActuatorLog]:
    logs = []
    for i in range(2):
        t = np.arange(0, 4, p.dt)
        f0, f1 = 1.0, 8.0
        phase = 2 * np.pi * (f0 * t + (f1 - f0) / (2 * t[-1]) * t**2)
        cmd = 0.4 * np.sin(phase + i) * np.minimum(t / 0.5, 1) + 0.5 * np.sin(
            2 * np.pi * 0.3 * t + i
        )
        q, qd = run_twin(p, cmd)
        tr = Trajectory(t=t, q_cmd=cmd, q=q, qd=qd, joint_names=("servo",), source=f"syn{i}")
        logs.append(ActuatorLog(traj=tr, torque_enable=np.ones((t.size, 1), bool), dt=p.dt))
    return logs


@pytest.fixture(scope="module")
def fitted() -> JointResult:
    import mujoco

    logs = _logs(TRUE)
    load = joint_load(mujoco.MjModel.from_xml_string(twin_xml(TRUE)), "servo")
    return fit_joint(
        logs,
        "servo",
        [load] * 2,
        [Drive()] * 2,
        LadderConfig(noise_floor_rad=2 * np.pi / 4096, use_net=False),
    )


def test_load_helper_matches_closed_form() -> None:
    import mujoco

    load = joint_load(mujoco.MjModel.from_xml_string(twin_xml(TRUE)), "servo")
    # point mass m at l plus armature (the 5 mm sphere adds 2/5 m r^2)
    inertia = TRUE.mass * TRUE.length**2 + TRUE.armature + 0.4 * TRUE.mass * 0.005**2
    assert load.inertia == pytest.approx(inertia, rel=1e-6)
    assert load.g_sin == pytest.approx(-9.81 * TRUE.mass * TRUE.length, rel=1e-6)
    assert abs(load.g_cos) < 1e-9


def test_parameters_recovered(fitted: JointResult) -> None:
    servo = fitted.rung("servo").params
    assert servo["stiffness_nm_per_rad"] == pytest.approx(TRUE.kp, rel=0.05)
    assert servo["lag_s"] == pytest.approx(TRUE.lag_s, rel=0.05)
    assert servo["friction_base"] == pytest.approx(TRUE.frictionloss, rel=0.05)
    assert servo["friction_viscous"] == pytest.approx(TRUE.damping, rel=0.05)
    assert abs(servo["delay_s"] - TRUE.delay_steps * TRUE.dt) <= TRUE.dt


def test_ladder_climbs_and_reports_every_rung(fitted: JointResult) -> None:
    names = [r.model for r in fitted.rungs]
    assert names[:3] == ["ideal", "delay_lag", "servo"]
    assert fitted.selected == "servo"
    ideal, servo = fitted.rung("ideal"), fitted.rung("servo")
    assert servo.validation_mae_rad < 0.1 * ideal.validation_mae_rad
    for r in fitted.rungs:
        assert np.isfinite(r.train_mae_rad) and np.isfinite(r.validation_mae_rad)

"""What BAM computes with simgap's file, stated by simgap: BAM's resampling grid, the
XL330 current limit BAM 1.0.2 simulates, no transport delay on BAM's own logs, and the
``in_bam`` figures of an export. (``tests/bam_real`` checks the same against BAM 1.0.2.)"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.families import STS3215, XL330
from simgap.actuator.family_fit import per_log_mae
from simgap.actuator.friction import friction_family
from simgap.actuator.in_bam import BAM_CURRENT_LIMIT_A, as_bam_simulates, bam_prediction, in_bam
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch, bam_drive, pendulum_load
from simgap.evidence.bam import read_bam_log
from simgap.export.bam import bam_params_json
from tests.test_actuator_friction import TRUTH


def _raw_log(path: Path, t: np.ndarray) -> Path:
    entries = [
        {
            "timestamp": float(a),
            "position": float(np.sin(a)),
            "speed": float(np.cos(a)),
            "goal_position": float(2 * a),
            "torque_enable": bool(a < 2.0),
            "input_volts": 7.0 + a,
        }
        for a in t
    ]
    path.write_text(
        json.dumps(
            {
                "mass": 0.5,
                "length": 0.1,
                "kp": 400,
                "vin": 7.4,
                "motor": "xl330",
                "trajectory": "x",
                "entries": entries,
            }
        )
    )
    return path


def test_bam_logs_are_read_on_bams_grid_from_the_trajectorys_start(tmp_path: Path) -> None:
    # BAM's recorder stamps samples a few ms after the trajectory starts, irregularly
    rng = np.random.default_rng(0)
    t = 0.0035 + np.r_[0.0, np.cumsum(rng.uniform(0.004, 0.007, 700))]
    lg = read_bam_log(_raw_log(tmp_path / "a.json", t))
    grid = np.arange(0.0, t[-1], 0.005)  # bam/process.py's grid
    assert lg.traj.t == pytest.approx(grid)
    # linear between the raw samples around each grid time, extrapolated before the first
    want = 2 * grid
    np.testing.assert_allclose(lg.traj.q_cmd[:, 0], want, atol=1e-12)
    np.testing.assert_allclose(lg.vin, 7.0 + grid, atol=1e-12)
    inside = (grid > t[0]) & (grid < t[-1])
    assert np.abs(lg.traj.q[inside, 0] - np.sin(grid[inside])).max() < 1e-4
    # the interpolated enable flag is on strictly above one half, as BAM thresholds it
    assert lg.torque_enable[grid < 1.99, 0].all() and not lg.torque_enable[grid > 2.01, 0].any()


def test_a_clock_that_does_not_start_at_zero_is_gridded_from_its_first_sample(
    tmp_path: Path,
) -> None:
    t = 100.0 + np.arange(0.0, 3.0, 0.0051)
    lg = read_bam_log(_raw_log(tmp_path / "b.json", t))
    assert lg.traj.t[0] == 0.0 and lg.traj.q_cmd[0, 0] == pytest.approx(200.0)
    assert "first sample" in lg.resampling["grid"]


def _stall_batch(i_max: float | None) -> ServoBatch:
    """The XL330 held far from its goal (the duty saturates), torque on, at rest."""
    inertia, gs, gc = pendulum_load(0.49, 0.1)
    T = 3
    return ServoBatch(
        dt=0.005,
        cmd=np.full((1, T), 1.5),
        q=np.zeros((1, T)),
        mask=np.ones((1, T)),
        enable=np.ones((1, T), bool),
        qd0=np.zeros(1),
        gain=np.full(1, 800 * XL330.error_gain),
        vin=np.full(1, 7.4),
        max_pwm=np.ones(1),
        tau_max=np.full(1, np.inf),
        inertia=np.full(1, inertia + 1.0),
        g_sin=np.zeros(1),
        g_cos=np.zeros(1),
        i_max=None if i_max is None else np.full(1, i_max),
    )


def test_the_current_limit_caps_the_stall_torque_at_kt_i_max() -> None:
    sp = PhysicalSpace(friction_family("m1"), XL330)
    vals = {**TRUTH, "q_offset": 0.0, "delay_s": 0.0, "friction_base": 0.0, "friction_viscous": 0.0}
    x = np.array([[vals[n] for n in sp.names]])
    J = float(_stall_batch(None).inertia[0] + vals["armature"])

    def first_acc(b: ServoBatch) -> float:  # from rest, BAM's step: q(dt) = 1.5 acc dt^2
        return float(simulate_physical(sp.superset(x), b)[0, 0, 1] / (1.5 * 0.005**2))

    free, capped = first_acc(_stall_batch(None)), first_acc(_stall_batch(1.0))
    assert free * J == pytest.approx(vals["kt"] / vals["R"] * 7.4, rel=1e-5)  # duty 1
    assert capped * J == pytest.approx(vals["kt"] * 1.0, rel=1e-5)  # kt i_max
    assert first_acc(_stall_batch(100.0)) == pytest.approx(free, rel=1e-6)  # not reached


def test_bam_logs_fit_no_transport_delay_and_export_only_bam_keys() -> None:
    drive = bam_drive({"motor": "xl330", "kp": 400, "vin": 7.4})
    assert drive.transport_delay is False and drive.family == "xl330"
    assert drive.logged_voltage is False and drive.current_limit_a == 1.75
    sp = PhysicalSpace(friction_family("m3"), XL330, fit_delay=False)
    assert "delay_s" not in sp.names
    data = bam_params_json("m3", "xl330", {n: TRUTH[n] for n in sp.names})
    assert "command_delay" not in data and data["model"] == "m3"
    with_delay = bam_params_json(
        "m3", "xl330", {n: TRUTH[n] for n in PhysicalSpace(friction_family("m3"), XL330).names}
    )
    assert with_delay["command_delay"] == TRUTH["delay_s"]


def _logs_batch(servo_vin_t: bool) -> ServoBatch:
    from simgap.actuator.ladder import build_batch
    from simgap.values.load import JointLoad
    from tests.bam_synth import make_logs

    logs = make_logs(
        {**TRUTH, "delay_s": 0.0},
        "m3",
        [("sin_sin", 400), ("lift_and_drop", 800)],
        seed=1,
        duration=2.0,
    )
    b = build_batch(
        logs, 0, [JointLoad(*pendulum_load(0.49, 0.1))] * 2, [bam_drive(lg.meta) for lg in logs]
    )
    assert b.vin_t is None  # BAM logs drive with the header's voltage, as BAM does
    # a simgap that drove with a logged 6.5 V channel instead
    return dataclasses.replace(b, vin_t=np.full(b.cmd.shape, 6.5)) if servo_vin_t else b


def test_in_bam_states_what_bam_computes_and_why_it_differs() -> None:
    b = _logs_batch(servo_vin_t=True)
    assert b.i_max is not None and np.all(b.i_max == 1.75) and XL330.current_limit_a == 1.75
    sp = PhysicalSpace(friction_family("m3"), XL330)
    x = np.array([{**TRUTH, "delay_s": 0.02}[n] for n in sp.names])
    own = float(per_log_mae(simulate_physical(sp.superset(x[None]), b)[0], b).mean())
    got = in_bam(sp, x, b, np.ones(2, bool), own)
    assert got["simgap_train_mae_rad"] == own
    assert len(got["differences"]) == 2  # the delay and the voltage: the limit is BAM's
    b = dataclasses.replace(b, i_max=None)  # a simgap without the limit: three
    assert len(in_bam(sp, x, b, np.ones(2, bool), own)["differences"]) == 3
    # BAM's prediction is simgap's with the header's voltage, BAM's limit and no delay
    bb = dataclasses.replace(b, vin_t=None, i_max=np.full(2, BAM_CURRENT_LIMIT_A["xl330"]))
    x0 = x.copy()
    x0[sp.names.index("delay_s")] = 0.0
    np.testing.assert_array_equal(
        bam_prediction(sp, x, b), simulate_physical(sp.superset(x0[None]), bb)[0]
    )
    assert got["train_mae_rad"] != pytest.approx(own, abs=1e-4)


def test_a_servo_bam_simulates_as_simgap_does_states_no_difference() -> None:
    b = dataclasses.replace(_logs_batch(servo_vin_t=False), i_max=None)
    sp = PhysicalSpace(friction_family("m1"), STS3215, fit_delay=False)
    x = np.array([{**TRUTH, "kt": 0.8, "R": 2.7}[n] for n in sp.names])
    own = float(per_log_mae(simulate_physical(sp.superset(x[None]), b)[0], b).mean())
    got = in_bam(sp, x, b, np.ones(2, bool), own)
    assert got["differences"] == [] and "sts3215" not in BAM_CURRENT_LIMIT_A
    assert got["train_mae_rad"] == pytest.approx(own, abs=1e-12)
    assert as_bam_simulates(b, "sts3215").i_max is None

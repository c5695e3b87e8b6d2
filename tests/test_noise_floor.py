"""One noise floor for the one actuator verdict: the joint identification holds its RMS
replay residuals, the actuator ladder its held-out MAE, against the floor of one routine
(``simgap.actuator.noise_floor.instrument_floor``), each in its own metric."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.ladder import LADDER_FLOOR_COUNTS, ladder_floor_rad, log_floors
from simgap.actuator.noise_floor import MAE_PER_RMS, NoiseFloor, noise_floor
from simgap.fit.verdict import least_residual
from simgap.series import Trajectory
from simgap.values.actuator_log import ActuatorLog

COUNT = 2 * math.pi / 4096
JITTER_S = 0.004


def _actuator_log(
    t: np.ndarray, cmd: np.ndarray, q: np.ndarray, joints: tuple[str, ...]
) -> ActuatorLog:
    return ActuatorLog(
        traj=Trajectory(t=t, q_cmd=cmd, q=q, joint_names=joints, source="test"),
        torque_enable=np.ones(q.shape, dtype=bool),
        dt=float(np.median(np.diff(t))),
    )


def test_the_metrics_convert_by_the_stated_rule() -> None:
    quant = NoiseFloor(count_rad=COUNT)
    assert quant.rms_rad == pytest.approx(COUNT / math.sqrt(12), rel=1e-12)
    assert quant.mae_rad == pytest.approx(COUNT / 4, rel=1e-12)  # a uniform rounding's MAE
    parts = NoiseFloor(count_rad=COUNT, sampling_rad=3e-4, start_state_rad=2e-4, model_rad=1e-3)
    assert parts.total_rad == pytest.approx(math.sqrt(COUNT**2 / 12 + 9e-8 + 4e-8), rel=1e-12)
    assert parts.rms_rad == pytest.approx(math.hypot(parts.total_rad, 1e-3), rel=1e-12)
    assert parts.mae_rad == pytest.approx(parts.rms_rad * math.sqrt(3) / 2, rel=1e-12)
    # the ladder never holds an ideal actuator tighter than one count (ladder.LADDER_FLOOR_COUNTS)
    assert ladder_floor_rad(quant) == LADDER_FLOOR_COUNTS * COUNT
    assert ladder_floor_rad(replace(quant, jitter_rad=0.01)) == pytest.approx(
        math.hypot(COUNT / math.sqrt(12), 0.01) * MAE_PER_RMS, rel=1e-12
    )


def test_both_verdicts_read_their_floor_from_one_routine(shared_data: Path) -> None:
    """The same recording gives the joint identification and the ladder the same floor:
    the same quantisation, sampling and jitter (to rounding); the identification adds its
    replay's start state and model floor, and states it in RMS; the ladder states it in MAE."""
    import simgap.actuator.joint_id as jid
    from simgap.demo.factory import JOINTS
    from simgap.sim.replay import ReplayLog

    rng = np.random.default_rng(5)
    k = np.arange(90)
    t = k / 30.0 + rng.uniform(-2e-3, 2e-3, k.size)  # a recorder's irregular clock
    cmd = 0.3 * np.sin(2 * np.pi * 0.7 * t[:, None] + rng.uniform(0, 6, len(JOINTS)))
    q = np.round(np.roll(cmd, 2, axis=0) / COUNT) * COUNT  # read two frames late, in counts
    log = ReplayLog(t=t, commands=cmd, joints=JOINTS, q0=q[0], hold_before=cmd[0])
    problem = jid.JointProblem(shared_data / "so101" / "so101.xml", JOINTS, [log], [q], ())
    try:
        ident = noise_floor(problem, COUNT, JITTER_S)
    finally:
        problem.close()
    ladder = log_floors([_actuator_log(t, cmd, q, tuple(JOINTS))], COUNT, JITTER_S)
    assert list(ident) == list(ladder) == list(JOINTS)
    for j in JOINTS:
        got, lf = ident[j], ladder[j]
        for part in ("quantisation_rad", "sampling_rad", "jitter_rad"):
            assert got[part] == pytest.approx(getattr(lf, part), rel=1e-12), (j, part)
        # parts that are measured, not zeros compared with zeros
        assert lf.sampling_rad > 0.1 * lf.quantisation_rad and lf.jitter_rad > 0.0
        assert lf.start_state_rad == 0.0  # the ladder's null replays no model
        whole = replace(lf, start_state_rad=got["start_state_rad"], model_rad=2e-3)
        assert got["total_rad"] == pytest.approx(whole.total_rad, rel=1e-12)
        # the identification's RMS floor (joint_dynamics: least_residual of its parts)
        assert least_residual({**got, "model_rad": 2e-3}) == pytest.approx(whole.rms_rad, rel=1e-12)
        # the ladder's MAE floor: the same floor by the stated conversion, at least a count
        assert lf.mae_rad == pytest.approx(lf.rms_rad * MAE_PER_RMS, rel=1e-12)
        assert ladder_floor_rad(lf) == max(COUNT, lf.mae_rad)


def test_the_ladder_holds_each_joint_against_the_routines_floor(tmp_path: Path) -> None:
    """A rig that states its reads' jitter lifts the ladder's floor above one count, as it
    lifts the identification's; without it the ladder holds one count, as before."""
    from simgap.branches.actuator import analyse
    from simgap.rig.model import JointMap, Rig

    t = np.arange(0, 2, 0.01)
    logs = []
    for f in (1.0, 2.0):
        cmd = 0.3 * np.sin(2 * np.pi * f * t)[:, None]
        q = np.round(cmd / COUNT) * COUNT  # an ideal servo, read in counts
        logs.append(_actuator_log(t, cmd, q, ("a",)))
    plain, _ = analyse(logs, use_net=False)
    assert plain["noise_floor_rad"] == COUNT
    assert plain["joints"]["a"]["verdict"] == "eliminated"
    rig = Rig(
        name="jittery",
        model_path=tmp_path / "no_model.xml",
        joints=(JointMap(name="a", recorded="a", unit="rad"),),
        control_dt_s=0.01,
        encoder_rad=COUNT,
        clock_jitter_s=0.05,
    )
    jittery, _ = analyse(logs, rig=rig, use_net=False)
    want = ladder_floor_rad(log_floors(logs, COUNT, 0.05)["a"])
    assert jittery["noise_floor_rad"] == want > 3 * COUNT
    assert "held at no less than 1 count" in jittery["noise_floor_source"]

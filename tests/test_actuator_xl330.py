"""The 12 real XL330 BAM logs held out by trajectory type: the ladder climbs past delay+lag,
the servo rung fits BAM's friction families inside their physical boxes, and each held-out
type is scored; the families are compared with BAM's shipped XL330 parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.families import XL330
from simgap.actuator.family_fit import per_log_mae
from simgap.actuator.ladder import build_batch
from simgap.actuator.physical import simulate_physical
from simgap.actuator.servo import bam_drive, pendulum_load
from simgap.branches.actuator import analyse
from simgap.evidence.bam import read_bam_log
from simgap.export.bam import load_bam_params, space_and_values
from simgap.values.load import JointLoad

pytestmark = pytest.mark.slow  # every family on 8 folds of 12 real logs (~2 min on 2 cores)

TYPES = ("lift_and_drop", "sin_sin", "up_and_down")


def test_xl330_ladder_leave_one_type_out(shared_data: Path) -> None:
    paths = sorted((shared_data / "bam_xl330" / "raw").glob("*.json"))
    assert len(paths) == 12
    logs = [read_bam_log(p) for p in paths]
    out, results = analyse(logs, use_net=False)
    res = results["xl330"]
    assert res.held_out == "leave-one-trajectory-type-out"
    j = out["joints"]["xl330"]
    rungs = {r["model"]: r for r in j["rungs"]}
    # goal-as-prediction, computed independently of the ladder: mean over logs of MAE
    naive = np.mean([np.mean(np.abs(lg.traj.q_cmd - lg.traj.q)) for lg in logs])
    assert rungs["ideal"]["validation_mae_rad"] == pytest.approx(naive, rel=1e-9)
    assert 0.3 < rungs["delay_lag"]["validation_mae_rad"] < 0.6  # delay+lag is not enough
    servo = rungs["servo"]
    assert j["selected"] == "servo" and out["verdict"] == "implicated"
    assert set(servo["held_out_by_group_rad"]) == set(TYPES)
    assert max(servo["held_out_by_group_rad"].values()) < 0.12  # every unseen type
    assert servo["validation_mae_rad"] < 0.09 and "gain_out_mae_rad" in servo
    p = servo["params"]
    assert XL330.r_box[0] <= p["R"] <= XL330.r_box[1]  # never 15 ohm again
    assert p["kt"] ** 2 / p["R"] < 0.06
    assert set(servo["families"]) == {"m1", "m2", "m3", "m4", "m5", "m6"}
    # the free swings of lift_and_drop pin the armature against a latency
    prof = servo["armature_profile"]
    assert prof["torque_off_in_training"] and prof["reason"] == ""
    assert min(q["rise_rad"] for q in prof["probes"]) > 0.0015
    # BAM's shipped M3 on the same logs by the same simulator
    loads = [JointLoad(*pendulum_load(0.49, 0.1))] * 12
    batch = build_batch(logs, 0, loads, [bam_drive(lg.meta) for lg in logs])
    sp, x = space_and_values(load_bam_params(shared_data / "bam_params" / "xl330" / "m3.json"))
    bam = per_log_mae(simulate_physical(sp.superset(x[None]), batch)[0], batch)
    assert 0.04 < bam.mean() < 0.12

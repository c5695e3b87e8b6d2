"""The 12 real XL330 BAM logs, leave-one-trajectory-out: the ladder climbs past delay+lag
and the servo rung reaches at most 0.08 rad held-out (BAM's shipped M1: 0.082)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.branches.actuator import analyse
from simgap.evidence.bam import read_bam_log

pytestmark = pytest.mark.slow  # the whole LOTO ladder on 12 real logs (~15-30 s on 2 cores)


def test_xl330_ladder_loto(shared_data: Path) -> None:
    paths = sorted((shared_data / "bam_xl330" / "raw").glob("*.json"))
    assert len(paths) == 12
    logs = [read_bam_log(p) for p in paths]
    out, results = analyse(logs, use_net=False)
    j = out["joints"]["xl330"]
    rungs = {r["model"]: r for r in j["rungs"]}
    # goal-as-prediction, computed independently of the ladder: mean over logs of MAE
    naive = np.mean([np.mean(np.abs(lg.traj.q_cmd - lg.traj.q)) for lg in logs])
    assert rungs["ideal"]["validation_mae_rad"] == pytest.approx(naive, rel=1e-9)
    assert 0.3 < rungs["delay_lag"]["validation_mae_rad"] < 0.6  # delay+lag is not enough
    assert rungs["servo"]["validation_mae_rad"] <= 0.08
    assert j["selected"] == "servo"
    assert out["verdict"] == "implicated"
    assert out["noise_floor_rad"] == pytest.approx(2 * np.pi / 4096)
    # one parameter set across the four firmware gains: every held-out log under 0.2 rad
    assert max(rungs["servo"]["validation_per_log_rad"]) < 0.2

"""BAM's parameter format: simgap's fit written, read back, and simulated again gives the
same prediction; BAM's shipped files load; a broken file is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.families import XL330
from simgap.actuator.family_fit import fit_families, per_log_mae
from simgap.actuator.ladder import build_batch
from simgap.actuator.physical import simulate_physical
from simgap.actuator.servo import bam_drive, pendulum_load
from simgap.errors import InputError
from simgap.export.bam import (
    load_bam_params,
    space_and_values,
    write_bam_params,
)
from simgap.fit import cma_es as cma_fit
from simgap.values.load import JointLoad
from tests.bam_synth import make_logs
from tests.test_actuator_friction import TRUTH

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bam_params"


@pytest.mark.parametrize("family", ["m1", "m4"])
def test_round_trip_reproduces_simgaps_prediction(tmp_path: Path, family: str) -> None:
    specs = [("sin_sin", 400), ("lift_and_drop", 400), ("up_and_down", 800)]
    logs = make_logs(TRUTH, "m4", specs, seed=2, duration=2.0)
    batch = build_batch(
        logs, 0, [JointLoad(*pendulum_load(0.49, 0.1))] * 3, [bam_drive(lg.meta) for lg in logs]
    )
    fit = fit_families(
        batch,
        np.ones((1, 3), dtype=bool),
        XL330,
        0,
        [family],
        cma_fit.CmaSettings(evaluations=60),
        polish_iters=0,
    )[family]
    own = per_log_mae(fit.pred[0], batch)
    path = write_bam_params(
        tmp_path / f"{family}.json", family, "xl330", fit.params(0), {"fit": "test"}
    )
    raw = json.loads(path.read_text())
    assert raw["model"] == family and raw["actuator"] == "xl330"
    assert "command_delay" in raw and "delay_s" not in raw  # BAM's own name
    if family == "m4":
        assert {"load_friction_base", "load_friction_stribeck", "dtheta_stribeck"} <= set(raw)
    sp, x = space_and_values(load_bam_params(path))
    again = per_log_mae(simulate_physical(sp.superset(x[None]), batch)[0], batch)
    assert np.abs(again - own).max() < 1e-3
    assert abs(again.mean() - own.mean()) < 1e-3


def test_bam_shipped_files_load() -> None:
    if not DATA.is_dir():
        pytest.skip("../shared/data/bam_params is absent")
    for m in ("m1", "m2", "m3", "m4", "m5", "m6"):
        sp, x = space_and_values(load_bam_params(DATA / "xl330" / f"{m}.json"))
        assert sp.family.name == m and np.all(np.isfinite(x))
    sp, x = space_and_values(load_bam_params(DATA / "feetech_sts3215_7_4V" / "m1.json"))
    assert sp.servo.name == "sts3215"
    assert x[sp.names.index("kt")] == pytest.approx(1.21164, rel=1e-4)


def test_broken_bam_file_names_the_key(tmp_path: Path) -> None:
    p = tmp_path / "m3.json"
    p.write_text(json.dumps({"model": "m3", "actuator": "xl330", "kt": 0.4, "R": 3.0}))
    with pytest.raises(InputError, match="armature"):
        load_bam_params(p)
    p.write_text(json.dumps({"kt": 0.4}))
    with pytest.raises(InputError, match="model"):
        load_bam_params(p)
    p.write_text(json.dumps({"model": "m9", "actuator": "xl330"}))
    with pytest.raises(InputError, match="m1"):
        load_bam_params(p)

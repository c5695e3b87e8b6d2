"""simgap's BAM reading, simulator and parameter files against BAM 1.0.2 itself.

- The samples: ``simgap.evidence.bam.read_bam_log`` gives exactly the samples BAM's own
  processing (``python -m bam.process``) writes for the 12 shared XL330 logs.
- The simulator: ``simgap.actuator.physical`` run on them with BAM's shipped XL330 m1-m6
  predicts what BAM's ``Simulator.rollout_log(simulate_control=True)`` predicts, step by
  step, with BAM 1.0.2's XL330 current limit and without it; and the STS3215 (the SO-101's
  servo, BAM's shipped m1) likewise on a log written for the test.
- The parameter file: a fit on the real logs, written by the ladder's own export
  (``export.bam.joint_bam_json``), loads with ``bam.model.load_model``: every key simgap
  writes as a BAM parameter is one BAM loads, and BAM's MAE with it on every training log
  is the one the file's ``simgap.in_bam`` states, which is simgap's own.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

bam_model = pytest.importorskip(
    "bam.model",
    reason="BAM (better-actuator-models 1.0.2) is "
    "not installed: .ci/run installs it in its Python 3.12 venv",
)
from bam import simulate  # noqa: E402
from bam.logs import Logs  # noqa: E402

from simgap.actuator.in_bam import BAM_CURRENT_LIMIT_A, as_bam_simulates  # noqa: E402
from simgap.actuator.ladder import build_batch, fit_joint  # noqa: E402
from simgap.actuator.physical import simulate_physical  # noqa: E402
from simgap.actuator.rungs import LadderConfig  # noqa: E402
from simgap.actuator.servo import bam_drive, pendulum_load  # noqa: E402
from simgap.evidence.bam import read_bam_log  # noqa: E402
from simgap.export.bam import joint_bam_json, load_bam_params, space_and_values  # noqa: E402
from simgap.values.load import JointLoad  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
RAW = DATA / "bam_xl330" / "raw"
FAMILIES = ("m1", "m2", "m3", "m4", "m5", "m6")


def test_the_release() -> None:
    assert importlib.metadata.version("better-actuator-models") == "1.0.2"


def _process(raw: Path, out: Path) -> dict[str, dict[str, Any]]:
    """BAM's own processing of every log of ``raw`` (its script, 200 Hz), read back by its
    own loader: file name -> log."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bam.process",
            "--raw",
            str(raw),
            "--logdir",
            str(out),
            "--dt",
            "0.005",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return {Path(lg["filename"]).name: lg for lg in Logs(str(out)).logs}


def _bam_rollout(model: Any, log: dict[str, Any]) -> np.ndarray:
    sim = simulate.Simulator(model)
    pos, _, _ = sim.rollout_log(log, simulate_control=True)
    return np.array(pos, dtype=float)


@pytest.fixture(scope="module")
def xl330(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not RAW.is_dir():
        pytest.skip(f"the shared XL330 logs are absent ({RAW})")
    paths = sorted(RAW.glob("*.json"))
    processed = _process(RAW, tmp_path_factory.mktemp("bam_processed"))
    logs = [read_bam_log(p) for p in paths]
    loads = [
        JointLoad(
            *pendulum_load(
                float(lg.meta["mass"]),  # type: ignore[arg-type]
                float(lg.meta["length"]),  # type: ignore[arg-type]
                float(lg.meta["arm_mass"]),
            )
        )  # type: ignore[arg-type]
        for lg in logs
    ]
    drives = [bam_drive(lg.meta) for lg in logs]
    return {
        "paths": paths,
        "processed": [processed[p.name] for p in paths],
        "logs": logs,
        "loads": loads,
        "drives": drives,
        "batch": build_batch(logs, 0, loads, drives),
    }


def test_simgap_reads_the_samples_bams_processing_writes(xl330: dict[str, Any]) -> None:
    for lg, pl in zip(xl330["logs"], xl330["processed"], strict=True):
        entries = pl["entries"]
        assert lg.traj.n_samples == len(entries)
        for ours, key in (
            (lg.traj.q[:, 0], "position"),
            (lg.traj.q_cmd[:, 0], "goal_position"),
            (lg.traj.qd[:, 0], "speed"),
            (lg.vin, "input_volts"),
        ):
            np.testing.assert_allclose(
                ours, [e[key] for e in entries], rtol=0, atol=1e-12, err_msg=f"{lg.source}: {key}"
            )
        assert np.array_equal(lg.torque_enable[:, 0], [e["torque_enable"] for e in entries])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("limit", [True, False], ids=["as_released", "no_current_limit"])
def test_physical_servo_predicts_what_bam_predicts(
    xl330: dict[str, Any], family: str, limit: bool
) -> None:
    """BAM's shipped XL330 parameters, BAM 1.0.2 as released (its 1.75 A current limit)
    and without the limit (as BAM's main branch after the release): simgap's rollout is
    BAM's to 1e-5 rad at every sample of every log."""
    path = DATA / "bam_params" / "xl330" / f"{family}.json"
    model = bam_model.load_model(str(path))
    batch = as_bam_simulates(xl330["batch"], "xl330")
    if not limit:
        model.actuator.max_current = None
        batch = dataclasses.replace(batch, i_max=None)
    else:
        assert model.actuator.max_current == BAM_CURRENT_LIMIT_A["xl330"]
    space, x = space_and_values(load_bam_params(path))
    ours = simulate_physical(space.superset(x[None]), batch)[0]
    for i, pl in enumerate(xl330["processed"]):
        theirs = _bam_rollout(model, pl)
        assert np.abs(ours[i, : theirs.size] - theirs).max() < 1e-5, xl330["paths"][i].name


def _sts_log(tmp: Path) -> Path:
    """A raw BAM log of an STS3215 on BAM's pendulum, on BAM's 5 ms grid from 0 (so both
    processings see the raw samples), starting at rest at 0 rad (BAM starts the firmware's
    smoothed target at 0, simgap at the first measured position), with a chirp, a
    step beyond the velocity clamp and torque off for a second."""
    t = np.arange(0.0, 6.0, 0.005)
    goal = 0.9 * np.sin(2 * np.pi * (0.2 + 0.3 * t) * t) * np.minimum(t, 1.0)
    goal[(t > 3.0) & (t < 3.6)] = 1.4
    on = ~((t > 4.0) & (t < 5.0))
    entries = [
        {
            "timestamp": float(a),
            "position": float(g * 0.9),
            "speed": 0.0,
            "goal_position": float(g),
            "torque_enable": bool(e),
            "input_volts": 7.4,
        }
        for a, g, e in zip(t, goal, on, strict=True)
    ]
    p = tmp / "raw" / "sts.json"
    p.parent.mkdir()
    p.write_text(
        json.dumps(
            {
                "mass": 0.6,
                "length": 0.15,
                "kp": 16,
                "vin": 7.4,
                "motor": "sts3215",
                "trajectory": "chirp",
                "entries": entries,
            }
        )
    )
    return p


def test_sts3215_servo_predicts_what_bam_predicts(tmp_path: Path) -> None:
    path = DATA / "bam_params" / "feetech_sts3215_7_4V" / "m1.json"
    if not path.is_file():
        pytest.skip(f"BAM's shipped STS3215 parameters are absent ({path})")
    raw = _sts_log(tmp_path)
    (pl,) = _process(raw.parent, tmp_path / "processed").values()
    lg = read_bam_log(raw)
    batch = as_bam_simulates(
        build_batch([lg], 0, [JointLoad(*pendulum_load(0.6, 0.15))], [bam_drive(lg.meta)]),
        "sts3215",
    )
    space, x = space_and_values(load_bam_params(path))
    ours = simulate_physical(space.superset(x[None]), batch)[0, 0]
    theirs = _bam_rollout(bam_model.load_model(str(path)), pl)
    assert theirs.size == ours.size
    assert np.ptp(theirs) > 1.0  # the servo moved, the clamp and the free swing acted
    assert np.abs(ours - theirs).max() < 1e-5


def test_exported_parameters_load_in_bam_and_score_as_stated(
    xl330: dict[str, Any], tmp_path: Path
) -> None:
    """The ladder's own export of a fit on the real logs: BAM loads every parameter
    simgap writes under a BAM name, and its MAE on each training log is the one the
    file states (``simgap.in_bam``) to 1e-5 rad."""
    cfg = LadderConfig(
        noise_floor_rad=0.0015,
        use_net=False,
        cma_evaluations=120,
        families=("m1", "m3"),
        bootstrap_replicates=0,
        searches=1,
        gain_out=False,
    )
    res = fit_joint(xl330["logs"], "xl330", xl330["loads"], xl330["drives"], cfg)
    data = joint_bam_json(res)
    assert data is not None
    path = tmp_path / "bam_params_xl330.json"
    path.write_text(json.dumps(data))
    model = bam_model.load_model(str(path))
    bam_names = set(model.get_parameters())
    written = set(data) - {"model", "actuator", "simgap", "command_delay"}
    assert written <= bam_names, f"not BAM parameters: {written - bam_names}"
    assert "command_delay" not in bam_names  # simgap's key; the file says BAM drops it
    for name in written:
        assert getattr(model, name).value == pytest.approx(data[name], rel=0, abs=0)
    stated = data["simgap"]["in_bam"]
    assert stated["release"] == "1.0.2"
    theirs = [
        float(np.mean(np.abs(_bam_rollout(model, pl) - [e["position"] for e in pl["entries"]])))
        for pl in xl330["processed"]
    ]
    np.testing.assert_allclose(theirs, stated["train_mae_by_log_rad"], rtol=0, atol=1e-5)
    assert np.mean(theirs) == pytest.approx(stated["train_mae_rad"], abs=1e-5)
    # on BAM's own logs simgap simulates as BAM 1.0.2 does (header voltage, its current
    # limit, no delay): nothing differs, and BAM reproduces simgap's own figure
    assert stated["differences"] == []
    assert np.mean(theirs) == pytest.approx(stated["simgap_train_mae_rad"], abs=1e-6)

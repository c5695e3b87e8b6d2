"""The SO-101 bench factory: deterministic, healthy means healthy, LeRobot's units and timing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from simgap.demo.bench_sim import quantise, simulate
from simgap.demo.factory import make_so101_bench
from simgap.demo.faults import ISSUE_RANGES, PARAMS, draw_faults
from simgap.demo.nominal import nominal_model
from simgap.demo.twin import JOINTS
from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.rig import load_rig
from simgap.units import ENCODER_RESOLUTION_RAD

DUR = 3.0


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


def _data_bytes(root: Path) -> bytes:
    return (root / "data/chunk-000/file-000.parquet").read_bytes()


def test_same_seed_same_bench_other_seed_other_faults(so101: Path, tmp_path: Path) -> None:
    a = make_so101_bench(tmp_path / "a", so101, 5, faults="random", duration_s=DUR, n_heldout=0)
    b = make_so101_bench(tmp_path / "b", so101, 5, faults="random", duration_s=DUR, n_heldout=0)
    c = make_so101_bench(tmp_path / "c", so101, 6, faults="random", duration_s=DUR, n_heldout=0)
    assert a.truth == b.truth and _data_bytes(a.dataset) == _data_bytes(b.dataset)
    assert a.truth != c.truth and _data_bytes(a.dataset) != _data_bytes(c.dataset)
    assert a.faulty
    for t in a.truth:
        for p in PARAMS:
            lo, hi = ISSUE_RANGES.get(p, (1.0, 1.0))  # the force limit only when named
            assert lo <= t.factor(p) <= hi
        assert 0.0 <= t.delay_s <= 0.08
    assert len({t.delay_s for t in a.truth}) == 1  # one delay per arm by default


def test_healthy_bench_has_no_fault_and_replays_to_the_count(
    so101: Path,
    tmp_path: Path,
) -> None:
    bench = make_so101_bench(tmp_path / "h", so101, 2, faults=None, duration_s=DUR)
    assert not bench.faulty
    assert all(t.delay_s == 0 and all(f == 1.0 for _, f in t.multiplier) for t in bench.truth)
    truth = json.loads((tmp_path / "h" / "truth.json").read_text())
    assert truth["faulty"] is False
    rig = load_rig(bench.rig)
    assert rig.model_path == so101.resolve()
    assert "faults" not in bench.rig.read_text() and "multiplier" not in bench.rig.read_text()
    trajs = dataset_trajectories(read_lerobot_dataset(bench.dataset), rig)
    assert len(trajs) == 3
    m = nominal_model(so101)
    for tr in trajs:
        q, _ = simulate(m, quantise(tr.q_cmd), 30, np.zeros(len(JOINTS)))
        # the nominal model, fed the recorded goals with the recorded timing, gives the
        # recorded encoder readings: units, quantisation and timing all round-trip
        assert np.abs(quantise(q) - tr.q).max() < 0.5 * ENCODER_RESOLUTION_RAD


def test_dataset_reads_back_in_lerobot_units(so101: Path, tmp_path: Path) -> None:
    bench = make_so101_bench(
        tmp_path / "u", so101, 1, fps=100, faults="random", duration_s=DUR, n_episodes=2
    )
    ds = read_lerobot_dataset(bench.dataset)
    assert ds.fps == 100 and ds.episode_indices == (0, 1)
    schema = pq.read_schema(bench.dataset / "data/chunk-000/file-000.parquet")
    assert str(schema.field("timestamp").type) == "float"  # float32, as LeRobot writes it
    ts = ds.column("timestamp", 0)
    np.testing.assert_array_equal(ts, (np.arange(ts.size) / 100).astype(np.float32))
    state = ds.named("observation.state", 0)
    assert set(state) == {f"{j}.pos" for j in JOINTS}
    grip = state["gripper.pos"]
    assert 5.0 < grip.min() and grip.max() < 95.0  # percent of the gripper's range
    assert np.abs(state["shoulder_lift.pos"]).max() > 20.0  # degrees, not radians
    rig = load_rig(bench.rig)
    tr = dataset_trajectories(ds, rig)[0]
    counts = tr.q[:, :5] / ENCODER_RESOLUTION_RAD  # whole encoder counts (float32 rounding)
    assert np.abs(counts - np.rint(counts)).max() < 1e-3
    assert bench.heldout is not None and read_lerobot_dataset(bench.heldout).episode_indices == (0,)


def test_planted_fault_is_visible_in_the_recording(so101: Path, tmp_path: Path) -> None:
    healthy = make_so101_bench(tmp_path / "h", so101, 4, duration_s=DUR, n_heldout=0)
    slow = make_so101_bench(
        tmp_path / "d",
        so101,
        4,
        duration_s=DUR,
        n_heldout=0,
        faults={"delay_s": 0.04, "kp": {"elbow_flex": 0.5}},
    )
    assert slow.joint("elbow_flex").factor("kp") == 0.5
    assert slow.joint("shoulder_pan").factor("kp") == 1.0
    assert slow.joint("gripper").delay_s == 0.04
    rig = load_rig(healthy.rig)
    q0 = dataset_trajectories(read_lerobot_dataset(healthy.dataset), rig)[0].q
    q1 = dataset_trajectories(read_lerobot_dataset(slow.dataset), rig)[0].q
    assert np.abs(q1 - q0).max(axis=0).min() > 5 * ENCODER_RESOLUTION_RAD


def test_bad_faults_name_the_field(so101: Path, tmp_path: Path) -> None:
    with pytest.raises(NameNotFoundError, match="damping"):
        make_so101_bench(tmp_path / "x", so101, 0, faults={"dampng": 2.0}, duration_s=1)
    with pytest.raises(NameNotFoundError, match="elbow_flex"):
        make_so101_bench(tmp_path / "x", so101, 0, faults={"kp": {"elbow": 2.0}}, duration_s=1)
    with pytest.raises(InputError, match="multiplier > 0"):
        make_so101_bench(tmp_path / "x", so101, 0, faults={"kv": -1.0}, duration_s=1)


def test_fleet_draws_from_its_own_distribution() -> None:
    arms = [
        draw_faults([7, arm], JOINTS, ranges={"kp": (0.9, 1.1)}, delay_range_s=None)
        for arm in range(8)
    ]
    assert all(set(a) == {"kp"} for a in arms)
    kps = np.array([list(a["kp"].values()) for a in arms])
    assert kps.min() >= 0.9 and kps.max() <= 1.1 and np.unique(kps).size == kps.size


@pytest.mark.parametrize(("fps", "delay"), [(30, 0.0), (100, 0.08)])
def test_sine_excited_gripper_without_object_is_no_grasp(
    so101: Path, tmp_path: Path, fps: int, delay: float
) -> None:
    """Issue 12: a bench with no object and a sine-excited gripper must not implicate the
    grasp margin; it is not measured, with the reason in numbers."""
    from simgap.branches import envelope as envelope_branch
    from simgap.branches.context import Context
    from simgap.evidence.bundle import EvidenceBundle
    from simgap.finding import Verdict

    bench = make_so101_bench(
        tmp_path,
        so101,
        8,
        fps=fps,
        duration_s=6.0,
        n_heldout=0,
        faults={"delay_s": delay, "kp": 0.5},
    )
    rig = load_rig(bench.rig)
    found = {
        f.figures.check: f
        for f in envelope_branch.assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    }
    grasp = found["grasp_margin"]
    assert grasp.verdict is Verdict.NOT_MEASURED
    assert "no object position recorded" in grasp.summary and " s of " in grasp.summary


def test_substeps_give_a_finer_truth(so101: Path, tmp_path: Path) -> None:
    bench = make_so101_bench(tmp_path, so101, 2, duration_s=2.0, n_heldout=0, substeps=2)
    assert json.loads((tmp_path / "truth.json").read_text())["physics_dt_s"] == 0.0025
    tr = dataset_trajectories(read_lerobot_dataset(bench.dataset), load_rig(bench.rig))[0]
    m = nominal_model(so101)
    m.opt.timestep = 0.0025
    q, _ = simulate(m, quantise(tr.q_cmd), 30, np.zeros(len(JOINTS)))
    assert np.abs(quantise(q) - tr.q).max() < 0.5 * ENCODER_RESOLUTION_RAD

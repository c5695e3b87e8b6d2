"""The demo bench: deterministic, every evidence file readable, the planted faults visible."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import tomllib
from pathlib import Path

import mujoco
import numpy as np
import pytest
from PIL import Image

from simgap.demo import demo_model_path, prepare_demo
from simgap.demo.recorder import FILES, WORKSPACE_X, WORKSPACE_Y
from simgap.demo.truth import NOMINAL_KP, NOMINAL_KV, TRUTH
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.rig import load_rig

DT = 1.0 / 15.0


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rig = prepare_demo(tmp_path_factory.mktemp("cache"), seed=0)
    return rig.parent


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _tree_hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_rig_loads_and_names_every_evidence_file(bench: Path) -> None:
    rig = load_rig(bench / "rig.toml")
    assert rig.evidence.missing() == []
    ev = rig.evidence
    for key in (
        "dataset",
        "sim_dataset",
        "sim_manifest",
        "real_manifest",
        "frames",
        "trace",
        "static_object_poses",
    ):
        assert getattr(ev, key) is not None, key
    assert len(ev.timing_logs) == 1 and len(ev.push_logs) == 2 and len(ev.actuator_logs) == 2
    assert ev.actuator_format == "csv"
    assert rig.camera is not None and rig.camera.policy_resolution == (16, 16)
    assert rig.training.servo_p_gain == 2 * (rig.deploy.servo_p_gain or 0)
    assert rig.origin_reference_m is not None
    assert rig.origin_reference_m[0] == pytest.approx(0.0388, abs=1e-3)
    assert rig.object_body == "cube" and set(rig.gripper_geoms) == {
        "fixed_jaw_pad",
        "moving_jaw_pad",
    }


def test_prepare_demo_reuses_the_cache(bench: Path) -> None:
    before = (bench / "truth.json").stat().st_mtime_ns
    again = prepare_demo(bench.parent, seed=0)
    assert again == bench / "rig.toml"
    assert (bench / "truth.json").stat().st_mtime_ns == before


@pytest.mark.slow
def test_same_seed_gives_identical_files(bench: Path, tmp_path: Path) -> None:
    other = prepare_demo(tmp_path, seed=0).parent
    assert _tree_hashes(other) == _tree_hashes(bench)


def test_lerobot_datasets_read_with_the_foundation_reader(bench: Path) -> None:
    rig = load_rig(bench / "rig.toml")
    for key in ("dataset", "sim_dataset"):
        ds = read_lerobot_dataset(getattr(rig.evidence, key))
        assert ds.fps == 15 and len(ds.episode_indices) == 12
        trajs = dataset_trajectories(ds, rig)
        assert all(t.q.shape[1] == 6 for t in trajs)
        img = ds.table.column("observation.images.wrist")[0].as_py()
        assert Image.open(io.BytesIO(img["bytes"])).size == (96, 96)
        assert ds.vector("observation.object_pos").shape[1] == 3
    assert (bench / FILES.dataset / "meta" / "tasks.parquet").is_file()


def test_timing_log_parses_and_overruns_the_period(bench: Path) -> None:
    recs = [json.loads(line) for line in (bench / FILES.timing_log).read_text().splitlines()]
    assert {"episode", "step", "t", "stages"} <= set(recs[0])
    totals = np.array([sum(r["stages"].values()) for r in recs])
    assert np.percentile(totals, 95) > DT  # fault (1)


def test_manifests_are_comparable_and_record_trials(bench: Path) -> None:
    sim = tomllib.loads((bench / FILES.sim_manifest).read_text())
    real = tomllib.loads((bench / FILES.real_manifest).read_text())
    assert sim["policy"]["sha256"] == real["policy"]["sha256"]
    policy = (bench / FILES.policy).read_bytes()
    assert sim["policy"]["sha256"] == hashlib.sha256(policy).hexdigest()
    assert sim["initial_states"] == real["initial_states"]
    assert sim["success"] == real["success"]
    assert sim["environment"]["kind"] == "sim" and real["environment"]["kind"] == "real"
    states = sim["initial_states"]["states"]
    assert len(sim["trials"]) == len(real["trials"]) == len(states)
    inside = [
        WORKSPACE_X[0] <= x <= WORKSPACE_X[1] and WORKSPACE_Y[0] <= y <= WORKSPACE_Y[1]
        for x, y, _ in states
    ]
    assert all(inside)  # every placement inside training's square: placements are not planted
    phases = {"approach", "contact", "grasp", "lift_and_carry", "place"}
    for t in real["trials"]:
        assert t["success"] or t["phase"] in phases
    n_sim = sum(t["success"] for t in sim["trials"])
    n_real = sum(t["success"] for t in real["trials"])
    assert n_real < n_sim


def test_twin_carries_the_planted_physics() -> None:
    from simgap.demo.twin import nominal_model, twin_model

    tw, nom = twin_model(), nominal_model()
    assert tw.body("cube").mass[0] == pytest.approx(TRUTH.contact.object_mass_kg)
    assert nom.body("cube").mass[0] == pytest.approx(0.003)
    for pad in ("fixed_jaw_pad", "moving_jaw_pad"):
        assert tw.geom(pad).friction[0] == pytest.approx(0.5)
        assert nom.geom(pad).friction[0] == pytest.approx(2.0)
    a = tw.actuator("elbow_flex")
    assert a.gainprm[0] == pytest.approx(NOMINAL_KP / 2)
    assert a.biasprm[2] == pytest.approx(-NOMINAL_KV)
    assert a.dyntype[0] == mujoco.mjtDyn.mjDYN_FILTEREXACT
    assert a.dynprm[0] == pytest.approx(TRUTH.servo.lag_time_constant_s)


def test_measured_lags_the_command_on_the_twin(bench: Path) -> None:
    rows = _rows(bench / FILES.actuator_logs[0])
    cmd = np.array([float(r["cmd_elbow_flex"]) for r in rows])
    q = np.array([float(r["q_elbow_flex"]) for r in rows])
    moving = np.flatnonzero(np.abs(np.diff(cmd)) > 0)
    cmd, q = cmd[moving[0] : moving[-1] + 1], q[moving[0] : moving[-1] + 1]
    cmd, q = cmd - cmd.mean(), q - q.mean()
    lags = np.arange(0, 30)
    err = [np.mean((q[k:] - cmd[: len(cmd) - k]) ** 2) for k in lags]
    best = lags[int(np.argmin(err))] / 100.0  # rows at 100 Hz
    assert best >= 0.02  # at least 20 ms behind: lag + soft loop


def test_stale_first_frame_equals_the_previous_last(bench: Path) -> None:
    ds = read_lerobot_dataset(bench / FILES.dataset)
    col = ds.table.column("observation.images.wrist").to_pylist()
    ep = ds.table.column("episode_index").to_numpy()
    for e in range(1, 12):
        idx = np.flatnonzero(ep == e)
        prev = np.flatnonzero(ep == e - 1)
        assert col[idx[0]]["bytes"] == col[prev[-1]]["bytes"]
        assert col[idx[1]]["bytes"] != col[idx[0]]["bytes"]
    trace = [json.loads(s) for s in (bench / FILES.trace).read_text().splitlines()]
    first = {}
    last = {}
    for r in trace:
        first.setdefault(r["episode"], r)
        last[r["episode"]] = r
    for e in range(12):
        resets = [ev["t"] for ev in first[e]["events"] if ev["name"] == "reset"]
        assert len(resets) == 1 and resets[0] < first[e]["t"]
        assert first[e]["observation"]["image_t"] < resets[0]  # taken before the reset
        if e:
            assert first[e]["observation"]["image_sha1"] == last[e - 1]["observation"]["image_sha1"]


def test_trace_plumbing_is_otherwise_clean(bench: Path) -> None:
    trace = [json.loads(s) for s in (bench / FILES.trace).read_text().splitlines()]
    meta = trace[0]["meta"]
    assert meta["use_degrees"] is True and meta["policy_server"].startswith("127.0.0.1")
    writes = trace[0]["writes"]
    present = {
        r["motor"]: r["value"] for r in trace[0]["reads"] if r["register"] == "Present_Position"
    }
    torque_on = min(i for i, w in enumerate(writes) if w["register"] == "Torque_Enable")
    goals_before = {
        w["motor"]: w["value"] for w in writes[:torque_on] if w["register"] == "Goal_Position"
    }
    assert goals_before == present and len(present) == 6
    grip = [r["observation"]["gripper.pos"] for r in trace] + [
        r["action"]["gripper.pos"] for r in trace
    ]
    assert 0.0 <= min(grip) and max(grip) <= 100.0
    assert [r["tick"] for r in trace] == list(range(len(trace)))


def test_zero_offset_shows_in_static_object_poses(bench: Path) -> None:
    """Seen through the model with the readings as recorded, the static cube wanders;
    with the planted offset removed it sits still (forward kinematics done here)."""
    model = mujoco.MjModel.from_xml_path(str(demo_model_path()))
    data = mujoco.MjData(model)
    rows = _rows(bench / FILES.static_object_poses)
    assert len(rows) >= 8
    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    adr = [model.joint(n).qposadr[0] for n in names]
    cid = model.camera("wrist_cam").id

    def world(offset: float) -> np.ndarray:
        out = []
        for r in rows:
            q = np.radians([float(r[f"{n}.pos"]) for n in names])
            q[3] -= offset  # recorded = true + offset
            data.qpos[adr] = q
            mujoco.mj_kinematics(model, data)
            mujoco.mj_camlight(model, data)
            rot = data.cam_xmat[cid].reshape(3, 3)
            pc = np.array([float(r[k]) for k in ("obj_cam_x", "obj_cam_y", "obj_cam_z")])
            out.append(data.cam_xpos[cid] + rot @ pc)
        return np.array(out)

    cube = np.array(
        json.loads((bench / FILES.truth).read_text())["computed"]["static_object_world_m"]
    )
    err_raw = np.linalg.norm(world(0.0) - cube, axis=1)
    err_fixed = np.linalg.norm(world(math.radians(TRUTH.zero_offset.offset_deg)) - cube, axis=1)
    assert err_fixed.max() < 0.002
    assert err_raw.mean() > 0.004


def test_frames_show_auto_exposure_and_a_brown_cloth(bench: Path) -> None:
    idx = _rows(bench / FILES.frames / "index.csv")
    assert 15 <= len(idx) <= 60
    assert {"rest", "start"} <= {r["pose_label"] for r in idx}
    start = {r["recording"]: r["file"] for r in idx if r["pose_label"] == "start"}
    a = np.asarray(Image.open(bench / FILES.frames / start["session_a"]), dtype=float)
    b = np.asarray(Image.open(bench / FILES.frames / start["session_b"]), dtype=float)
    assert abs(a.mean() - b.mean()) > 10  # two recordings, two exposures
    corner = a[:8, :8].reshape(-1, 3).mean(axis=0)  # the cloth
    assert corner[0] > 120 and corner[0] > corner[1] > corner[2]  # brown, not black


def test_push_logs_move_the_cube(bench: Path) -> None:
    moved = []
    for rel in FILES.push_logs:
        rows = _rows(bench / rel)
        assert {"t", "cmd_shoulder_pan", "q_gripper", "obj_x", "obj_qw"} <= set(rows[0])
        p0 = np.array([float(rows[0][k]) for k in ("obj_x", "obj_y")])
        p1 = np.array([float(rows[-1][k]) for k in ("obj_x", "obj_y")])
        moved.append(float(np.linalg.norm(p1 - p0)))
    assert min(moved) > 0.003 and max(moved) > 0.02


def _pixels(model: mujoco.MjModel, q: np.ndarray, pts: np.ndarray) -> np.ndarray:
    data = mujoco.MjData(model)
    adr = [
        model.joint(n).qposadr[0]
        for n in (
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
            "gripper",
        )
    ]
    data.qpos[adr] = q
    mujoco.mj_forward(model, data)
    cam = model.camera("wrist_cam").id
    pc = (pts - data.cam_xpos[cam]) @ data.cam_xmat[cam].reshape(3, 3)
    f = 8.0 / math.tan(math.radians(model.cam_fovy[cam]) / 2)  # 16 px high
    return np.stack([8 + f * pc[:, 0] / -pc[:, 2], 8 - f * pc[:, 1] / -pc[:, 2]], axis=1)


def test_truth_json_records_the_faults(bench: Path) -> None:
    from simgap.demo.twin import twin_model

    truth = json.loads((bench / FILES.truth).read_text())
    assert truth["planted"]["contact"]["object_mass_kg"] == TRUTH.contact.object_mass_kg
    cam = truth["computed"]["camera"]
    # independent: the table points as the twin's camera sees them at the start pose
    nom = mujoco.MjModel.from_xml_path(str(demo_model_path()))
    xs, ys = np.meshgrid(np.linspace(0.2, 0.32, 5), np.linspace(-0.05, 0.05, 5))
    pts = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
    start = nom.key_qpos[1][:6]
    shift = np.linalg.norm(_pixels(twin_model(), start, pts) - _pixels(nom, start, pts), axis=1)
    assert cam["mount_only_px"] == pytest.approx(shift.mean(), rel=1e-6)
    for key in ("mount_only_px", "with_zero_offset_px"):
        ratio = cam[key] / 0.5  # rig's training_jitter_px
        assert 2.0 <= ratio <= 3.0, key

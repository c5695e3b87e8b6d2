"""The Rerun recording's model layers, read back: findings at the moments findings.json names,
the blueprint on the worst joint, the camera rendered at the measured angles and the arm in 3D
at the real and the simulated poses."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

rr = pytest.importorskip("rerun", reason="the rerun extra (rerun-sdk) is absent")

from tests.test_rerun import read_rrd  # noqa: E402
from tests.view_findings import diagnosis as _diagnosis  # noqa: E402
from tests.view_findings import timed_findings as _timed_findings  # noqa: E402

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


def test_finding_marks_come_from_the_figures_alone() -> None:
    from simgap.report.rerun_findings import finding_marks

    marks = finding_marks(_diagnosis()["findings"] + _timed_findings())
    got = [(m.finding, m.episode, m.row, m.t_s) for m in marks]
    # time base: episode 1 row 7; stale: episode 0 only (episode 1 was not stale); phases:
    # episode 1 broke at lift_and_carry, never entered: the start of grasp, where it was
    assert got == [(2, 1, 7, None), (3, 0, 0, None), (4, 1, None, 0.4)]
    assert "2.5 rad/s (elbow_flex)" in marks[0].note
    assert "0.7 s before the reset" in marks[1].note
    assert "failed at lift_and_carry after entering grasp" in marks[2].note
    broken = [
        {
            "branch": "evidence",
            "kind": "time_base",
            "figures": {"peak_speed_episode": "x", "peak_speed_frame": 3},
        },
        {
            "branch": "phases",
            "details": {"real_episodes": [{"episode": 0, "failure_phase": "place"}]},
        },
    ]
    assert finding_marks(broken) == []  # no time given: nothing is placed


def test_gap_ratios_pick_the_joint_furthest_beyond_its_floor() -> None:
    from simgap.report.rerun_blueprint import gap_ratios

    q = [np.zeros((4, 3)), np.zeros((2, 3))]
    sim = [np.array([[0.1, 0.0, 0.01]] * 4), np.array([[0.1, 0.0, 0.01]] * 2)]
    r = gap_ratios(q, sim, np.array([1.0, 0.5, 0.001]))
    np.testing.assert_allclose(r, [0.1, 0.0, 10.0])


def _png(blob: Any) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(bytes(blob))).convert("RGB"))


def test_model_layers_at_their_frames(shared_data: Path, gl_backend: str, tmp_path: Path) -> None:
    """On a two-episode SO-101 bench with its wrist camera named: findings at their frames,
    the blueprint names the worst joint, the rendered camera equals a render at the measured
    angles (every second frame of 30 fps), and the arm's geoms sit where MuJoCo's forward
    kinematics puts them, for the real and the replayed joints."""
    import mujoco

    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.report.rerun import _rerun_cli, write_rrd
    from simgap.rig import load_rig
    from simgap.sim.camera_replay import render_at_angles

    so101 = shared_data / "so101" / "so101.xml"
    b = make_so101_bench(
        tmp_path / "bench", so101, 3, fps=30, n_episodes=2, duration_s=1.0, n_heldout=0
    )
    with open(b.rig, "a", encoding="utf-8") as fh:
        fh.write('\n[camera]\nname = "wrist_cam"\nrender_resolution = [48, 64]\n')
    rig = load_rig(b.rig)
    ds = read_lerobot_dataset(rig.evidence.dataset)
    diag = _diagnosis()
    diag["findings"] += _timed_findings()
    done = write_rrd(tmp_path / "d.rrd", rig, ds, diag)
    assert done.skipped == ()
    got = read_rrd(done.path)
    trs = {tr.episode: tr for tr in dataset_trajectories(ds, rig)}

    # findings: the timed ones at their frames, in time order, the rest at the first frame
    logs = got["episode_1"]["findings"]
    at = {
        t[0].split(":")[1].strip(): f
        for f, t in zip(logs["frame_index"], logs["TextLog:text"], strict=True)
    }
    assert logs["frame_index"] == sorted(logs["frame_index"])
    assert at["Time base"] == 7 and at["Failure phases"] == 12  # 0.4 s at 30 fps
    assert at["Stale first frame"] == 0 and at["Latency"] == 0
    logs0 = got["episode_0"]["findings"]
    stale = [t[0] for t in logs0["TextLog:text"] if "Stale first frame" in t[0]]
    assert len(stale) == 1 and "Here: its first image was taken 0.7 s" in stale[0]
    assert len(logs0["frame_index"]) == 5 and set(logs0["frame_index"]) == {0}

    # the blueprint: the joint with the largest nominal gap RMS over its floor, read back
    ratio = []
    for j in JOINTS:
        g = np.concatenate(
            [np.array(got[f"episode_{e}"][f"gap/{j}"]["Scalars:scalars"])[:, 0] for e in (0, 1)]
        )
        ratio.append(np.sqrt(np.mean(g**2)) / 0.002)
    worst = JOINTS[int(np.argmax(ratio))]
    assert done.worst_joint == worst and done.gap_ratio == pytest.approx(max(ratio), rel=1e-6)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [_rerun_cli(), "analytics", "disable"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    printed = subprocess.run(
        [_rerun_cli(), "rrd", "print", "-vvv", str(done.path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    blueprint = printed[printed.index("Blueprint,") :]
    assert f"worst gap: {worst}" in blueprint and f"/gap/{worst}" in blueprint

    model = mujoco.MjModel.from_xml_path(str(rig.model_path))
    data = mujoco.MjData(model)
    qadr = [model.jnt_qposadr[model.joint(j).id] for j in rig.joint_names]
    mesh = next(k for k in got["episode_0"] if k.startswith("world/real/mesh/"))
    name = mesh.rsplit("/", 1)[1]
    gid = (
        int(name.removeprefix("geom"))
        if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name) < 0
        else model.geom(name).id
    )  # unnamed: geom<id>
    for e, tr in trs.items():
        ents = got[f"episode_{e}"]
        # the camera: every second frame, equal to a render at the measured angles
        cam = ents["sim/camera/wrist_cam"]
        rows = np.arange(0, len(tr.t), 2)
        assert cam["frame_index"] == rows.tolist()
        want = render_at_angles(rig.model_path, "wrist_cam", rig.joint_names, tr.q[rows], 48, 64)
        assert (want.sum(axis=-1) > 0).mean() > 0.02  # the jaws are in view, not a blank
        for blob, img in zip(cam["EncodedImage:blob"], want, strict=True):
            np.testing.assert_array_equal(_png(blob[0]), img)
        # the arm: a mesh geom's world pose, real and nominal, against forward kinematics
        nominal = np.array(ents["sim/nominal/observation.state"]["Scalars:scalars"])
        for layer, q in (("real", tr.q), ("sim/nominal", nominal)):
            poses = ents[mesh.replace("world/real/", f"world/{layer}/")]
            assert poses["frame_index"] == list(range(len(tr.t)))
            for k in (0, len(tr.t) // 2, len(tr.t) - 1):
                data.qpos[:] = model.qpos0
                data.qpos[qadr] = q[k]
                mujoco.mj_kinematics(model, data)
                np.testing.assert_allclose(
                    poses["InstancePoses3D:translations"][k][0], data.geom_xpos[gid], atol=1e-6
                )
                wq = np.empty(4)
                mujoco.mju_mat2Quat(wq, data.geom_xmat[gid])
                xyzw = np.array(poses["InstancePoses3D:quaternions"][k][0])
                assert abs(abs(float(np.dot(np.roll(xyzw, 1), wq))) - 1.0) < 1e-6
        assert ents[mesh]["static"]["Mesh3D:vertex_positions"][0]


def test_a_name_never_makes_a_path() -> None:
    """A joint named with a slash (MuJoCo's attach prefixes make them) stays one entity."""
    from simgap.report.rerun import gap_path

    assert gap_path(rr, "arm/shoulder_pan") == "gap/arm\\/shoulder_pan"
    assert gap_path(rr, "elbow_flex") == "gap/elbow_flex"


def test_latency_at_the_slowest_overrunning_tick(shared_data: Path, tmp_path: Path) -> None:
    """Each tick's total from the timing log beside the recording where a tick is a frame
    (episode 1: 30 ticks, one slow), and the latency finding at that tick; episode 0's log
    has a tick fewer than its frames, so it gets neither."""
    import json

    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.report.rerun import write_rrd
    from simgap.rig import load_rig

    b = make_so101_bench(
        tmp_path / "bench",
        shared_data / "so101" / "so101.xml",
        3,
        fps=30,
        n_episodes=2,
        duration_s=1.0,
        n_heldout=0,
    )
    rows = []
    for e, n in ((0, 29), (1, 30)):
        for k in range(n):
            slow = 0.150 if (e, k) == (1, 9) else 0.010
            rows.append(
                {
                    "episode": e,
                    "step": k,
                    "t": 10.0 * e + k / 30,
                    "stages": {"inference": slow, "command": 0.002},
                }
            )
    (Path(b.rig).parent / "timing.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open(b.rig, "a", encoding="utf-8") as fh:  # [evidence] is the file's last section
        fh.write('timing_logs = ["timing.jsonl"]\n')
    rig = load_rig(b.rig)
    done = write_rrd(
        tmp_path / "d.rrd", rig, read_lerobot_dataset(rig.evidence.dataset), _diagnosis()
    )
    got = read_rrd(done.path)
    assert "latency/total" not in got["episode_0"]
    lat = got["episode_1"]["latency/total"]
    assert lat["frame_index"] == list(range(30))
    assert lat["static"]["SeriesLines:names"][0] == ["total", "budget"]
    tot = np.array(lat["Scalars:scalars"])
    np.testing.assert_allclose(tot[:, 0], [0.152 if k == 9 else 0.012 for k in range(30)])
    np.testing.assert_allclose(tot[:, 1], rig.control_dt_s)
    for e, frame in ((0, 0), (1, 9)):
        logs = got[f"episode_{e}"]["findings"]
        at = [
            (f, t[0])
            for f, t in zip(logs["frame_index"], logs["TextLog:text"], strict=True)
            if "latency" in t[0]
        ]
        assert [f for f, _ in at] == [frame]
    assert "slowest tick, 152.0 ms" in at[0][1] and "(1 of 30 ticks overran)" in at[0][1]


def test_the_floor_is_the_actuator_findings(demo_model: Path, tmp_path: Path) -> None:
    """Per joint from a joint identification, one for all from a bench ladder (the demo's),
    the encoder's quantisation where the diagnosis has none."""
    from simgap.report.rerun_layers import noise_floors
    from simgap.rig import load_rig
    from tests.factories import write_rig

    rig = load_rig(write_rig(tmp_path, demo_model))
    n = len(rig.joint_names)
    per = {
        "findings": [
            {
                "branch": "actuator",
                "kind": "joint_dynamics",
                "figures": {
                    "noise_floor_rad": {
                        j: {"total_rad": 0.003, "model_rad": 0.004} for j in rig.joint_names
                    }
                },
            }
        ]
    }
    np.testing.assert_allclose(noise_floors(rig, per), [0.005] * n)
    one = {
        "findings": [
            {"branch": "actuator", "kind": "ladder", "figures": {"noise_floor_rad": 0.0015}}
        ]
    }
    np.testing.assert_allclose(noise_floors(rig, one), [0.0015] * n)
    np.testing.assert_allclose(
        noise_floors(rig, {"findings": []}), [rig.encoder_rad / np.sqrt(12)] * n
    )

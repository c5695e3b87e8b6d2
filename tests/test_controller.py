"""The controller fit: planted kp/kv recovered from data made with them; SIMPLER's loss."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.controller.pose_fit import Episode, controller_problem, controller_report
from simgap.errors import InputError
from simgap.fit.local_backend import LocalBackend
from simgap.fit.pose_loss import quat_half_angle_vectors, simpler_loss
from simgap.rig import load_rig
from tests.factories import write_v3_dataset

ARM = """<mujoco><compiler angle="radian"/><option timestep="0.004"/>
<worldbody>
 <body name="l1"><joint name="j1" axis="0 0 1" range="-2 2" damping="0.05"/>
  <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.4"/>
  <body name="l2" pos="0.2 0 0"><joint name="j2" axis="0 1 0" range="-2 2" damping="0.05"/>
   <geom type="capsule" fromto="0 0 0 0.15 0 0" size="0.015" mass="0.2"/>
   <site name="tip" pos="0.15 0 0" quat="0.9 0.1 0.3 0.2"/></body></body>
</worldbody>
<actuator><position name="j1" joint="j1" kp="{kp1}" kv="{kv1}"/>
 <position name="j2" joint="j2" kp="{kp2}" kv="{kv2}"/></actuator></mujoco>"""
NOMINAL = {"kp1": 8.0, "kv1": 0.4, "kp2": 5.0, "kv2": 0.2}
TRUTH = {"kp1": 11.0, "kv1": 0.3, "kp2": 4.0, "kv2": 0.26}

RIG = """name = "arm2"
[model]
path = "{model}"
ee_site = "tip"
[control]
dt_s = 0.02
[joints.j1]
recorded = "j1.pos"
unit = "rad"
[joints.j2]
recorded = "j2.pos"
unit = "rad"
[evidence]
dataset = "data"
"""


def _bench(tmp: Path) -> Path:
    """A dataset recorded on the TRUE arm, a rig pointing at the NOMINAL model."""
    (tmp / "true.xml").write_text(ARM.format(**TRUTH))
    (tmp / "nominal.xml").write_text(ARM.format(**NOMINAL))
    rig_path = tmp / "rig.toml"
    rig_path.write_text(RIG.format(model="true.xml"))
    rig = load_rig(rig_path)
    t = np.arange(0, 1.6, 0.02)
    eps = []
    for k in range(2):
        rng = np.random.default_rng(k)
        steps = rng.uniform(-0.8, 0.8, size=(len(t) // 15 + 1, 2))
        cmd = np.repeat(steps, 15, axis=0)[: len(t)]  # a new target every 0.3 s
        eps.append(Episode(t=t, q=np.zeros((len(t), 2)), action=cmd))
    prob = controller_problem(rig, eps)
    be = LocalBackend(prob)
    res = be.replays(prob.params.x_nominal[None])
    be.close()
    episodes = [
        {"action": e.action.astype(np.float32), "observation.state": r.q[0].astype(np.float32)}
        for e, r in zip(eps, res, strict=True)
    ]
    write_v3_dataset(tmp / "data", episodes, fps=50, names=["j1.pos", "j2.pos"])
    rig_path.write_text(RIG.format(model="nominal.xml"))
    return rig_path


def test_rotation_term_is_simplers_arcsin() -> None:
    """Independent check: arcsin(||R1-R2||_F / (2 sqrt 2)) from rotation matrices."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(3)
    r1, r2 = Rotation.random(20, random_state=rng), Rotation.random(20, random_state=rng)
    want = np.arcsin(
        np.clip(
            np.linalg.norm(r1.as_matrix() - r2.as_matrix(), axis=(1, 2)) / (2 * np.sqrt(2)), 0, 1
        )
    )
    q1, q2 = r1.as_quat(scalar_first=True), r2.as_quat(scalar_first=True)
    got = np.linalg.norm(quat_half_angle_vectors(q1, q2), axis=1)
    np.testing.assert_allclose(got, want, atol=1e-9)
    p = rng.normal(size=(20, 3))
    assert simpler_loss(p + 0.01, q2, p, q1) == pytest.approx(
        np.sqrt(3) * 0.01 + want.mean(), rel=1e-9
    )


def test_controller_fit_recovers_planted_gains_and_cli_json(tmp_path: Path) -> None:
    rig_path = _bench(tmp_path)
    out = tmp_path / "ctl.json"
    res = CliRunner().invoke(
        app, ["controller", str(rig_path), "--json", str(out), "--maxfun", "120"]
    )
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert {"branch", "verdict", "params", "loss_before", "loss_after", "intervals"} <= set(d)
    assert d["branch"] == "controller" and d["verdict"] == "implicated"
    assert d["loss_after"] < 0.05 * d["loss_before"]
    truth = {
        "j1": {"kp": TRUTH["kp1"], "kv": TRUTH["kv1"]},
        "j2": {"kp": TRUTH["kp2"], "kv": TRUTH["kv2"]},
    }
    for j, kk in truth.items():
        for k, v in kk.items():
            assert d["params"][j][k] == pytest.approx(v, rel=0.05), (j, k)
            assert d["intervals"][j][k] is not None
    assert set(d["methods"]) == {"least_squares", "dual_annealing"}


def test_start_state_outside_limits_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "m.xml").write_text(ARM.format(**NOMINAL))
    (tmp_path / "rig.toml").write_text(RIG.format(model="m.xml"))
    rig = load_rig(tmp_path / "rig.toml")
    t = np.arange(0, 0.2, 0.02)
    q = np.full((len(t), 2), 3.0)
    with pytest.raises(InputError, match="joint range"):
        controller_report(rig, [Episode(t=t, q=q, action=q)], maxfun=5, max_iter=1)


def test_ee_delta_controller_reproduces_joint_targets(demo_model: Path) -> None:
    """Deltas taken from forward kinematics of a joint path (independently, with
    mju_mulQuat/quat2Vel) give that path back through the DLS IK controller."""
    import mujoco

    from simgap.sim.ik import ee_delta_targets, frame_poses
    from simgap.sim.model import load_model

    m = load_model(demo_model)
    joints = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
    q0 = np.array([0.1, -0.6, 0.9, 0.9, 0.1])
    path = q0 + np.outer(np.linspace(0, 1, 15), [0.1, 0.1, -0.1, 0.05, 0.1])
    poses = frame_poses(m, joints, path, "gripperframe")
    d = mujoco.MjData(m)
    d.qpos[:5] = path[3]
    mujoco.mj_kinematics(m, d)
    np.testing.assert_allclose(poses[3, :3], d.site_xpos[m.site("gripperframe").id])
    deltas = np.zeros((15, 6))
    deltas[1:, :3] = np.diff(poses[:, :3], axis=0)
    for k in range(1, 15):
        neg, dq, v = np.empty(4), np.empty(4), np.empty(3)
        mujoco.mju_negQuat(neg, poses[k - 1, 3:])
        mujoco.mju_mulQuat(dq, poses[k, 3:], neg)
        mujoco.mju_quat2Vel(v, dq, 1.0)
        deltas[k, 3:] = v
    targets = ee_delta_targets(m, joints, q0, deltas, "gripperframe")
    np.testing.assert_allclose(targets, path, atol=1e-6)

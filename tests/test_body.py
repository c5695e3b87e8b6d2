"""Body: joint zero offsets from static-object sightings, and the frame origin."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.body.frame_origin import frame_origin
from simgap.body.zero_offsets import fit_zero_offsets
from simgap.branches.body import assess
from simgap.branches.context import Context
from simgap.cli import app
from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.static_poses import read_static_poses
from simgap.figures.body import FrameOriginFigures, ZeroOffsetsDetails, ZeroOffsetsFigures
from simgap.finding import Verdict
from simgap.rig import load_rig
from simgap.sim.kinematics import Kinematics
from tests._twin import JOINTS, RECORDED, START, Twin, to_recorded, write_rig
from tests.typed_records import check_typed

PLANTED_DEG = 3.0
CUBE_WORLD = np.array([0.25, 0.02, 0.0125])


def _static_csv(
    path: Path, twin: Twin, n: int = 30, noise_m: float = 2e-4, seed: int = 0
) -> np.ndarray:
    """Sightings of a static cube from the twin's (perturbed) camera, in recorded units."""
    rng = np.random.default_rng(seed)
    qs = START + rng.uniform(-0.6, 0.6, (n, 6))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*RECORDED, "obj_cam_x", "obj_cam_y", "obj_cam_z"])
        for q in qs:
            pos, rot = twin.camera_pose(q)  # MuJoCo's cam_xpos / cam_xmat of the twin
            p_cam = rot.T @ (CUBE_WORLD - pos) + rng.normal(0, noise_m, 3)
            w.writerow([*to_recorded(q), *p_cam])
    return qs


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory, demo_model: Path) -> Path:
    root = tmp_path_factory.mktemp("body")
    delta = np.zeros(6)
    delta[2] = np.deg2rad(PLANTED_DEG)  # elbow_flex
    twin = Twin(
        demo_model,
        cam_pos=(0.004, -0.003, 0.002),
        cam_rot=(np.deg2rad(-3), np.deg2rad(4), np.deg2rad(1)),
        delta=delta,
    )
    _static_csv(root / "static.csv", twin)
    return write_rig(root, demo_model, 'static_object_poses = "static.csv"')


def test_planted_offset_is_recovered_within_a_degree(planted: Path) -> None:
    rig = load_rig(planted)
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    offsets = next(f for f in found if f.title == "Joint zero offsets")
    fig = offsets.typed(ZeroOffsetsFigures)
    deg = fig.joint_offsets_deg
    assert abs(deg["elbow_flex"] - PLANTED_DEG) < 1.0
    for j in ("shoulder_lift", "wrist_flex"):
        assert abs(deg[j]) < 1.0
    ci = fig.joint_offsets_ci95_deg
    assert ci["elbow_flex"] < 1.0
    lo, hi = fig.joint_offsets_interval_deg["elbow_flex"]
    assert lo < PLANTED_DEG < hi + 0.5
    assert offsets.verdict is Verdict.IMPLICATED
    assert fig.largest_offset_joint == "elbow_flex"
    # a pan offset equals moving the object; a roll offset equals moving the camera mount
    assert set(fig.not_identifiable) == {"shoulder_pan", "wrist_roll"}
    np.testing.assert_allclose(fig.object_world_m, CUBE_WORLD, atol=0.01)
    origin = next(f for f in found if f.title == "Frame origin")
    assert origin.verdict is Verdict.INCONCLUSIVE and "not recorded" in origin.summary
    check_typed(offsets, ZeroOffsetsFigures, ZeroOffsetsDetails)
    check_typed(origin, FrameOriginFigures)
    assert origin.typed(FrameOriginFigures).convert is not None
    line = fig.headline()
    assert line is not None and "(elbow_flex)" in line.text


def test_unperturbed_arm_has_no_offsets(tmp_path: Path, demo_model: Path) -> None:
    _static_csv(tmp_path / "static.csv", Twin(demo_model), n=24, seed=1)
    rig = load_rig(write_rig(tmp_path, demo_model, 'static_object_poses = "static.csv"'))
    poses = read_static_poses(tmp_path / "static.csv", rig)
    kin = Kinematics(rig.model_path, "wrist_cam", JOINTS)
    fit = fit_zero_offsets(kin, poses.q, poses.p_cam)
    assert all(abs(np.rad2deg(v)) < 0.5 for v in fit.offset_rad.values())
    est = fit.estimate
    assert est.residual < 5e-4 and est.residual_unit == "m" and est.noise_floor is None
    # no offset planted: zero lies inside every fitted joint's interval, which is the
    # offset +- the half-width the figures state
    for j, v in fit.offset_rad.items():
        lo, hi = est.interval(j) or (np.nan, np.nan)
        assert lo < 0.0 < hi and est.value(j) == v
        assert (hi - lo) / 2 == pytest.approx(fit.ci95_rad[j], rel=1e-12)
    without_mount = fit_zero_offsets(kin, poses.q, poses.p_cam, fit_mount=False)
    assert without_mount.unidentifiable == ("shoulder_pan",)
    pan = without_mount.estimate["shoulder_pan"]
    assert pan.interval is None and "no rank" in pan.reason


def test_frame_origin_converts_placements(demo_model: Path) -> None:
    m = mujoco.MjModel.from_xml_path(str(demo_model))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    axis = d.site("pan_axis").xpos.copy()
    fo = frame_origin([0.0388353, 0, 0], "base rotation axis", axis, "shoulder_pan")
    assert fo.offset_xy_m == pytest.approx(0.0388353)
    assert fo.reference_to_axis_m == pytest.approx(0.0, abs=1e-9)
    # a cube measured 21 cm in front of the axis sits at x = 0.2488 m in the model
    np.testing.assert_allclose(fo.to_model([[0.21, 0.0, 0.3]]), [[0.2488353, 0.0, 0.3]])
    np.testing.assert_allclose(fo.from_model(fo.to_model([[0.21, 0.05]])), [[0.21, 0.05]])


def test_body_cli_json_and_bad_csv(planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "body.json"
    res = CliRunner().invoke(app, ["body", str(planted), "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    titles = [f["title"] for f in data["findings"]]
    assert titles == ["Joint zero offsets", "Frame origin"]
    assert "joint_offsets_deg" in data["findings"][0]["figures"]
    bad = tmp_path / "bad.csv"
    bad.write_text("shoulder_pan.pos,obj_cam_x\n1,2\n")
    rig = load_rig(planted)
    with pytest.raises(NameNotFoundError, match="shoulder_lift.pos"):
        read_static_poses(bad, rig)
    few = tmp_path / "few.csv"
    few.write_text(
        ",".join([*RECORDED, "obj_cam_x", "obj_cam_y", "obj_cam_z"])
        + "\n"
        + "0,0,0,0,0,0,0,0,-0.1\n"
    )
    with pytest.raises(InputError, match="at least 3 poses"):
        read_static_poses(few, rig)
    rig_path = write_rig(
        tmp_path / "r", planted.parent / "missing.xml", 'static_object_poses = "nothing.csv"'
    )
    res = CliRunner().invoke(app, ["body", str(rig_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output

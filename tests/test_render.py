"""Rendering and the policy's resampling."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.sim.kinematics import CameraOffset, Kinematics
from simgap.sim.render import SceneRenderer, check_segmentation_ids, region_ids
from simgap.sim.resample import purity, resize_bilinear, resize_labels
from tests._twin import JOINTS, START

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ((96, 96, 3), (16, 16)),
        ((480, 640, 3), (16, 16)),
        ((37, 53, 3), (11, 7)),
        ((10, 12, 3), (23, 29)),
        ((96, 96), (20, 13)),
        ((5, 5, 3), (5, 5)),
    ],
)
def test_resize_matches_torch_bilinear(shape: tuple[int, ...], size: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    img = rng.integers(0, 256, shape).astype(np.uint8)
    t = torch.from_numpy(img.astype(np.float32))
    t = t.permute(2, 0, 1)[None] if img.ndim == 3 else t[None, None]
    ref = torch.nn.functional.interpolate(
        t, size=size, mode="bilinear", align_corners=False, antialias=False
    )[0]
    ref = ref.permute(1, 2, 0).numpy() if img.ndim == 3 else ref[0].numpy()
    np.testing.assert_allclose(resize_bilinear(img, size), ref, atol=2e-3)


def test_labels_take_the_majority_of_the_pixels_bilinear_reads() -> None:
    rng = np.random.default_rng(3)
    lab = rng.integers(0, 4, (96, 96))
    out = resize_labels(lab, (16, 16))
    # 96 -> 16: source coordinate 6 i + 2.5 blends rows/cols 6i+2 and 6i+3 equally
    for i in range(16):
        for j in range(16):
            block = lab[6 * i + 2 : 6 * i + 4, 6 * j + 2 : 6 * j + 4].ravel()
            counts = np.bincount(block, minlength=4)
            assert out[i, j] == int(np.argmax(counts))  # argmax: ties to the smaller label
    assert purity(lab == 1, (16, 16)).max() <= 1.0


@pytest.fixture(scope="module")
def renderer(demo_model: Path):
    with SceneRenderer(demo_model, "wrist_cam", JOINTS, object_body="cube") as r:
        yield r


def test_render_matches_mujoco_and_segments_geoms(
    renderer: SceneRenderer, demo_model: Path
) -> None:
    frame = renderer.render(START)
    assert frame.rgb.shape == (96, 96, 3) and frame.rgb.dtype == np.uint8
    m = mujoco.MjModel.from_xml_path(str(demo_model))
    d = mujoco.MjData(m)
    for j, v in zip(JOINTS, START, strict=True):
        d.qpos[m.joint(j).qposadr[0]] = v
    mujoco.mj_forward(m, d)
    with mujoco.Renderer(m, 96, 96) as ref:
        ref.update_scene(d, camera="wrist_cam")
        rgb = ref.render()
        ref.enable_segmentation_rendering()
        ref.update_scene(d, camera="wrist_cam")
        seg = ref.render()[..., 0]
    np.testing.assert_array_equal(frame.rgb, rgb)
    np.testing.assert_array_equal(frame.seg, seg)
    names = {renderer.geom_name(g) for g in np.unique(frame.seg)}
    assert {"floor", "cube", "fixed_jaw_pad"} <= names
    pol = renderer.render_policy(START)
    assert pol.rgb.shape == (16, 16, 3)
    np.testing.assert_allclose(pol.rgb, resize_bilinear(frame.rgb, (16, 16)))


def test_projection_lands_on_the_cube(renderer: SceneRenderer) -> None:
    frame = renderer.render(START)
    cube = renderer.model.geom("cube").id
    ys, xs = np.nonzero(frame.seg == cube)
    kin = renderer.kin
    kin.set_q(START)
    uv = kin.project(kin.to_camera(kin.geom_positions([cube])[0], START), (96, 96))
    assert abs(uv[0] - (xs.mean() + 0.5)) < 2.0 and abs(uv[1] - (ys.mean() + 0.5)) < 2.0


def test_camera_offset_moves_the_view_and_is_restored(renderer: SceneRenderer) -> None:
    base = renderer.render(START, segmentation=False).rgb
    moved = renderer.render(
        START, camera_offset=CameraOffset(rot_rad=(0.1, 0, 0)), segmentation=False
    ).rgb
    assert np.abs(base.astype(int) - moved).mean() > 1.0
    again = renderer.render(START, segmentation=False).rgb
    np.testing.assert_array_equal(base, again)


def test_object_pose_moves_the_object(renderer: SceneRenderer) -> None:
    cube = renderer.model.geom("cube").id
    away = renderer.render(START, object_pos=(-0.5, 0.5, 0.0125)).seg
    assert not (away == cube).any()


def test_unknown_camera_lists_valid_ones(demo_model: Path) -> None:
    with pytest.raises(NameNotFoundError, match="wrist_cam"):
        SceneRenderer(demo_model, "front_cam", JOINTS)


def test_closed_renderer_refuses(demo_model: Path) -> None:
    r = SceneRenderer(demo_model, "wrist_cam", JOINTS, (32, 32), (8, 8))
    r.close()
    r.close()
    with pytest.raises(InputError, match="open renderer"):
        r.render(START)


def test_segmentation_ids_and_region_names(renderer: SceneRenderer) -> None:
    with pytest.raises(InputError, match="geom ids"):
        check_segmentation_ids(np.array([[0, 99]]), renderer.n_geoms)
    with pytest.raises(NameNotFoundError, match="fixed_jaw_pad"):
        region_ids(renderer, ["no_such_pad"], "cube")
    groups = region_ids(renderer, (), "cube")
    names = {renderer.geom_name(g) for g in groups["jaws"]}
    assert {"fixed_jaw", "moving_jaw_pad"} <= names and "cube" not in names
    assert -1 in groups["background"] and renderer.model.geom("floor").id in groups["background"]


def test_kinematics_chain_and_axis(demo_model: Path) -> None:
    kin = Kinematics(demo_model, "wrist_cam", JOINTS)
    assert kin.chain_joints() == JOINTS[:5]
    axis, _, name = kin.base_axis()
    m = mujoco.MjModel.from_xml_path(str(demo_model))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    np.testing.assert_allclose(axis[:2], d.site("pan_axis").xpos[:2], atol=1e-9)
    assert name == "shoulder_pan"

"""The fake arm's camera (issue 39): one renderer kept per camera, a render model sized to the
camera with simplified meshes and culled geoms, frames that follow the joints, the
background thread on the real clock, the once-only rate warning, and the renderer closed on
disconnect. Behaviour only: the timing is measured by benchmarks/fake_arm_camera.py."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.fakearm import FakeCameraConfig, FakeSO101, FakeSO101Config
from simgap.fakearm.camera import CameraRateWarning

pytestmark = pytest.mark.usefixtures("gl_backend")


def _arm(fps: float = 10.0, size: tuple[int, int] = (24, 32), **kw: Any) -> FakeSO101:
    cam = FakeCameraConfig(
        fps=fps, height=size[0], width=size[1], **{k: kw.pop(k) for k in ("background",) if k in kw}
    )
    return FakeSO101(FakeSO101Config(write_goal_before_torque=True, cameras={"wrist": cam}, **kw))


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every CameraRenderer the fake arm makes, in order."""
    import simgap.sim.fake_arm as fake_arm

    out: list[Any] = []
    real = fake_arm.CameraRenderer

    def spy(*a: Any, **kw: Any) -> Any:
        out.append(real(*a, **kw))
        return out[-1]

    monkeypatch.setattr(fake_arm, "CameraRenderer", spy)
    return out


def test_one_renderer_is_kept_and_closed_on_disconnect(made: list[Any]) -> None:
    r = _arm(fps=10.0)
    r.connect()
    for k in range(6):
        r.send_action({"shoulder_pan.pos": 5.0 * k})
        r.clock.sleep(0.1)
        assert r.get_observation()["wrist"].shape == (24, 32, 3)
    assert len(made) == 1 and made[0].n_renders == 7  # the warm-up frame at connect + 6
    assert not made[0].closed
    r.disconnect()
    assert made[0].closed and r._sim._renderer is None


def test_render_model_is_sized_to_the_camera(made: list[Any]) -> None:
    r = _arm(size=(24, 32))
    r.connect()
    m = made[0].model
    assert (m.vis.global_.offheight, m.vis.global_.offwidth) == (24, 32)
    assert m.vis.quality.offsamples == 0
    # the physics model keeps the modelled settings; the render model is a copy
    assert (r._sim.model.vis.global_.offheight, r._sim.model.vis.global_.offwidth) == (128, 128)
    assert r._sim.model.vis.quality.offsamples == 4
    r.disconnect()


def test_frames_follow_the_joints_and_repeat_for_the_same_pose() -> None:
    r = _arm(fps=10.0)
    r.connect()
    r.clock.sleep(0.5)
    first = r.get_observation()["wrist"]
    r.send_action({"wrist_flex.pos": 40.0, "wrist_roll.pos": 60.0})
    r.clock.sleep(1.0)
    moved = r.get_observation()["wrist"]
    assert first.dtype == np.uint8 and first.shape == moved.shape == (24, 32, 3)
    assert np.abs(moved.astype(int) - first).mean() > 1.0
    again = r._sim.make_camera()
    try:
        state = r._sim.camera_state()
        np.testing.assert_array_equal(again.render(*state), again.render(*state))
    finally:
        again.close()
    r.disconnect()


def test_culling_and_simplified_meshes_on_the_menagerie_so101(shared_data: Path) -> None:
    import mujoco

    from simgap.sim.render import CameraRenderer

    m = mujoco.MjModel.from_xml_path(str(shared_data / "so101" / "scene_box.xml"))
    rng = np.random.default_rng(0)
    qs = []
    for _ in range(6):
        q = m.qpos0.copy()
        q[:5] = rng.uniform(-1.0, 1.0, 5)
        qs.append(q)
    with (
        CameraRenderer(m, "wrist_cam", 64, 64) as fast,
        CameraRenderer(m, "wrist_cam", 64, 64, mesh_cell_m=None) as full,
    ):
        assert fast.model.mesh_facenum.sum() < m.mesh_facenum.sum() / 5
        assert full.model.mesh_facenum.sum() == m.mesh_facenum.sum()
        for q in qs:
            a, b = fast.render(q), full.render(q)
            assert 0 < fast.n_drawn < int(np.count_nonzero(m.geom_group < 3))
            assert np.abs(a.astype(int) - b).mean() < 3.0  # the same picture, to the eye
            full._cull = lambda: None  # type: ignore[method-assign]
            full.model.geom_group[:] = full._group
            np.testing.assert_array_equal(full.render(q), b)  # culling hides nothing seen
            del full._cull
    assert m.mesh_facenum.sum() == 348164  # the physics model is not touched


def test_real_clock_renders_on_a_thread_and_stops_with_the_arm(made: list[Any]) -> None:
    r = _arm(fps=20.0, realtime=True)
    r.connect()
    assert r.camera is not None and r.camera.background and r.camera.running
    stamps = []
    for _ in range(12):
        r.get_observation()
        stamps.append(r.camera_frame()[0])
        time.sleep(0.05)
    assert len(set(stamps)) >= 4 and stamps == sorted(stamps)
    assert all(abs(t * 20.0 - round(t * 20.0)) < 1e-6 for t in stamps)  # capture instants
    assert len(made) == 1 and r.camera.renderer is made[0]
    r.disconnect()
    assert not r.camera.running and made[0].closed


def test_background_needs_the_real_clock() -> None:
    from simgap.errors import InputError

    r = _arm(background=True)
    with pytest.raises(InputError, match="realtime=True"):
        r.connect()


@pytest.mark.parametrize("background", [True, False])
def test_a_rate_that_cannot_be_met_is_said_once(
    monkeypatch: pytest.MonkeyPatch, background: bool
) -> None:
    from simgap.sim.render import CameraRenderer

    real = CameraRenderer.render

    def slow(self: CameraRenderer, *a: Any, **kw: Any) -> np.ndarray:
        time.sleep(0.06)  # 16 frames/s at most, against 30 configured
        return real(self, *a, **kw)

    monkeypatch.setattr(CameraRenderer, "render", slow)
    r = _arm(fps=30.0, realtime=True, background=background)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r.connect()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.2:
            r.get_observation()
            time.sleep(1 / 30)
        r.disconnect()
    rate = [w for w in caught if issubclass(w.category, CameraRateWarning)]
    assert len(rate) == 1, [str(w.message) for w in caught]
    msg = str(rate[0].message)
    assert "'wrist'" in msg and "configured 30 fps" in msg and "frames/s" in msg
    measured = float(msg.split(" renders ")[1].split(" frames/s", maxsplit=1)[0])
    assert 5.0 < measured < 17.0
    assert r.camera is not None and r.camera.warned == msg


def test_no_rate_warning_on_the_virtual_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from simgap.sim.render import CameraRenderer

    real = CameraRenderer.render
    monkeypatch.setattr(
        CameraRenderer, "render", lambda self, *a, **kw: (time.sleep(0.04), real(self, *a, **kw))[1]
    )
    r = _arm(fps=30.0)
    r.connect()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CameraRateWarning)
        for _ in range(8):
            r.clock.sleep(1 / 30)
            r.get_observation()
    r.disconnect()  # simulated time waits for the render: the rate is kept

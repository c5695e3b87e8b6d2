"""Render the rig's camera offscreen: RGB and segmentation, at render and policy resolution.

Rendering needs an OpenGL backend chosen before MuJoCo is imported: ``MUJOCO_GL=osmesa``
(software, any CPU machine; also set ``PYOPENGL_PLATFORM=osmesa``) or ``MUJOCO_GL=egl``
(a GPU). One ``SceneRenderer`` holds one GL context; use it as a context manager or call
``close()`` so the context is released.

Frames are resized to the policy's input resolution with the policy's own resampling
(``simgap.sim.resample``: bilinear, align_corners=False, no antialias); segmentation
is resized by weighted majority with the same weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import mujoco
import numpy as np
import numpy.typing as npt

from simgap.errors import InputError, NameNotFoundError, SimgapError
from simgap.sim.kinematics import CameraOffset, Kinematics, mat_to_quat
from simgap.sim.model import load_model, names, object_id
from simgap.sim.render_model import RENDER_MESH_CELL_M, render_model
from simgap.sim.resample import resize_bilinear, resize_labels


class RenderBackendError(SimgapError):
    """No OpenGL context could be made for offscreen rendering."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"offscreen rendering could not start ({why.strip() or 'no GL context'}). Set "
            "MUJOCO_GL=osmesa and PYOPENGL_PLATFORM=osmesa (software, any machine; needs "
            "libosmesa6) or MUJOCO_GL=egl (a GPU) in the environment before running simgap."
        )


@dataclass(frozen=True)
class RenderedFrame:
    """One rendered view.

    Attributes:
        rgb: colour, shape (H, W, 3); uint8 at render resolution, float64 0..255 at policy
            resolution (the policy's resampling returns fractional values).
        seg: geom id per pixel, shape (H, W), int; -1 where no geom was hit.
    """

    rgb: np.ndarray
    seg: np.ndarray


class SceneRenderer:
    """A persistent offscreen renderer of one camera of one model.

    Args:
        model: an ``MjModel`` (copied) or a path to MJCF.
        camera: camera name; a miss lists the model's cameras.
        joint_names: joints in the order angles are given.
        resolution: (height, width) rendered [px].
        policy_resolution: (height, width) the policy sees [px].
        object_body: body of the movable object (with a free joint), for ``object_pos``.
        object_geom: the object's geom; its body is used when ``object_body`` is None.
        source: file named in errors (the rig or the model).
    """

    def __init__(
        self,
        model: mujoco.MjModel | str | Path,
        camera: str,
        joint_names: Sequence[str],
        resolution: tuple[int, int] = (96, 96),
        policy_resolution: tuple[int, int] = (16, 16),
        object_body: str | None = None,
        object_geom: str | None = None,
        source: str | Path | None = None,
    ) -> None:
        if isinstance(model, mujoco.MjModel):
            self.model = model.__copy__()
        else:
            self.model = load_model(model)
            source = source or model
        self.source = source
        cams = names(self.model, "camera")
        if mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            raise NameNotFoundError("camera", camera, cams, file=source, field="camera.name")
        self.camera = camera
        self.kin = Kinematics(self.model, camera, joint_names, source=source)
        self.data = self.kin.data
        self.resolution = (int(resolution[0]), int(resolution[1]))
        self.policy_resolution = (int(policy_resolution[0]), int(policy_resolution[1]))
        g = self.model.vis.global_
        g.offheight = max(int(g.offheight), self.resolution[0])
        g.offwidth = max(int(g.offwidth), self.resolution[1])
        self._obj_qadr: int | None = None
        if object_body is None and object_geom is not None:
            object_body = self.kin.body_of_geom(object_geom)
        self.object_body = object_body
        if object_body is not None:
            bid = object_id(self.model, "body", object_body, source=source)
            jadr = int(self.model.body_jntadr[bid])
            if jadr < 0 or int(self.model.jnt_type[jadr]) != int(mujoco.mjtJoint.mjJNT_FREE):
                raise InputError(
                    file=source,
                    field="model.object_body",
                    expected="a body with a free joint",
                    got=object_body,
                    fix="give the object a <freejoint/> in the model",
                )
            self._obj_qadr = int(self.model.jnt_qposadr[jadr])
        try:
            self._renderer: mujoco.Renderer | None = mujoco.Renderer(
                self.model, self.resolution[0], self.resolution[1]
            )
        except Exception as e:  # GL backends raise their own types (GLFW, EGL, OSMesa errors)
            raise RenderBackendError(str(e)) from e
        self.n_renders = 0

    # ---- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> SceneRenderer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the GL context (idempotent)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # ---- names -------------------------------------------------------------------------
    def geom_name(self, gid: int) -> str:
        """The name of geom ``gid`` ('' when unnamed, 'none' for -1)."""
        if gid < 0:
            return "none"
        return mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, int(gid)) or ""

    @property
    def n_geoms(self) -> int:
        """Number of geoms in the model (valid segmentation ids are -1 .. n_geoms - 1)."""
        return int(self.model.ngeom)

    # ---- rendering ---------------------------------------------------------------------
    def _apply(
        self,
        q: npt.ArrayLike,
        object_pos: npt.ArrayLike | None,
        object_quat: npt.ArrayLike | None,
        offset: CameraOffset | None,
    ) -> None:
        cid = self.kin.cam_id
        pos, rot = self.kin.camera_local(offset)
        self.model.cam_pos[cid] = pos
        self.model.cam_quat[cid] = mat_to_quat(rot)
        if object_pos is not None or object_quat is not None:
            if self._obj_qadr is None:
                raise InputError(
                    file=self.source,
                    field="model.object_body",
                    expected="the object's body, to place the object",
                    got="nothing",
                    fix="set model.object_body in rig.toml",
                )
            a = self._obj_qadr
            if object_pos is not None:
                self.data.qpos[a : a + 3] = np.asarray(object_pos, dtype=float).reshape(3)
            if object_quat is not None:
                self.data.qpos[a + 3 : a + 7] = np.asarray(object_quat, dtype=float).reshape(4)
        self.kin.set_q(q)
        mujoco.mj_camlight(self.model, self.data)

    def render(
        self,
        q: npt.ArrayLike,
        *,
        object_pos: npt.ArrayLike | None = None,
        object_quat: npt.ArrayLike | None = None,
        camera_offset: CameraOffset | None = None,
        segmentation: bool = True,
    ) -> RenderedFrame:
        """Render at render resolution.

        Args:
            q: joint angles [rad], shape (J,).
            object_pos: object position [m] (3,), when the object is to be moved.
            object_quat: object orientation (w, x, y, z).
            camera_offset: a perturbation of the camera mount (camera frame).
            segmentation: also render the geom-id map (a second pass).

        Returns:
            uint8 RGB (H, W, 3) and geom ids (H, W) (all -1 when ``segmentation`` is False).
        """
        if self._renderer is None:
            raise InputError(
                expected="an open renderer",
                got="a closed one",
                fix="render inside the 'with SceneRenderer(...)' block",
            )
        self._apply(q, object_pos, object_quat, camera_offset)
        r = self._renderer
        r.update_scene(self.data, camera=self.kin.cam_id)
        rgb = np.array(r.render(), dtype=np.uint8)
        seg = np.full(self.resolution, -1, dtype=np.int64)
        if segmentation:
            r.enable_segmentation_rendering()
            try:
                r.update_scene(self.data, camera=self.kin.cam_id)
                raw = np.array(r.render())
            finally:
                r.disable_segmentation_rendering()
            is_geom = raw[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)
            seg = np.where(is_geom, raw[..., 0], -1).astype(np.int64)
        self.n_renders += 1
        # restore the modelled camera so later renders without an offset are unperturbed
        self.model.cam_pos[self.kin.cam_id] = self.kin.cam_pos0
        self.model.cam_quat[self.kin.cam_id] = self.kin.cam_quat0
        return RenderedFrame(rgb=rgb, seg=seg)

    def render_policy(self, q: npt.ArrayLike, **kw: object) -> RenderedFrame:
        """Render, then resize to the policy resolution (float RGB 0..255, majority labels)."""
        full = self.render(q, **kw)  # type: ignore[arg-type]
        return to_policy(full, self.policy_resolution)


def to_policy(frame: RenderedFrame, size: tuple[int, int]) -> RenderedFrame:
    """A rendered frame resized like the policy's preprocessing."""
    return RenderedFrame(rgb=resize_bilinear(frame.rgb, size), seg=resize_labels(frame.seg, size))


def check_segmentation_ids(
    seg: npt.ArrayLike,
    n_geoms: int,
    source: str | Path | None = None,
) -> None:
    """Every id in a segmentation map must be -1 or a geom of the model."""
    s = np.asarray(seg)
    bad = np.unique(s[(s < -1) | (s >= n_geoms)])
    if bad.size:
        raise InputError(
            file=source,
            field="segmentation",
            expected=f"geom ids in -1..{n_geoms - 1}",
            got=f"ids {bad.tolist()[:8]} the model does not have",
            fix="render the segmentation with the same model as the regions",
        )


def region_ids(
    renderer: SceneRenderer, gripper_geoms: Sequence[str] = (), object_geom: str | None = None
) -> dict[str, tuple[int, ...]]:
    """Geom ids of the named regions: ``jaws``, ``object`` and ``background``.

    Jaws are ``gripper_geoms`` when given, else every geom that moves with the camera's
    rigid body or below it (the gripper the camera looks at). The object is ``object_geom``
    (no ids when None). The background is every plane geom (the floor) plus -1 (no geom).
    A name the model lacks is an error that lists the model's geoms.
    """
    m = renderer.model
    if gripper_geoms:
        jaws = tuple(object_id(m, "geom", g, source=renderer.source) for g in gripper_geoms)
    else:
        jaws = tuple(renderer.kin.body_geoms())
    obj = (
        () if object_geom is None else (object_id(m, "geom", object_geom, source=renderer.source),)
    )
    planes = tuple(
        g for g in range(m.ngeom) if int(m.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE)
    )
    return {"jaws": jaws, "object": obj, "background": (-1,) + planes}


def render_rig_view(
    model_path: str | Path,
    camera: str,
    joint_names: Sequence[str],
    q: npt.ArrayLike,
    resolution: tuple[int, int],
    policy_resolution: tuple[int, int] | None = None,
    camera_offset: CameraOffset | None = None,
) -> np.ndarray:
    """One uint8 RGB view of a camera at joint angles ``q`` [rad]; resized like the policy's
    input when ``policy_resolution`` is given (values rounded to uint8)."""
    with SceneRenderer(
        model_path, camera, joint_names, resolution, policy_resolution or resolution
    ) as r:
        frame = r.render(q, camera_offset=camera_offset, segmentation=False)
    if policy_resolution is None:
        return frame.rgb
    out: np.ndarray = np.clip(
        np.rint(resize_bilinear(frame.rgb, policy_resolution)), 0, 255
    ).astype(np.uint8)
    return out


# ---- live cameras: one camera rendered fast, frame after frame -------------------------------


class CameraRenderer:
    """One camera of a model, rendered again and again at a small size (a live camera).

    Made once and kept: one GL context and one ``mujoco.Renderer``, on a render-only copy of
    the model (``render_model``: buffer sized to the camera, simplified meshes) with its own
    ``MjData``, so rendering never touches the physics. Each ``render(qpos)`` copies the
    joint positions, runs forward kinematics and draws the visual geom groups (0, 1, 2;
    collision geoms of groups 3 and up are not drawn), without shadows or reflections, and
    only the geoms whose bounding sphere meets the camera's view cone (a wrist camera sees 6
    or 7 of the Menagerie SO-101's 20 visual meshes; the software rasteriser transforms
    every vertex it is given, seen or not).
    Close it (or use it as a context manager) on the thread that made it.

    Args:
        model: the physics model (copied; not changed).
        camera: the MJCF camera's name.
        height: image height [px].
        width: image width [px].
        mesh_cell_m: cell meshes are simplified to [m]; None draws them as they are.
        source: file named in errors.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        camera: str,
        height: int,
        width: int,
        mesh_cell_m: float | None = RENDER_MESH_CELL_M,
        source: str | Path | None = None,
    ) -> None:
        self.cam_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if self.cam_id < 0:
            raise NameNotFoundError(
                "camera", camera, names(model, "camera"), file=source, field="camera.name"
            )
        self.camera = camera
        self.shape = (int(height), int(width), 3)
        self.model = render_model(model, height, width, mesh_cell_m)
        self.data = mujoco.MjData(self.model)
        self.option = mujoco.MjvOption()
        self.option.geomgroup[:] = (1, 1, 1, 0, 0, 0)
        try:
            self._renderer: mujoco.Renderer | None = mujoco.Renderer(
                self.model, int(height), int(width)
            )
        except Exception as e:  # GL backends raise their own types (EGL, OSMesa errors)
            raise RenderBackendError(str(e)) from e
        flags = self._renderer.scene.flags
        flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        self._out = np.empty(self.shape, dtype=np.uint8)
        self.n_renders = 0
        self.n_drawn = 0
        """Geoms drawn in the latest render (after culling)."""
        self._group = self.model.geom_group.copy()
        self._always = np.isin(
            self.model.geom_type,
            (int(mujoco.mjtGeom.mjGEOM_PLANE), int(mujoco.mjtGeom.mjGEOM_HFIELD)),
        )
        self._cone_tan = self._view_cone_tan(int(height), int(width))

    def __enter__(self) -> CameraRenderer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """Whether ``close`` ran."""
        return self._renderer is None

    def close(self) -> None:
        """Release the GL context (idempotent)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def render(
        self,
        qpos: npt.ArrayLike,
        mocap_pos: npt.ArrayLike | None = None,
        mocap_quat: npt.ArrayLike | None = None,
    ) -> np.ndarray:
        """The camera's image at generalised positions ``qpos`` (shape (nq,)).

        Returns:
            a new uint8 array (H, W, 3).
        """
        if self._renderer is None:
            raise InputError(
                field="camera",
                expected="an open camera renderer",
                got="a closed one",
                fix="render before disconnect()/close()",
            )
        d = self.data
        d.qpos[:] = np.asarray(qpos, dtype=float).reshape(self.model.nq)
        if mocap_pos is not None:
            d.mocap_pos[:] = np.asarray(mocap_pos, dtype=float).reshape(-1, 3)
        if mocap_quat is not None:
            d.mocap_quat[:] = np.asarray(mocap_quat, dtype=float).reshape(-1, 4)
        mujoco.mj_kinematics(self.model, d)
        mujoco.mj_comPos(self.model, d)  # tracking cameras and lights follow subtree centres
        mujoco.mj_camlight(self.model, d)
        self._cull()
        self._renderer.update_scene(d, camera=self.cam_id, scene_option=self.option)
        self._renderer.render(out=self._out)
        self.n_renders += 1
        return self._out.copy()

    def _view_cone_tan(self, height: int, width: int) -> float:
        """Tangent of a cone around the camera's axis that holds its whole view (generous:
        the largest half-angle of fovy, the sensor, either aspect, then the diagonal)."""
        m, c = self.model, self.cam_id
        ty = math.tan(math.radians(float(m.cam_fovy[c])) / 2.0)
        tans = [ty, ty * width / height, ty * height / width]
        sensor, fxy = m.cam_sensorsize[c], m.cam_intrinsic[c][:2]
        if sensor[0] > 0 and sensor[1] > 0 and fxy[0] > 0 and fxy[1] > 0:
            tx, ty2 = sensor[0] / 2.0 / fxy[0], sensor[1] / 2.0 / fxy[1]
            tans += [float(tx), float(ty2), float(tx) * height / width, float(ty2) * width / height]
        return math.sqrt(2.0) * 1.05 * max(tans)

    def _cull(self) -> None:
        """Hide (group 5, not drawn) the geoms whose bounding sphere is outside the view cone."""
        m, d, c = self.model, self.data, self.cam_id
        xmat = d.geom_xmat.reshape(-1, 3, 3)
        centre = d.geom_xpos + np.einsum("gij,gj->gi", xmat, m.geom_aabb[:, :3])
        radius = np.linalg.norm(m.geom_aabb[:, 3:], axis=1)
        rel = (centre - d.cam_xpos[c]) @ d.cam_xmat[c].reshape(3, 3)  # camera frame
        ahead = -rel[:, 2]  # cameras look along -z
        side = np.hypot(rel[:, 0], rel[:, 1])
        t = self._cone_tan
        seen = (ahead > -radius) & (side <= ahead * t + radius * math.sqrt(1.0 + t * t))
        seen |= self._always
        m.geom_group[:] = np.where(seen, self._group, 5)
        self.n_drawn = int(np.count_nonzero(seen & (self._group < 3)))

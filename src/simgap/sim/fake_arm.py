"""The MuJoCo side of the fake SO-101: joints driven by position actuators, a scene object
that can be moved, servo torque switched per joint, and an optional small wrist camera.

This module knows radians and seconds only. Encoder ticks, registers, normalisation and the
trace live in ``simgap.fakearm`` (which does not import mujoco).

Physics is advanced in batches: ``advance_to(t)`` steps the model until its time reaches
``t`` [s], so one call per control tick costs ``control_dt / timestep`` steps and nothing
else. Images are rendered only when asked (``render()``), only when a camera is configured,
by one ``CameraRenderer`` kept for the arm's life (a render-only copy of the model with the
buffer sized to the camera and simplified meshes; see ``simgap.sim.render``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from simgap.errors import InputError
from simgap.sim.model import load_model, names, object_id
from simgap.sim.render import CameraRenderer
from simgap.sim.render_model import RENDER_MESH_CELL_M

HELD_FRICTION_NM = 5.0
"""Friction [N m] a joint gets while its torque is off: the 1/345 gear train of an STS3215
holds the arm in place when unpowered, so the joint does not fall under gravity."""


@dataclass(frozen=True)
class SimCamera:
    """A camera rendered on demand.

    Attributes:
        name: the MJCF camera name.
        height: image height [px] (keep small: 32 to 96).
        width: image width [px].
        mesh_cell_m: cell [m] meshes are simplified to for this camera; None draws them as
            they are (the Menagerie SO-101 then costs ~9x more a frame).
    """

    name: str = "wrist_cam"
    height: int = 64
    width: int = 64
    mesh_cell_m: float | None = RENDER_MESH_CELL_M


class ArmSim:
    """A stepped MuJoCo arm whose actuated hinge joints are driven by position actuators.

    Args:
        model_path: MJCF file; every actuator must be a position actuator on one joint.
        camera: render this camera on ``render()``; None renders nothing.
        keyframe: the keyframe to start from (``rest`` in the demo model), if present.
        object_body: a free body that ``place_object`` moves (``cube`` in the demo model).
    """

    def __init__(
        self,
        model_path: str | Path,
        camera: SimCamera | None = None,
        keyframe: str | None = "rest",
        object_body: str | None = "cube",
    ) -> None:
        self.model_path = Path(model_path)
        self.model = load_model(self.model_path)
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.joint_names: list[str] = []
        self._qadr: list[int] = []
        self._dadr: list[int] = []
        for a in range(m.nu):
            if m.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
                raise InputError(
                    file=self.model_path,
                    field=f"actuator {a}",
                    expected="a position actuator on a joint",
                    got="another transmission",
                )
            j = int(m.actuator_trnid[a, 0])
            self.joint_names.append(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j))
            self._qadr.append(int(m.jnt_qposadr[j]))
            self._dadr.append(int(m.jnt_dofadr[j]))
        self._gain = m.actuator_gainprm[:, 0].copy()
        self._bias = m.actuator_biasprm[:, :3].copy()
        self._friction = m.dof_frictionloss.copy()
        if keyframe and keyframe in self._key_names():
            mujoco.mj_resetDataKeyframe(m, self.data, self._key_names().index(keyframe))
        self._obj_qadr: int | None = None
        if object_body and object_body in names(m, "body"):
            b = object_id(m, "body", object_body)
            jnt = int(m.body_jntadr[b])
            if jnt >= 0 and m.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_FREE:
                self._obj_qadr = int(m.jnt_qposadr[jnt])
        self.torque = np.zeros(m.nu, dtype=bool)
        for a in range(m.nu):
            self.set_torque(a, False)
        mujoco.mj_forward(m, self.data)
        self.camera = camera
        self._renderer: CameraRenderer | None = None
        if camera is not None:
            object_id(m, "camera", camera.name, self.model_path)

    def _key_names(self) -> list[str]:
        return [
            mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_KEY, k) or ""
            for k in range(self.model.nkey)
        ]

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return float(self.data.time)

    @property
    def timestep(self) -> float:
        """Physics step [s]."""
        return float(self.model.opt.timestep)

    def joint_range(self, i: int) -> tuple[float, float]:
        """Range [rad] of actuated joint ``i``."""
        j = int(self.model.actuator_trnid[i, 0])
        lo, hi = self.model.jnt_range[j]
        return float(lo), float(hi)

    def qpos(self) -> np.ndarray:
        """Actuated joint positions [rad], shape (J,)."""
        return np.array([self.data.qpos[a] for a in self._qadr])

    def actuator_force(self) -> np.ndarray:
        """Actuator forces [N m], shape (J,)."""
        return self.data.actuator_force.copy()

    def force_limit(self) -> np.ndarray:
        """Largest actuator force [N m], shape (J,) (inf where unlimited)."""
        m = self.model
        out = np.full(m.nu, np.inf)
        lim = m.actuator_forcelimited.astype(bool)
        out[lim] = np.maximum(
            np.abs(m.actuator_forcerange[lim, 0]), np.abs(m.actuator_forcerange[lim, 1])
        )
        return out

    def set_target(self, i: int, q_rad: float) -> None:
        """Position target [rad] of actuator ``i`` (MuJoCo clips it to the control range)."""
        self.data.ctrl[i] = q_rad

    def set_torque(self, i: int, on: bool) -> None:
        """Servo torque on (actuator drives) or off (no drive; the gear train holds)."""
        m = self.model
        dof = self._dadr[i]
        if on:
            m.actuator_gainprm[i, 0] = self._gain[i]
            m.actuator_biasprm[i, :3] = self._bias[i]
            m.dof_frictionloss[dof] = self._friction[dof]
        else:
            m.actuator_gainprm[i, 0] = 0.0
            m.actuator_biasprm[i, :3] = 0.0
            m.dof_frictionloss[dof] = max(self._friction[dof], HELD_FRICTION_NM)
        self.torque[i] = on

    def advance_to(self, t: float) -> int:
        """Step physics until the simulated time reaches ``t`` [s]; returns the steps taken."""
        n = int(np.floor((t - self.data.time) / self.model.opt.timestep + 1e-9))
        if n > 0:
            mujoco.mj_step(self.model, self.data, nstep=n)
        return max(n, 0)

    def place_object(self, x: float, y: float) -> None:
        """Move the scene object to ``(x, y)`` [m] on the table, at rest."""
        if self._obj_qadr is None:
            return
        a = self._obj_qadr
        self.data.qpos[a : a + 2] = (x, y)
        self.data.qpos[a + 3 : a + 7] = (1.0, 0.0, 0.0, 0.0)
        jnt = [j for j in range(self.model.njnt) if self.model.jnt_qposadr[j] == a][0]
        d = int(self.model.jnt_dofadr[jnt])
        self.data.qvel[d : d + 6] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def object_xy(self) -> tuple[float, float] | None:
        """The scene object's position on the table [m], if the model has one."""
        if self._obj_qadr is None:
            return None
        a = self._obj_qadr
        return float(self.data.qpos[a]), float(self.data.qpos[a + 1])

    def make_camera(self) -> CameraRenderer:
        """A new renderer of the configured camera (the caller closes it, on its own thread).

        Raises:
            InputError: no camera was configured.
        """
        if self.camera is None:
            raise InputError(
                field="camera",
                expected="a configured camera",
                got="none",
                fix="pass camera=SimCamera(...) to render images",
            )
        c = self.camera
        return CameraRenderer(
            self.model, c.name, c.height, c.width, mesh_cell_m=c.mesh_cell_m, source=self.model_path
        )

    def camera_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of what a camera image depends on: qpos, mocap positions and orientations."""
        d = self.data
        return d.qpos.copy(), d.mocap_pos.copy(), d.mocap_quat.copy()

    def render(self) -> np.ndarray:
        """The camera image of the current state, uint8 shape (H, W, 3).

        The renderer is made on the first call and kept until ``close()``.

        Raises:
            InputError: no camera was configured.
        """
        if self._renderer is None:
            self._renderer = self.make_camera()
        return self._renderer.render(*self.camera_state())

    def close(self) -> None:
        """Free the renderer."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

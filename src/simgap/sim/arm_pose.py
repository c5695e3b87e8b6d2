"""The arm's visual shapes and the world pose of each of them at given joint angles, to
draw the arm in 3D (the Rerun recording's ``world/...``).

Shapes are the visual geoms (groups 0 to 2, as the camera renderer draws them) of every body
that moves with the rig's joints or is fixed to the world (not the world body's own floor and
planes, not a free-floating object, whose real pose a joint recording does not give). Meshes
come as triangles, simplified the way the live camera simplifies them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import numpy.typing as npt

from simgap.sim.fk import JointPoser
from simgap.sim.render_model import RENDER_MESH_CELL_M, simplify_meshes

KINDS = {
    int(mujoco.mjtGeom.mjGEOM_BOX): "box",
    int(mujoco.mjtGeom.mjGEOM_CAPSULE): "capsule",
    int(mujoco.mjtGeom.mjGEOM_CYLINDER): "cylinder",
    int(mujoco.mjtGeom.mjGEOM_SPHERE): "sphere",
    int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): "ellipsoid",
    int(mujoco.mjtGeom.mjGEOM_MESH): "mesh",
}
"""MuJoCo geom types drawn, by the name used for them (planes and height fields are not)."""


@dataclass(frozen=True)
class GeomShape:
    """One visual geom, placed in its body's frame.

    Attributes:
        body: index into ``ArmShapes.bodies``.
        geom: the geom's id in the model.
        name: the geom's MJCF name, else ``geom<id>`` (unique among the shapes: ``#<id>``
            is added to a name taken already).
        kind: one of ``KINDS``' names.
        size: MuJoCo's size [m], shape (3,): half-extents (box), radius and half-length
            (capsule, cylinder), radius (sphere), semi-axes (ellipsoid); unused for meshes.
        pos: position in the body's frame [m], shape (3,).
        quat: orientation in the body's frame, (w, x, y, z).
        rgba: colour, 0..1, shape (4,).
        vertices: mesh vertices in the geom's frame [m], shape (V, 3); None unless a mesh.
        triangles: vertex indices, shape (F, 3); None unless a mesh.
    """

    body: int
    geom: int
    name: str
    kind: str
    size: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    rgba: np.ndarray
    vertices: np.ndarray | None = None
    triangles: np.ndarray | None = None


@dataclass(frozen=True)
class ArmShapes:
    """The arm to draw: its bodies (MJCF names, parents before children) and their shapes."""

    bodies: tuple[str, ...]
    shapes: tuple[GeomShape, ...]


class ArmPoser(JointPoser):
    """World poses of the arm's bodies as a function of named joint angles.

    Args:
        model_path: the rig's MJCF.
        joint_names: model joints, one per column of the ``q`` given to ``poses``.
        mesh_cell_m: cell the meshes are simplified to [m] (None keeps them).
    """

    def __init__(
        self,
        model_path: str | Path,
        joint_names: Sequence[str],
        mesh_cell_m: float | None = RENDER_MESH_CELL_M,
    ) -> None:
        super().__init__(model_path, joint_names)
        self._bodies = self._drawn_bodies()
        self.shapes = self._shapes(mesh_cell_m)

    def _floating(self, b: int) -> bool:
        m, a = self.model, int(self.model.body_jntadr[b])
        free = int(mujoco.mjtJoint.mjJNT_FREE)
        return any(int(m.jnt_type[j]) == free for j in range(a, a + int(m.body_jntnum[b])))

    def _drawn_bodies(self) -> list[int]:
        """Bodies with a drawn geom, but for a free-floating one and what hangs off it."""
        m = self.model
        return [
            b
            for b in range(1, int(m.nbody))
            if not self._floating(b)
            and not self._floating(int(m.body_rootid[b]))
            and any(self._drawn(g) for g in self._geoms(b))
        ]

    def _geoms(self, b: int) -> range:
        a = int(self.model.body_geomadr[b])
        return range(a, a + int(self.model.body_geomnum[b])) if a >= 0 else range(0)

    def _drawn(self, g: int) -> bool:
        m = self.model
        return (
            int(m.geom_group[g]) < 3
            and int(m.geom_type[g]) in KINDS
            and float(m.geom_rgba[g][3]) > 0.0
        )

    def _shapes(self, mesh_cell_m: float | None) -> ArmShapes:
        m = self.model
        if mesh_cell_m is not None and m.nmesh:
            simplify_meshes(m, mesh_cell_m)  # the face lists only: poses are unchanged
        shapes: list[GeomShape] = []
        for k, b in enumerate(self._bodies):
            for g in self._geoms(b):
                if not self._drawn(g):
                    continue
                kind = KINDS[int(m.geom_type[g])]
                verts = tris = None
                if kind == "mesh":
                    i = int(m.geom_dataid[g])
                    va, fa = int(m.mesh_vertadr[i]), int(m.mesh_faceadr[i])
                    face = m.mesh_face[fa : fa + int(m.mesh_facenum[i])]
                    used, tris = np.unique(face, return_inverse=True)
                    verts = m.mesh_vert[va : va + int(m.mesh_vertnum[i])][used].astype(np.float32)
                    tris = tris.reshape(-1, 3).astype(np.uint32)
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
                if any(s.name == name for s in shapes):  # a named geom called 'geom<id>'
                    name = f"{name}#{g}"
                shapes.append(
                    GeomShape(
                        body=k,
                        geom=g,
                        name=name,
                        kind=kind,
                        size=m.geom_size[g].copy(),
                        pos=m.geom_pos[g].copy(),
                        quat=m.geom_quat[g].copy(),
                        rgba=m.geom_rgba[g].copy(),
                        vertices=verts,
                        triangles=tris,
                    )
                )
        bodies = tuple(
            mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in self._bodies
        )
        return ArmShapes(bodies=bodies, shapes=tuple(shapes))

    def poses(self, q: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """World poses of the geoms of ``shapes.shapes`` at joint angles ``q`` [rad], shape
        (T, J) in ``joint_names`` order; the other coordinates stay at the model's ``qpos0``.

        Returns:
            positions [m], shape (T, G, 3), and orientations (w, x, y, z), shape (T, G, 4).
        """
        geoms = np.array([s.geom for s in self.shapes.shapes], dtype=int)
        T = np.shape(q)[0] if np.ndim(q) == 2 else 0
        pos = np.empty((T, geoms.size, 3))
        quat = np.empty((T, geoms.size, 4))
        for i in self.frames(q):
            pos[i] = self.data.geom_xpos[geoms]
            for k, g in enumerate(geoms):
                mujoco.mju_mat2Quat(quat[i, k], self.data.geom_xmat[g])
        return pos, quat
